// The matrix's virtualization arithmetic: which lines and columns a scroll position shows.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Layout } from '../../core/dashboard/types.js';
import { COL_HEADER_H, linesOf, ROW_H, ROW_HEADER_W, span, viewportOf } from './grid-window.js';

function layout(groupKey: string, groups: number[]): Layout {
  const rows = [];
  const gs = [];
  for (const [g, count] of groups.entries()) {
    gs.push({ value: `g${g}`, first: rows.length, count });
    for (let i = 0; i < count; i++)
      rows.push({ node: `n${rows.length}`, group: `g${g}`, ready: true, health: 'unconfigured' as const });
  }
  return {
    version: 1,
    groupKey,
    groupKeys: [],
    namespaces: [],
    rows,
    groups: gs,
    columns: [],
    totalColumns: 0,
    healthConfigured: false,
  };
}

describe('span', () => {
  it('is the items a window intersects, widened by the overscan and clamped', () => {
    assert.deepEqual(span(0, 100, 22, 1000, 0), [0, 4]); // 0..99 px: items 0..4 (88..109 is item 4)
    assert.deepEqual(span(22, 22, 22, 1000, 0), [1, 1]); // exactly one item
    assert.deepEqual(span(21, 2, 22, 1000, 0), [0, 1]); // straddling two
    assert.deepEqual(span(0, 100, 22, 1000, 3), [0, 7]);
    assert.deepEqual(span(22_000, 500, 22, 1000, 3), [997, 999]); // past the end: clamped
    assert.deepEqual(span(0, 100, 22, 0), [0, -1]);
    assert.deepEqual(span(0, 0, 22, 10), [0, -1]);
  });

  it('holds every item the window touches and no more than the overscan besides', () => {
    fc.assert(
      fc.property(
        fc.nat(100_000),
        fc.integer({ min: 1, max: 5000 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 20_000 }),
        fc.nat(5),
        (offset, extent, size, count, overscan) => {
          const [first, last] = span(offset, extent, size, count, overscan);
          const touched = (i: number) => i * size < offset + extent && (i + 1) * size > offset;
          for (let i = 0; i < count; i++) {
            const inside = i >= first && i <= last;
            if (touched(i)) assert.ok(inside, `item ${i} is visible but outside [${first}, ${last}]`);
            if (inside && !touched(i)) {
              const gap =
                i < offset / size
                  ? Math.floor(offset / size) - i
                  : i - Math.floor((offset + extent - 1) / size);
              assert.ok(gap <= overscan, `item ${i} is ${gap} items beyond the window`);
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('linesOf and viewportOf', () => {
  it('puts each group header before its rows, and no header without a key', () => {
    assert.deepEqual(linesOf(layout('unit', [2, 1])), [
      { kind: 'group', group: 0, first: 0 },
      { kind: 'row', row: 0 },
      { kind: 'row', row: 1 },
      { kind: 'group', group: 1, first: 2 },
      { kind: 'row', row: 2 },
    ]);
    assert.deepEqual(linesOf(layout('', [2])), [
      { kind: 'row', row: 0 },
      { kind: 'row', row: 1 },
    ]);
  });

  it('maps the visible lines to the node rows behind them, below and beside the sticky headers', () => {
    const l = layout('unit', [100, 100, 100]);
    const lines = linesOf(l);
    // A window showing exactly lines 101..110 (line 101 is group 1's header) and columns 10..19.
    const vp = viewportOf(lines, 1000, {
      top: 101 * ROW_H,
      left: 10 * 22,
      height: COL_HEADER_H + 10 * ROW_H,
      width: ROW_HEADER_W + 10 * 22,
    });
    assert.deepEqual(vp.lines, [98, 113]);
    assert.deepEqual(vp.cols, [7, 22]);
    // Lines 98..100 are rows 97..99, 101 the header, 102..113 rows 100..111.
    assert.deepEqual(vp.rows, [97, 111]);
    // A group header at the window's bottom edge, overscan and all, brings its group's first row along.
    const edge = viewportOf(lines, 1000, { top: 0, left: 0, height: COL_HEADER_H + 97 * ROW_H, width: 500 });
    assert.deepEqual(edge.lines, [0, 99]);
    assert.deepEqual(edge.rows, [0, 98]);
    const header = viewportOf(lines, 1000, {
      top: 0,
      left: 0,
      height: COL_HEADER_H + 99 * ROW_H,
      width: 500,
    });
    assert.deepEqual(header.lines, [0, 101]);
    assert.deepEqual(header.rows, [0, 100]);
    assert.equal(
      viewportOf(linesOf(layout('unit', [])), 10, { top: 0, left: 0, height: 500, width: 500 }).rows,
      undefined,
    );
  });
});
