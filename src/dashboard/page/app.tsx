// The dashboard page: the header, the matrix and the side panels, fed by the server's routes and kept live
// by its server-sent events. It draws what the server decided; it never decides a topology rule itself.
//
// Data flow: `api/layout` (on start, when a filter changes, after a `change` event naming nodes, and when
// a cells answer says the layout is stale) gives the rows and columns; `api/cells` gives the viewport's
// cells (50 ms after scrolling stops, and after every `change` event). Cells are kept by node and Service,
// not by index, so a new layout shows what is known until its own cells arrive.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Cell, ChangeEvent, GroupSummary, Layout } from '../../core/dashboard/types.js';
import { fetchCells, fetchLayout } from './api.js';
import type { Filters } from './api.js';
import { ExplainPanel } from './explain-panel.js';
import { linesOf, viewportOf } from './grid-window.js';
import { Header } from './header.js';
import type { Live } from './header.js';
import { cellKey, Matrix, summaryKey } from './matrix.js';
import type { Scroll } from './matrix.js';
import { ServiceView } from './service-view.js';

const SCROLL_DEBOUNCE_MS = 50;
/** Past this many remembered cells the cache starts over (a long scroll through a huge matrix). */
const CACHE_LIMIT = 200_000;

type Panel =
  | { readonly kind: 'explain'; readonly node: string; readonly service: string }
  | { readonly kind: 'service'; readonly service: string };

/** Marks the first painted matrix for tests and benchmarks: `<html data-matrix="painted">` and a mark. */
function markPainted(): void {
  if (document.documentElement.dataset['matrix'] === 'painted') return;
  document.documentElement.dataset['matrix'] = 'painted';
  performance.mark('matrix-painted');
}

