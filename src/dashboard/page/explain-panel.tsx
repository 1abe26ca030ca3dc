// The explain panel: what `svcplane explain` says for one node and Service, as the server's engine
// decided it: the rule, the key that matched, each endpoint kept or dropped with why, and the text.
import type { ExplainAnswer } from '../../core/dashboard/types.js';
import type { TopologyDecision, TrafficDecision } from '../../core/topology/types.js';
import { fetchExplain } from './api.js';
import { Drawer } from './drawer.js';
import { useFetch } from './use-fetch.js';

function Decision(props: { readonly title: string; readonly d: TrafficDecision }) {
  const { d } = props;
  const matched = d.pools.filter((p) => p.matchedKey !== undefined);
  return (
    <section class="decision">
      <h3>{props.title}</h3>
      <dl>
        <dt>rule</dt>
        <dd data-rule={d.rule.kind}>
          {d.rule.kind} ({d.rule.source}){d.rule.keys.length > 0 && `: ${d.rule.keys.join(', ')}`}
        </dd>
        <dt>matched key</dt>
        <dd data-matched={matched.map((p) => p.matchedKey).join(',')}>
          {matched.length === 0
            ? '—'
            : matched.map((p) => `${p.matchedKey}${p.matchedValue ? `=${p.matchedValue}` : ''}`).join(', ')}
        </dd>
      </dl>
      <table class="verdicts">
        <thead>
          <tr>
            <th>endpoint</th>
            <th>node</th>
            <th>verdict</th>
            <th>reason</th>
          </tr>
        </thead>
        <tbody>
          {d.verdicts.map((v) => (
            <tr key={v.endpoint.id} class={v.kept ? 'kept' : 'dropped'} data-endpoint={v.endpoint.id}>
              <td>{v.endpoint.addresses.join(', ')}</td>
              <td>{v.endpoint.nodeName ?? '—'}</td>
              <td>{v.kept ? 'kept' : 'dropped'}</td>
              <td>
                {v.reason}
                {v.detail ? ` (${v.detail})` : ''}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The decision in `json` when it has the shape `explain -o json` prints; null otherwise. */
function decisionOf(json: unknown): TopologyDecision | null {
  const d = json as Partial<TopologyDecision> | null;
  return d &&
    typeof d === 'object' &&
    d.internal &&
    Array.isArray(d.internal.verdicts) &&
    Array.isArray(d.problems)
    ? (d as TopologyDecision)
    : null;
}

export function ExplainPanel(props: {
  readonly node: string;
  readonly service: string;
  readonly refresh: number;
  readonly onClose: () => void;
}) {
  const { node, service } = props;
  const fetched = useFetch<ExplainAnswer>(
    (s) => fetchExplain(node, service, s),
    [node, service],
    props.refresh,
  );
  const { data } = fetched;
  const d = data && decisionOf(data.json);
  return (
    <Drawer label="explain" title={`${node} → ${service}`} onClose={props.onClose} fetched={fetched}>
      {data && (
        <>
          <p class={`verdict s-${data.cell.state}`} data-state={data.cell.state}>
            {data.cell.state}: {data.cell.kept} of {data.cell.total} endpoints usable
          </p>
          {d && <Decision title="internal traffic" d={d.internal} />}
          {d?.external && <Decision title="external traffic" d={d.external} />}
          {d && d.problems.length > 0 && (
            <ul class="problems" aria-label="problems">
              {d.problems.map((p) => (
                <li key={p.message}>
                  {p.reason}: {p.message}
                </li>
              ))}
            </ul>
          )}
          <pre class="explain-text">{data.text}</pre>
        </>
      )}
    </Drawer>
  );
}
