// The matrix: nodes (rows, in groups) against Services (columns), virtualized both ways (grid-window.ts).
// Only the cells of the viewport are elements; each carries data-node, data-service, data-kept,
// data-total and data-state, and the matrix's data-generation counts the cells answers applied.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Cell, GroupSummary, Layout, LayoutRow } from '../../core/dashboard/types.js';
import { CELL_W, COL_HEADER_H, ROW_H, ROW_HEADER_W } from './grid-window.js';
import type { Line, Viewport } from './grid-window.js';

/** Where the page keeps the cells and group summaries it was sent, by node (or group) and Service key. */
export const cellKey = (node: string, service: string): string => `${node}\u0000${service}`;
export const summaryKey = (group: string | null, service: string): string =>
  `${group === null ? '\u0001' : group}\u0000${service}`;

/** Preact sets a number as a style value as is: lengths need their unit. */
const px = (n: number): string => `${n}px`;

export interface Scroll {
  readonly top: number;
  readonly left: number;
  readonly width: number;
  readonly height: number;
}

const HEALTH_TEXT = {
  healthy: 'healthy',
  unhealthy: 'unhealthy',
  unknown: 'health unknown',
  unconfigured: '',
};

function RowHeader(props: { readonly row: LayoutRow; readonly health: boolean; readonly top: number }) {
  const { row } = props;
  return (
    <div class="row-header" style={{ top: px(props.top) }} data-row-node={row.node} title={row.node}>
      {props.health && <span class={`dot ${row.health}`} title={HEALTH_TEXT[row.health]} />}
      <span class="node-name">{row.node}</span>
      {!row.ready && (
        <span class="not-ready" title="NotReady">
          not ready
        </span>
      )}
    </div>
  );
}

function Summary(props: {
  readonly s: GroupSummary | undefined;
  readonly group: string | null;
  readonly service: string;
  readonly left: number;
  readonly top: number;
}) {
  const { s } = props;
  const style = { left: px(props.left), top: px(props.top) };
  const where = { 'data-group': props.group ?? '', 'data-service': props.service };
  if (!s) return <div class="summary pending" style={style} {...where} />;
  const n = s.all + s.some + s.refused + s.dropped || 1;
  const title = `all ${s.all} · some ${s.some} · refused ${s.refused} · dropped ${s.dropped}`;
  return (
    <div
      class="summary"
      {...where}
      style={style}
      title={title}
      data-summary={`${s.all}/${s.some}/${s.refused}/${s.dropped}`}
    >
      {(['all', 'some', 'refused', 'dropped'] as const).map((k) =>
        s[k] > 0 ? <span key={k} class={`s-${k}`} style={{ height: `${(100 * s[k]) / n}%` }} /> : null,
      )}
    </div>
  );
}

function CellView(props: {
  readonly node: string;
  readonly service: string;
  readonly cell: Cell | undefined;
  readonly selected: boolean;
  readonly left: number;
  readonly top: number;
}) {
  const { cell } = props;
  const style = { left: px(props.left), top: px(props.top) };
  if (!cell) {
    return (
      <div
        class="cell pending"
        style={style}
        data-node={props.node}
        data-service={props.service}
        data-state="pending"
      />
    );
  }
  return (
    <div
      class={`cell s-${cell.state}${props.selected ? ' selected' : ''}`}
      style={style}
      data-node={props.node}
      data-service={props.service}
      data-kept={cell.kept}
      data-total={cell.total}
      data-state={cell.state}
    >
      {cell.kept}
    </div>
  );
}

/** A hovered cell's state and counts, read from its data attributes. */
function Tooltip(props: { readonly host: { readonly current: HTMLElement | null } }) {
  const [tip, setTip] = useState<{ text: string; x: number; y: number } | null>(null);
  useEffect(() => {
    const host = props.host.current;
    if (!host) return undefined;
    const over = (e: MouseEvent) => {
      const el = (e.target as HTMLElement).closest<HTMLElement>('.cell');
      const d = el?.dataset;
      if (!el || !d || d['state'] === 'pending') return setTip(null);
      const r = el.getBoundingClientRect();
      setTip({
        text: `${d['node']} → ${d['service']}: ${d['state']}, ${d['kept']} of ${d['total']} endpoints`,
        x: r.right + 4,
        y: r.bottom + 4,
      });
    };
    const out = () => setTip(null);
    host.addEventListener('mouseover', over);
    host.addEventListener('mouseleave', out);
    host.addEventListener('scroll', out);
    return () => {
      host.removeEventListener('mouseover', over);
      host.removeEventListener('mouseleave', out);
      host.removeEventListener('scroll', out);
    };
  }, [props.host]);
  if (!tip) return null;
  return (
    <div class="tooltip" role="tooltip" style={{ left: px(tip.x), top: px(tip.y) }}>
      {tip.text}
    </div>
  );
}

