// `svcplane dashboard`: the topology dashboard on its own HTTP server, reading any cluster (svcplane or
// not) through a kubeconfig: list and watch only. I/O and flags only; the routes are in dashboard/, the
// decisions in core/topology.
import type { Server } from 'node:http';
import { isIP } from 'node:net';
import { Client } from '../runtime/client.js';
import { jsonLogger } from '../runtime/logger.js';
import { createDashboard, listenDashboard } from '../dashboard/server.js';
import { transportFromFlags, KUBECONFIG_FLAGS, kubeconfigFlagsHelp } from './kubeconfig-flags.js';
import { UsageError, commandFlags, edgeHealthFlag, hostPort, noExtraArgs } from './flags.js';
import { signalled } from './signals.js';

export const DASHBOARD_HELP = `Usage: svcplane dashboard [flags]

A topology dashboard in the browser: every node (rows, grouped by unit or zone) against every Service
(columns), each cell counting the endpoints that node may use, as \`svcplane explain\` decides; a click
shows explain's answer for the pair. It follows the cluster live (watch, then server-sent events to the
page). It reads Nodes, Services, EndpointSlices, Endpoints and, when served, SuperEdge's ServiceGrids
and DeploymentGrids through the kubeconfig, from svcplane or any cluster, and changes nothing.
\`svcplane up\` serves the same page at /dashboard/, behind its authentication. See docs/dashboard.md.

Examples:
  svcplane dashboard --kubeconfig .svcplane/kubeconfig
  svcplane dashboard --bind-address 127.0.0.1:0 --edge-health http://localhost:51005/localinfo

Flags:
  --bind-address HOST:PORT  where to serve (default 127.0.0.1:9090; port 0 picks a free one); the page has
                            no authentication of its own, so bind it elsewhere than loopback knowingly
  --accept-hosts REGEX,...  the hosts a request may name (its Host header without the port, an IPv6
                            address in brackets), comma-separated regular expressions, as \`kubectl proxy
                            --accept-hosts\`: any other gets 403 Forbidden, against DNS rebinding (default
                            ^localhost$,^127\\.0\\.0\\.1$,^\\[::1\\]$); the --bind-address host is always
                            accepted
  --edge-health URL         show node health from edge-health's /localinfo, and drop endpoints on nodes it
                            reports not Normal, as \`svcplane explain --edge-health\` does
${kubeconfigFlagsHelp(26)}
`;

const FLAGS = {
  ...KUBECONFIG_FLAGS,
  'bind-address': { type: 'string' },
  'accept-hosts': { type: 'string' },
  'edge-health': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `kubectl proxy`'s default for --accept-hosts. */
const DEFAULT_ACCEPT_HOSTS = String.raw`^localhost$,^127\.0\.0\.1$,^\[::1\]$`;

/**
 * The hosts `svcplane dashboard` answers: --accept-hosts' regular expressions (comma-separated, each
 * matched against the Host header without its port), or kubectl proxy's default, and the bind address's
 * host always.
 */
export function acceptHosts(flag: string | undefined, bindHost: string): RegExp[] {
  const hosts = (flag ?? DEFAULT_ACCEPT_HOSTS).split(',').map((src) => {
    try {
      return new RegExp(src);
    } catch (err) {
      throw new UsageError(`--accept-hosts: ${JSON.stringify(src)} is not a regular expression`, {
        cause: err,
      });
    }
  });
  // As a browser names it: an IPv6 address in brackets, in its shortest form.
  const bound = new URL(`http://${bindHost.includes(':') ? `[${bindHost}]` : bindHost}/`).hostname;
  return [...hosts, new RegExp(`^${bound.replace(/[.[\]]/g, '\\$&')}$`)];
}

export async function dashboardCommand(args: string[], out: (s: string) => void): Promise<number> {
  const flags = commandFlags(args, FLAGS, DASHBOARD_HELP, out);
  if (flags === undefined) return 0;
  const { values, positionals } = flags;
  noExtraArgs(positionals);
  const at = hostPort('bind-address', (values['bind-address'] as string | undefined) ?? '127.0.0.1:9090');
  if (isIP(at.host) === 0)
    throw new UsageError(`--bind-address: ${JSON.stringify(at.host)} is not an IP address`);
  const hosts = acceptHosts(values['accept-hosts'] as string | undefined, at.host);
  const edgeHealth = edgeHealthFlag(values['edge-health']);
  const transport = transportFromFlags(values, (message, cause) => new UsageError(message, { cause }));
  const log = jsonLogger(undefined, 'dashboard');
  const dashboard = createDashboard({
    client: new Client(transport),
    log,
    base: '',
    edgeHealth,
    acceptHosts: hosts,
  });
  const stop = signalled(log);
  let server: Server | undefined;
  try {
    const started = await Promise.race([dashboard.start().then(() => true), stop.then(() => false)]);
    if (!started) return 0;
    const listening = await listenDashboard(dashboard.listener, at.host, at.port);
    server = listening.server;
    out(`svcplane: dashboard at ${listening.url}`);
    await stop;
    server.close();
    return 0;
  } finally {
    // Ends the event streams, so the server's last connections close.
    await dashboard.stop();
    server?.closeAllConnections();
    transport.close();
  }
}
