// The node agents as P4 and the memory step run them: `svcplane wrapper` for one node, and
// `svcplane proxy` pointed at it with --min-sync-period 0s and a 1 h --sync-period (no periodic resync
// during a measurement), its metrics and health servers on free loopback ports.
import { startSvcplane, type Proc, type StartOptions, type SvcplaneRuntime } from '../lib/cluster.js';

/** The wrapper for `node` over the API server of `kubeconfig`; ready[2] is the kubeconfig it serves. */
export const startNodeWrapper = (
  runtime: SvcplaneRuntime,
  kubeconfig: string,
  node: string,
  dataDir: string,
  netns: string,
): Promise<Proc> =>
  startSvcplane(
    'wrapper',
    runtime,
    [
      'wrapper',
      '--kubeconfig',
      kubeconfig,
      '--hostname',
      node,
      '--bind-address',
      '127.0.0.1:0',
      '--data-dir',
      dataDir,
    ],
    /serving node \S+ at (https:\/\/\S+?); kubeconfig: (\S+)/,
    { netns, timeoutMs: 600_000 },
  );

/** The proxy for `node` in `mode`; resolves once its first full sync is done (ready[1]: its service ports). */
export const startNodeProxy = (
  runtime: SvcplaneRuntime,
  p: { kubeconfig: string; node: string; mode: 'nftables' | 'iptables' },
  opts: StartOptions,
): Promise<Proc> =>
  startSvcplane(
    'proxy',
    runtime,
    [
      'proxy',
      '--kubeconfig',
      p.kubeconfig,
      '--hostname-override',
      p.node,
      '--proxy-mode',
      p.mode,
      '--min-sync-period',
      '0s',
      '--sync-period',
      '1h',
      '--metrics-bind-address',
      '127.0.0.1:0',
      '--healthz-bind-address',
      '127.0.0.1:0',
    ],
    new RegExp(`proxy for \\S+ \\(${p.mode}\\) in sync: (\\d+) service ports`),
    opts,
  );
