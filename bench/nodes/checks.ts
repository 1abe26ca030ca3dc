// The checks, a LIST each: every node Ready with a Lease renewed within its duration; every pod Running
// and Ready on one of the nodes, with an IP inside that node's podCIDR and no IP twice; the pods spread over
// the nodes; and the watcher saw every pod bound exactly once and none deleted. Any problem fails the run.
import type https from 'node:https';
import type { Conn } from '../lib/http.js';
import type { BenchContext } from '../run.js';
import { histogram } from './bindings.js';
import { inCidr } from './cidr.js';
import { getJson } from './api-metrics.js';
import { BENCH_LABEL, MAX_PODS, NAMESPACE, NODE_PREFIX, type Sizes } from './shape.js';
import type { WatcherReport } from './watcher.js';

export interface CheckInputs {
  readonly ctx: BenchContext;
  readonly z: Sizes;
  readonly agent: https.Agent;
  readonly conn: Conn;
  /** What the watcher saw of the rollout. */
  readonly rep: WatcherReport;
  /** Pods the Deployments ask for. */
  readonly total: number;
}

export async function checkCluster(inputs: CheckInputs) {
  const { ctx, z, agent, conn, rep, total } = inputs;
  const problems: string[] = [];
  const nodeList = await getJson<{
    items: Array<{
      metadata: { name: string };
      spec: { podCIDRs?: string[]; podCIDR?: string };
      status?: { conditions?: Array<{ type: string; status: string }> };
    }>;
  }>(agent, conn, '/api/v1/nodes');
  const nodes = nodeList.items.filter((n) => n.metadata.name.startsWith(`${NODE_PREFIX}-`));
  if (nodes.length !== z.nodes) problems.push(`${nodes.length} nodes, want ${z.nodes}`);
  const cidrOf = new Map(nodes.map((n) => [n.metadata.name, n.spec.podCIDRs ?? [n.spec.podCIDR ?? '']]));
  const notReadyNodes = nodes.filter(
    (n) => !(n.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
  );
  if (notReadyNodes.length > 0)
    problems.push(`${notReadyNodes.length} nodes not Ready, e.g. ${notReadyNodes[0]!.metadata.name}`);
  const leases = await getJson<{
    items: Array<{
      metadata: { name: string };
      spec: { renewTime?: string; leaseDurationSeconds?: number };
    }>;
  }>(agent, conn, '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases');
  const now = Date.now();
  let oldestLeaseS = 0;
  let leasesSeen = 0;
  for (const l of leases.items) {
    if (!cidrOf.has(l.metadata.name)) continue;
    leasesSeen++;
    const age = (now - Date.parse(l.spec.renewTime ?? '')) / 1000;
    oldestLeaseS = Math.max(oldestLeaseS, Number.isFinite(age) ? age : Infinity);
    if (!(age <= (l.spec.leaseDurationSeconds ?? 40)))
      problems.push(`Lease ${l.metadata.name} renewed ${age.toFixed(1)} s ago`);
  }
  if (leasesSeen !== z.nodes) problems.push(`${leasesSeen} Leases, want ${z.nodes}`);

  const podList = await getJson<{
    items: Array<{
      metadata: { name: string };
      spec: { nodeName?: string };
      status?: {
        phase?: string;
        podIP?: string;
        podIPs?: Array<{ ip: string }>;
        conditions?: Array<{ type: string; status: string }>;
      };
    }>;
  }>(agent, conn, `/api/v1/namespaces/${NAMESPACE}/pods?labelSelector=${BENCH_LABEL}%3Dnodes`);
  const perNode = new Map<string, number>();
  const ips = new Set<string>();
  let podProblems = 0;
  const podProblem = (s: string): void => {
    if (podProblems++ < 5) problems.push(s);
  };
  for (const p of podList.items) {
    const n = p.spec.nodeName ?? '';
    const cidrs = cidrOf.get(n);
    if (cidrs === undefined) {
      podProblem(`pod ${p.metadata.name} on ${JSON.stringify(n)}, not one of the nodes`);
      continue;
    }
    perNode.set(n, (perNode.get(n) ?? 0) + 1);
    if (p.status?.phase !== 'Running') podProblem(`pod ${p.metadata.name}: phase ${p.status?.phase}`);
    if (!(p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'))
      podProblem(`pod ${p.metadata.name}: not Ready`);
    const ip = p.status?.podIP ?? '';
    if (!cidrs.some((c) => inCidr(ip, c)))
      podProblem(`pod ${p.metadata.name}: IP ${ip} not in ${n}'s ${cidrs.join(',')}`);
    if (ips.has(ip)) podProblem(`pod ${p.metadata.name}: IP ${ip} given twice`);
    ips.add(ip);
  }
  if (podProblems > 5) problems.push(`… ${podProblems - 5} more pod problems`);
  if (podList.items.length !== total) problems.push(`${podList.items.length} pods, want ${total}`);
  const counts = [...perNode.values()];
  const spread = {
    nodesUsed: perNode.size,
    minPerNode: perNode.size < z.nodes ? 0 : Math.min(...counts),
    maxPerNode: Math.max(...counts),
    histogram: histogram(counts, z.nodes),
  };
  // Spread (the scheduler breaks score ties at random, so not perfectly even): at least 90 % of the
  // nodes that could run a pod run one, and none runs more than twice its even share + 1.
  const evenShare = Math.ceil(total / z.nodes);
  if (spread.nodesUsed < Math.ceil(0.9 * Math.min(z.nodes, total)))
    problems.push(
      `pods on only ${spread.nodesUsed} of ${z.nodes} nodes: ${JSON.stringify(Object.fromEntries(perNode))}`,
    );
  if (spread.maxPerNode > 2 * evenShare + 1)
    problems.push(`a node runs ${spread.maxPerNode} pods (even share ${evenShare})`);
  if (spread.maxPerNode > MAX_PODS) problems.push(`a node runs ${spread.maxPerNode} pods`);
  if (rep.pods !== total) problems.push(`watcher saw ${rep.pods} pods, want ${total}`);
  if (rep.bound !== total) problems.push(`watcher saw ${rep.bound} bound, want ${total}`);
  if (rep.rebinds !== 0) problems.push(`${rep.rebinds} pods changed node`);
  if (rep.deleted !== 0) problems.push(`${rep.deleted} pods deleted`);
  if (problems.length > 0) throw new Error(`checks failed:\n  ${problems.join('\n  ')}`);
  ctx.log(
    `checks passed: ${nodes.length} nodes Ready (oldest Lease ${oldestLeaseS.toFixed(1)} s), ${total} pods Running+Ready in their node's podCIDR, ${spread.nodesUsed} nodes used, ${spread.minPerNode}–${spread.maxPerNode} per node`,
  );
  return { nodes, notReadyNodes, oldestLeaseS, podList, spread };
}
