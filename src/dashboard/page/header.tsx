// The page's header: the namespace, name and group-by controls, the legend and the live indicator.
import { useEffect, useState } from 'preact/hooks';
import type { Layout } from '../../core/dashboard/types.js';
import type { Filters } from './api.js';

export type Live = 'connecting' | 'live' | 'reconnecting';

const LIVE_TEXT: Record<Live, string> = {
  connecting: 'connecting…',
  live: 'live',
  reconnecting: 'reconnecting…',
};
const LEGEND = [
  ['all', 'all endpoints'],
  ['some', 'some'],
  ['refused', 'none: refused'],
  ['dropped', 'none: dropped'],
] as const;

/** How long the name filter waits for typing to pause before it asks for a new layout. */
const NAME_DEBOUNCE_MS = 200;

export function Header(props: {
  readonly layout: Layout | null;
  readonly filters: Filters;
  readonly live: Live;
  readonly onFilters: (f: Filters) => void;
}) {
  const { layout, filters, onFilters } = props;
  const [name, setName] = useState(filters.name);
  useEffect(() => {
    if (name === filters.name) return undefined;
    const t = setTimeout(() => onFilters({ ...filters, name }), NAME_DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [name, filters, onFilters]);

  const groupKey = filters.group ?? layout?.groupKey ?? '';
  const keys = layout?.groupKeys ?? [];
  const namespaces = layout?.namespaces ?? [];
  return (
    <header class="top">
      <h1>svcplane topology</h1>
      <label>
        Namespace
        <select
          aria-label="Namespace"
          value={filters.namespace}
          onChange={(e) => onFilters({ ...filters, namespace: e.currentTarget.value })}
        >
          <option value="">all namespaces</option>
          {namespaces.map((ns) => (
            <option key={ns} value={ns}>
              {ns}
            </option>
          ))}
        </select>
      </label>
      <label>
        Name
        <input
          type="search"
          aria-label="Name"
          placeholder="filter Services by name"
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
      </label>
      <label>
        Group by
        <select
          aria-label="Group by"
          value={groupKey}
          onChange={(e) => onFilters({ ...filters, group: e.currentTarget.value })}
        >
          <option value="">none</option>
          {(groupKey === '' || keys.includes(groupKey) ? keys : [groupKey, ...keys]).map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </label>
      <ul class="legend" aria-label="legend">
        {LEGEND.map(([state, text]) => (
          <li key={state}>
            <span class={`swatch s-${state}`} />
            {text}
          </li>
        ))}
      </ul>
      {layout && (
        <span class="counts">
          {layout.rows.length} nodes × {layout.columns.length}
          {layout.columns.length === layout.totalColumns ? '' : ` of ${layout.totalColumns}`} Services
        </span>
      )}
      <span class={`live ${props.live}`} role="status" aria-label="live updates" data-live={props.live}>
        {LIVE_TEXT[props.live]}
      </span>
    </header>
  );
}
