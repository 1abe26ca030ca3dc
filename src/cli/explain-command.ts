// `svcplane explain service/NAME --node NODE`: reads the live Service, its EndpointSlices (or its
// Endpoints) and the Nodes through a kubeconfig, from svcplane or any cluster, runs the topology engine
// and prints its decision. I/O only; the deciding and the wording are in core/topology.
import { mustFindResource } from '../api/resources.js';
import type { KObject } from '../api/object.js';
import { LABEL_SERVICE_NAME } from '../core/endpointslices/types.js';
import { decide } from '../core/topology/decide.js';
import { readLocalInfo } from '../runtime/health-poller.js';
import { endpointsFromEndpoints, endpointsFromSlices } from '../core/topology/endpoints.js';
import { explainReport, type EndpointsRead } from '../core/topology/explain-report.js';
import { topologyService } from '../core/topology/rules.js';
import type { Labels } from '../core/topology/types.js';
import { Client, isApiError, type ListOptions } from '../runtime/client.js';
import { firstLine, transportFromFlags, KUBECONFIG_FLAGS, kubeconfigFlagsHelp } from './kubeconfig-flags.js';
import { UsageError, edgeHealthFlag, oneOf, commandFlags, noExtraArgs } from './flags.js';

const SERVICES = mustFindResource('', 'services');
const ENDPOINTS = mustFindResource('', 'endpoints');
const SLICES = mustFindResource('discovery.k8s.io', 'endpointslices');
const NODES = mustFindResource('', 'nodes');

export const EXPLAIN_HELP = `Usage: svcplane explain service/NAME --node NODE [flags]

Explains which endpoints of a Service a client on NODE may use, and why: the topology rule that
decided (spec.topologyKeys, the SuperEdge topologyKeys annotation, openyurt.io/topologyKeys, a Local
traffic policy, or kube-proxy's hints), the key that matched, and every endpoint kept or dropped with
its reason. It reads the live objects through the kubeconfig, from svcplane or from any cluster, and
changes nothing. See docs/topology.md for the rules and their precedence.

Examples:
  svcplane explain service/web --node edge-1
  svcplane explain svc/web -n shop --node edge-2 -o json
  svcplane explain svc/web --node edge-1 --edge-health http://localhost:51005/localinfo

Flags:
  --node NODE              the client's node (required)
  -n, --namespace NS       default: the kubeconfig context's namespace, else "default"
  -o, --output FORMAT      text (default) or json
  --edge-health URL        take node health from edge-health's /localinfo, as a wrapper or proxy with
                           --service-autonomy-enhancement does: endpoints on nodes it reports not
                           Normal are dropped (node-unhealthy)
${kubeconfigFlagsHelp(25)}
`;

const FLAGS = {
  ...KUBECONFIG_FLAGS,
  namespace: { type: 'string', short: 'n' },
  node: { type: 'string' },
  output: { type: 'string', short: 'o' },
  'edge-health': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function serviceName(positionals: string[]): string {
  if (positionals.length === 0)
    throw new UsageError('a Service is required (svcplane explain service/NAME --node NODE)');
  noExtraArgs(positionals, 1);
  const arg = positionals[0]!;
  const m = /^(?:(services?|svc)\/)?([^/]+)$/.exec(arg);
  if (m === null || m[2] === undefined || m[2] === '')
    throw new UsageError(`${JSON.stringify(arg)}: want service/NAME`);
  return m[2];
}

/** Every object of a list, following `continue` tokens. */
async function listAll(
  client: Client,
  r: Parameters<Client['list']>[0],
  opts: ListOptions,
): Promise<KObject[]> {
  const items: KObject[] = [];
  let cont: string | undefined;
  do {
    const page = await client.list(r, {
      ...opts,
      limit: 500,
      ...(cont !== undefined ? { continue: cont } : {}),
    });
    items.push(...page.items);
    cont = page.metadata?.continue || undefined;
  } while (cont !== undefined);
  return items;
}

export async function explainCommand(args: string[], out: (s: string) => void): Promise<number> {
  const flags = commandFlags(args, FLAGS, EXPLAIN_HELP, out);
  if (flags === undefined) return 0;
  const { values, positionals } = flags;
  const name = serviceName(positionals);
  const node = values['node'];
  if (typeof node !== 'string' || node === '')
    throw new UsageError('--node is required: the client node to explain for');
  const output = oneOf('output', values['output'], ['text', 'json'] as const, 'text');
  const nsFlag = values['namespace'];
  if (nsFlag === '') throw new UsageError('--namespace: must not be empty');
  const edgeHealth = edgeHealthFlag(values['edge-health']);
  const transport = transportFromFlags(values, (message, cause) => new Error(message, { cause }));
  const namespace = typeof nsFlag === 'string' ? nsFlag : (transport.namespace ?? 'default');
  const client = new Client(transport);
  try {
    const svc = await client.get(SERVICES, namespace, name);
    const [slices, nodes] = await Promise.all([
      (async () =>
        (await client.serves(SLICES))
          ? listAll(client, SLICES, { namespace, labelSelector: `${LABEL_SERVICE_NAME}=${name}` })
          : [])(),
      listAll(client, NODES, {}),
    ]);
    let endpoints = endpointsFromSlices(slices);
    let read: EndpointsRead = { kind: 'slices', objects: slices };
    if (slices.length === 0) {
      try {
        const object = await client.get(ENDPOINTS, namespace, name);
        endpoints = endpointsFromEndpoints(object);
        read = { kind: 'endpoints', object };
      } catch (err) {
        if (!isApiError(err, 404)) throw err;
        read = { kind: 'none' };
      }
    }
    const labels = new Map<string, Labels>(
      nodes.map((n) => [n.metadata.name ?? '', n.metadata.labels ?? {}]),
    );
    const health =
      typeof edgeHealth === 'string'
        ? await readLocalInfo(edgeHealth, { timeoutMs: 5_000 }).catch((err: unknown) => {
            throw new Error(`--edge-health ${edgeHealth}: ${(err as Error).message}`, { cause: err });
          })
        : undefined;
    const decision = decide({
      service: topologyService(svc),
      endpoints,
      nodeLabels: (n) => labels.get(n),
      node,
      ...(health === undefined ? {} : { health: (n: string) => health.get(n) }),
    });
    const report = explainReport({
      decision,
      nodeLabels: labels.get(node),
      read,
      ...(health === undefined ? {} : { health }),
      nodes: nodes.length,
    });
    out(output === 'json' ? JSON.stringify(report.json, null, 2) : report.text);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new Error(firstLine(err), { cause: err });
  } finally {
    transport.close();
  }
}
