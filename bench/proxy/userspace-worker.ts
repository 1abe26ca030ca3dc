// P8a's userspace proxy in a process of its own, given a hand-built ProxyState of one Service port.
import type { ProxyEndpoint, ServicePortState } from '../../src/core/proxy/types.js';
import { UserspaceProxy } from '../../src/proxy/userspace.js';
import { serveWorker } from '../lib/process.js';
import { quietLog, compareEndpoints } from './shape.js';
import { freePort } from './programs.js';
import { type Target } from './echo-backends.js';

export type UserspaceRequest =
  | { op: 'start'; backends: Target[]; cidr: string; clusterIP: string; listenHost: string }
  | { op: 'stats' }
  | { op: 'stop' };

/** UserspaceProxy in a process of its own, given a hand-built state of one Service port. */
export function userspaceMain(): void {
  let proxy: UserspaceProxy | undefined;
  serveWorker<UserspaceRequest>(async (msg) => {
    switch (msg.op) {
      case 'start': {
        proxy = new UserspaceProxy({ cidr: msg.cidr, nodePortAddresses: [], log: quietLog });
        const port = await freePort(msg.listenHost);
        const internal = msg.backends
          .map((b): ProxyEndpoint => ({ ip: b.host, port: b.port, local: false, ready: true }))
          .sort(compareEndpoints);
        const st: ServicePortState = {
          key: 'bench/echo:http',
          namespace: 'bench',
          name: 'echo',
          portName: 'http',
          protocol: 'TCP',
          clusterIPs: [msg.clusterIP],
          port,
          externalIPs: [],
          loadBalancerIPs: [],
          internal,
          external: internal,
          externalLocal: false,
          internalLocal: false,
        };
        const r = await proxy.apply(new Map([[st.key, st]]));
        if (r.opened !== 1 || r.failed.length > 0) throw new Error(`userspace apply: ${JSON.stringify(r)}`);
        const l = proxy.addresses(st.key)[0]!;
        return { pid: process.pid, host: l.address, port: l.port };
      }
      case 'stats':
        return proxy?.stats() ?? null;
      case 'stop':
        await proxy?.close();
        return null;
    }
  });
}