export function App() {
  const [filters, setFilters] = useState<Filters>({ group: undefined, namespace: '', name: '' });
  const [layout, setLayout] = useState<Layout | null>(null);
  const [scroll, setScroll] = useState<Scroll>({ top: 0, left: 0, width: 0, height: 0 });
  const [generation, setGeneration] = useState(0);
  const [live, setLive] = useState<Live>('connecting');
  const [error, setError] = useState<string | null>(null);
  const [panel, setPanel] = useState<Panel | null>(null);
  const [changes, setChanges] = useState(0);

  // What the asynchronous callbacks read: the latest state, not the one they closed over.
  const now = useRef({ filters, layout, scroll });
  now.current = { filters, layout, scroll };
  const cells = useRef(new Map<string, Cell>());
  const summaries = useRef(new Map<string, GroupSummary>());
  const seq = useRef({ layout: 0, cells: 0, appliedCells: 0 });
  // The filters each layout was fetched with: its cells must be asked with the same ones, even when the
  // controls have moved on and the next layout is still on its way (the indices are that layout's).
  const filtersOf = useRef(new WeakMap<Layout, Filters>());

  const lines = useMemo(() => (layout ? linesOf(layout) : []), [layout]);
  const viewport = useMemo(
    () => viewportOf(lines, layout?.columns.length ?? 0, scroll),
    [lines, layout, scroll],
  );

  // The layout and scroll position the last cells request was for: a new layout loads its cells itself,
  // so the scroll effect below must not ask for the same viewport again.
  const asked = useRef<{ layout: Layout | null; scroll: typeof scroll }>({ layout: null, scroll });

  const loadCells = useCallback(async (l: Layout): Promise<void> => {
    const s = now.current.scroll;
    const f = filtersOf.current.get(l);
    if (s.width === 0 || !f) return; // the matrix is not measured yet: its first measure asks again
    asked.current = { layout: l, scroll: s };
    const vp = viewportOf(linesOf(l), l.columns.length, s);
    if (vp.rows === undefined || vp.cols[1] < vp.cols[0]) {
      setGeneration((g) => g + 1);
      return;
    }
    const mine = ++seq.current.cells;
    let answer;
    try {
      answer = await fetchCells({ ...f, group: l.groupKey }, l.version, vp.rows, vp.cols);
    } catch (err) {
      setError(String(err));
      return;
    }
    if (mine < seq.current.appliedCells) return; // a newer answer is already shown
    if (answer.stale) {
      void loadLayout();
      return;
    }
    seq.current.appliedCells = mine;
    if (cells.current.size > CACHE_LIMIT) cells.current.clear();
    const [r0] = answer.rows;
    const [c0] = answer.cols;
    answer.cells.forEach((line, r) => {
      const node = l.rows[r0 + r]?.node;
      if (node === undefined) return;
      line.forEach((cell, c) => {
        const col = l.columns[c0 + c];
        if (col) cells.current.set(cellKey(node, col.key), cell);
      });
    });
    for (const g of answer.groups) {
      g.summary.forEach((s, c) => {
        const col = l.columns[c0 + c];
        if (col) summaries.current.set(summaryKey(g.value, col.key), s);
      });
    }
    setError(null);
    setGeneration((g) => g + 1);
  }, []);

  const loadLayout = useCallback(async (): Promise<void> => {
    const mine = ++seq.current.layout;
    const f = now.current.filters;
    let l: Layout;
    try {
      l = await fetchLayout(f);
    } catch (err) {
      setError(String(err));
      return;
    }
    if (mine !== seq.current.layout) return; // a newer request is on its way
    filtersOf.current.set(l, f);
    // Group values repeat across keys (a zone and a unit may both be `a`): summaries start over.
    if (now.current.layout?.groupKey !== l.groupKey) summaries.current.clear();
    now.current = { ...now.current, layout: l };
    setLayout(l);
    void loadCells(l);
  }, [loadCells]);

  // A new layout whenever the filters change (and on start).
  useEffect(() => {
    void loadLayout();
  }, [filters, loadLayout]);

  // The viewport's cells, 50 ms after the scroll position (or the window's size) settles; at once when
  // the matrix is first measured (the first paint waits for nothing).
  const measured = useRef(false);
  useEffect(() => {
    if (!layout || scroll.width === 0) return undefined;
    if (asked.current.layout === layout && asked.current.scroll === scroll) return undefined;
    if (!measured.current) {
      measured.current = true;
      void loadCells(layout);
      return undefined;
    }
    const t = setTimeout(() => void loadCells(layout), SCROLL_DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [scroll, layout, loadCells]);

  // Live: every change refreshes the viewport's cells; one naming nodes may regroup rows, so it reloads
  // the layout first (a Service that came or went changes the layout's version: cells answers `stale`).
  useEffect(() => {
    const es = new EventSource('api/events');
    let lost = false;
    es.onopen = () => {
      setLive('live');
      if (lost) void loadLayout(); // events were missed while the stream was down
      lost = false;
    };
    es.onerror = () => {
      lost = true;
      setLive('reconnecting');
    };
    es.addEventListener('change', (e: MessageEvent<string>) => {
      const ev = JSON.parse(e.data) as ChangeEvent;
      const l = now.current.layout;
      if (ev.nodes.length > 0 || !l) void loadLayout();
      else void loadCells(l);
      setChanges((n) => n + 1);
    });
    return () => es.close();
  }, [loadLayout, loadCells]);

  useEffect(() => {
    if (generation > 0) markPainted();
  }, [generation]);

  useEffect(() => {
    const key = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setPanel(null);
    };
    document.addEventListener('keydown', key);
    return () => document.removeEventListener('keydown', key);
  }, []);

  const onCell = useCallback(
    (node: string, service: string) => setPanel({ kind: 'explain', node, service }),
    [],
  );
  const onColumn = useCallback((service: string) => setPanel({ kind: 'service', service }), []);
  const close = useCallback(() => setPanel(null), []);

  return (
    <div class="page">
      <Header layout={layout} filters={filters} live={live} onFilters={setFilters} />
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <main class="content">
        {layout ? (
          <Matrix
            layout={layout}
            lines={lines}
            viewport={viewport}
            cells={cells.current}
            summaries={summaries.current}
            generation={generation}
            selected={panel?.kind === 'explain' ? cellKey(panel.node, panel.service) : undefined}
            onScroll={setScroll}
            onCell={onCell}
            onColumn={onColumn}
          />
        ) : (
          <p class="loading">loading…</p>
        )}
        {panel?.kind === 'explain' && (
          <ExplainPanel node={panel.node} service={panel.service} refresh={changes} onClose={close} />
        )}
        {panel?.kind === 'service' && (
          <ServiceView
            service={panel.service}
            group={layout?.groupKey ?? ''}
            refresh={changes}
            onClose={close}
          />
        )}
      </main>
    </div>
  );
}
