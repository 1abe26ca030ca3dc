// The page's requests to its server, all by relative URL (`api/...`), so the page works wherever it is
// mounted: `/` (svcplane dashboard), `/dashboard/` (svcplane up) or behind `kubectl proxy`.
import type { CellsAnswer, ExplainAnswer, Layout, ServiceAnswer } from '../../core/dashboard/types.js';

/** What the header's controls choose. `group` undefined: the server's default key; '': no grouping. */
export interface Filters {
  readonly group: string | undefined;
  readonly namespace: string;
  readonly name: string;
}

function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  return q.toString();
}

async function getJSON<T>(url: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(url, { headers: { accept: 'application/json' }, ...(signal ? { signal } : {}) });
  if (!res.ok) throw new Error(`${url.split('?')[0]}: ${res.status} ${(await res.text()).slice(0, 200)}`);
  return (await res.json()) as T;
}

const filterParams = (f: Filters): Record<string, string | undefined> => ({
  group: f.group,
  namespace: f.namespace === '' ? undefined : f.namespace,
  name: f.name === '' ? undefined : f.name,
});

export const fetchLayout = (f: Filters): Promise<Layout> => getJSON(`api/layout?${query(filterParams(f))}`);

/** The cells of rows a..b × columns c..d (inclusive) of the layout `version` built for `f`. */
export const fetchCells = (
  f: Filters,
  version: number,
  rows: readonly [number, number],
  cols: readonly [number, number],
): Promise<CellsAnswer> =>
  getJSON(
    `api/cells?${query({
      version: String(version),
      ...filterParams(f),
      rows: `${rows[0]}-${rows[1]}`,
      cols: `${cols[0]}-${cols[1]}`,
    })}`,
  );

export const fetchExplain = (node: string, service: string, signal?: AbortSignal): Promise<ExplainAnswer> =>
  getJSON(`api/explain?${query({ node, service })}`, signal);

export const fetchService = (service: string, group: string, signal?: AbortSignal): Promise<ServiceAnswer> =>
  getJSON(`api/service?${query({ service, group })}`, signal);
