// The matrix's virtualization, as arithmetic: every row (a node or a group's header line) is ROW_H pixels
// high and every column CELL_W wide, so the lines and columns on screen follow from the scroll offsets
// alone, with no measuring. The scroll area has the full size (lines × ROW_H by columns × CELL_W, plus the
// sticky headers); only the lines and columns that intersect the viewport, plus OVERSCAN on each side,
// are in the DOM. At 1,000 nodes × 10,000 Services in a 1280 × 800 window that is about 40 × 55 cells.
import type { Layout } from '../../core/dashboard/types.js';

export const CELL_W = 22;
export const ROW_H = 22;
/** The sticky column of node names, and the sticky band of Service names above the cells. */
export const ROW_HEADER_W = 220;
export const COL_HEADER_H = 120;
export const OVERSCAN = 3;

/**
 * One line of the matrix: a group's header (when grouping; `first` is its first row) or a node's row
 * (an index into layout.rows).
 */
export type Line =
  | { readonly kind: 'group'; readonly group: number; readonly first: number }
  | { readonly kind: 'row'; readonly row: number };

/** The matrix's lines top to bottom: each group's header line, then its rows; only rows without grouping. */
export function linesOf(layout: Layout): Line[] {
  const lines: Line[] = [];
  if (layout.groupKey === '') {
    for (let r = 0; r < layout.rows.length; r++) lines.push({ kind: 'row', row: r });
    return lines;
  }
  layout.groups.forEach((g, group) => {
    lines.push({ kind: 'group', group, first: g.first });
    for (let r = g.first; r < g.first + g.count; r++) lines.push({ kind: 'row', row: r });
  });
  return lines;
}

/**
 * The inclusive index range of equal-`size` items among `count` that intersect [offset, offset + extent),
 * widened by `overscan` on both sides and clamped; `last < first` when there are none.
 */
export function span(
  offset: number,
  extent: number,
  size: number,
  count: number,
  overscan = OVERSCAN,
): [number, number] {
  if (count === 0 || extent <= 0) return [0, -1];
  const first = Math.max(0, Math.floor(offset / size) - overscan);
  const last = Math.min(count - 1, Math.floor((offset + extent - 1) / size) + overscan);
  return [first, last];
}

/** What of the matrix a scroll position shows: line and column ranges, and the node rows among the lines. */
export interface Viewport {
  readonly lines: readonly [number, number];
  readonly cols: readonly [number, number];
  /**
   * The range of layout.rows behind the visible lines (a group header counts as its first row, so the
   * cells answer summarises its group); undefined when there is none.
   */
  readonly rows: readonly [number, number] | undefined;
}

export function viewportOf(
  lines: readonly Line[],
  columns: number,
  scroll: { readonly top: number; readonly left: number; readonly width: number; readonly height: number },
): Viewport {
  // Cells start below the column headers and right of the row headers, which stay in place (sticky).
  const l = span(scroll.top, scroll.height - COL_HEADER_H, ROW_H, lines.length);
  const c = span(scroll.left, scroll.width - ROW_HEADER_W, CELL_W, columns);
  let rows: [number, number] | undefined;
  for (let i = l[0]; i <= l[1]; i++) {
    const line = lines[i];
    if (!line) continue;
    const row = line.kind === 'row' ? line.row : line.first;
    rows = rows ? [rows[0], row] : [row, row];
  }
  return { lines: l, cols: c, rows };
}
