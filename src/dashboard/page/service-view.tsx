// The Service view: its endpoints by unit (the layout's group value) and node, and the flows: from each
// unit, which units its nodes may reach, and how many of its nodes may use no endpoint at all.
import type { ServiceAnswer, ServiceEndpoint } from '../../core/dashboard/types.js';
import { fetchService } from './api.js';
import { Drawer } from './drawer.js';
import { useFetch } from './use-fetch.js';

const unitName = (v: string | null): string => v ?? '(none)';

function Endpoint(props: { readonly e: ServiceEndpoint }) {
  const { e } = props;
  const state = e.terminating ? 'terminating' : e.ready ? 'ready' : e.serving ? 'serving' : 'not-ready';
  return (
    <li class={`ep ${state}`} title={`${e.pod ?? 'no pod'}: ${state}`} data-address={e.address}>
      {e.address} <small>{state}</small>
    </li>
  );
}

function Flows(props: { readonly s: ServiceAnswer }) {
  return (
    <ul class="flows">
      {props.s.flows.map((f) => (
        <li key={unitName(f.from)} class={f.none > 0 ? 'flow starved' : 'flow'} data-from={f.from ?? ''}>
          <strong>{unitName(f.from)}</strong> ({f.nodes} node{f.nodes === 1 ? '' : 's'}
          {f.none > 0 && <span class="none">, {f.none} with no endpoint</span>})
          {f.to.length === 0 ? (
            <span class="arrow"> → nothing</span>
          ) : (
            f.to.map((t) => (
              <span key={unitName(t.value)} class="arrow" data-to={t.value ?? ''}>
                {' '}
                → {unitName(t.value)} ({t.nodes} of {f.nodes})
              </span>
            ))
          )}
        </li>
      ))}
    </ul>
  );
}

export function ServiceView(props: {
  readonly service: string;
  readonly group: string;
  readonly refresh: number;
  readonly onClose: () => void;
}) {
  const { service, group } = props;
  const fetched = useFetch<ServiceAnswer>(
    (s) => fetchService(service, group, s),
    [service, group],
    props.refresh,
  );
  const { data } = fetched;
  const starved = new Set(data?.flows.filter((f) => f.none > 0).map((f) => f.from));
  return (
    <Drawer label="service" title={service} onClose={props.onClose} fetched={fetched}>
      {data && (
        <>
          <p class="rule">{data.rule}</p>
          <h3>endpoints by {data.groupKey === '' ? 'node' : data.groupKey}</h3>
          <div class="units">
            {data.units.map((u) => (
              <section
                key={unitName(u.value)}
                class={starved.has(u.value) ? 'unit starved' : 'unit'}
                data-unit={u.value ?? ''}
              >
                <h4>{unitName(u.value)}</h4>
                {u.nodes.map((n) => (
                  <div key={n.node} class="node-box" data-node={n.node}>
                    <span class="node-name">{n.node}</span>
                    <ul>
                      {n.endpoints.map((e, i) => (
                        <Endpoint key={`${i}/${e.address}`} e={e} />
                      ))}
                    </ul>
                  </div>
                ))}
              </section>
            ))}
            {data.unplaced.length > 0 && (
              <section class="unit unplaced" data-unit="">
                <h4>on no known node</h4>
                <ul>
                  {data.unplaced.map((e, i) => (
                    <Endpoint key={`${i}/${e.address}`} e={e} />
                  ))}
                </ul>
              </section>
            )}
          </div>
          <h3>flows</h3>
          <Flows s={data} />
        </>
      )}
    </Drawer>
  );
}