export function Matrix(props: {
  readonly layout: Layout;
  readonly lines: readonly Line[];
  readonly viewport: Viewport;
  readonly cells: ReadonlyMap<string, Cell>;
  readonly summaries: ReadonlyMap<string, GroupSummary>;
  readonly generation: number;
  /** The cellKey of the cell the explain panel shows. */
  readonly selected: string | undefined;
  readonly onScroll: (s: Scroll) => void;
  readonly onCell: (node: string, service: string) => void;
  readonly onColumn: (service: string) => void;
}) {
  const { layout, lines, viewport, cells, summaries, onScroll } = props;
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el) return undefined;
    const report = () =>
      onScroll({ top: el.scrollTop, left: el.scrollLeft, width: el.clientWidth, height: el.clientHeight });
    report();
    const ro = new ResizeObserver(report);
    ro.observe(el);
    el.addEventListener('scroll', report, { passive: true });
    return () => {
      ro.disconnect();
      el.removeEventListener('scroll', report);
    };
  }, [onScroll]);

  const width = ROW_HEADER_W + layout.columns.length * CELL_W;
  const height = lines.length * ROW_H;
  const [c0, c1] = viewport.cols;
  const [l0, l1] = viewport.lines;
  const headers = [];
  for (let c = c0; c <= c1; c++) {
    const col = layout.columns[c];
    if (!col) continue;
    headers.push(
      <button
        key={col.key}
        type="button"
        class="col-header"
        style={{ left: px(ROW_HEADER_W + c * CELL_W) }}
        data-service={col.key}
        title={`${col.key} (${col.rule}${col.grid ? `, grid ${col.grid}` : ''})`}
        onClick={() => props.onColumn(col.key)}
      >
        <span>{col.name}</span>
      </button>,
    );
  }
  const rowHeaders = [];
  const body = [];
  for (let i = l0; i <= l1; i++) {
    const line = lines[i];
    if (!line) continue;
    const top = i * ROW_H;
    if (line.kind === 'group') {
      const g = layout.groups[line.group];
      if (!g) continue;
      rowHeaders.push(
        <div key={`g${line.group}`} class="group-header" style={{ top: px(top) }} data-group={g.value ?? ''}>
          {layout.groupKey}={g.value ?? '(none)'} <span class="group-count">{g.count}</span>
        </div>,
      );
      for (let c = c0; c <= c1; c++) {
        const col = layout.columns[c];
        if (!col) continue;
        body.push(
          <Summary
            key={`g${line.group}:${col.key}`}
            s={summaries.get(summaryKey(g.value, col.key))}
            group={g.value}
            service={col.key}
            left={ROW_HEADER_W + c * CELL_W}
            top={top}
          />,
        );
      }
      continue;
    }
    const row = layout.rows[line.row];
    if (!row) continue;
    rowHeaders.push(<RowHeader key={`r${row.node}`} row={row} health={layout.healthConfigured} top={top} />);
    for (let c = c0; c <= c1; c++) {
      const col = layout.columns[c];
      if (!col) continue;
      body.push(
        <CellView
          key={`${row.node}:${col.key}`}
          node={row.node}
          service={col.key}
          cell={cells.get(cellKey(row.node, col.key))}
          selected={props.selected === cellKey(row.node, col.key)}
          left={ROW_HEADER_W + c * CELL_W}
          top={top}
        />,
      );
    }
  }
  const click = (e: MouseEvent) => {
    const d = (e.target as HTMLElement).closest<HTMLElement>('.cell')?.dataset;
    if (d?.['node'] !== undefined && d['service'] !== undefined) props.onCell(d['node'], d['service']);
  };
  return (
    <div class="matrix" ref={host} aria-label="topology matrix" data-generation={props.generation}>
      <div class="col-headers" style={{ width: px(width), height: px(COL_HEADER_H) }}>
        <div class="corner" style={{ width: px(ROW_HEADER_W) }}>
          {lines.length === 0 || layout.columns.length === 0 ? 'nothing to show' : 'nodes \\ Services'}
        </div>
        {headers}
      </div>
      <div class="body" style={{ width: px(width), height: px(height) }} onClick={click}>
        <div class="row-headers" style={{ width: px(ROW_HEADER_W), height: px(height) }}>
          {rowHeaders}
        </div>
        {body}
      </div>
      <Tooltip host={host} />
    </div>
  );
}
