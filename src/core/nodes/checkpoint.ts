// A simulated node's checkpoint: what `svcplane node` needs to run a node's pods again after a restart
// without the API server (ROOT_DIR/NAME/checkpoint.json, kept by src/nodes/checkpoint-store.ts). The
// kubelet keeps a comparable local truth (its pod manager fed from static files and its checkpoint
// manager under --root-dir); here it is one document per node:
//
//   { "kind": "NodeCheckpoint", "apiVersion": "svcplane.io/v1", "node": NAME, "nodeUID": UID,
//     "podCIDRs": [...], "internalIP": IP, "poolCursors": [n, ...], "pods": [pod, ...] }
//
// Each pod keeps its metadata (name, namespace, uid, labels, annotations, owner references, times,
// deletionTimestamp), its spec and the status the node last reported (phase, IPs, conditions,
// container statuses). nodeUID is the registered Node's UID ('' before the first registration): a
// checkpoint of a Node that was deleted and created again (another cluster) is not this node's past. poolCursors is the node's pod IP pool position (PodIPPool.cursors), so a restart
// continues the round-robin instead of handing recently used addresses out again.
//
// decodeCheckpoint refuses anything it cannot trust with a one-line CheckpointError: a document that is
// not JSON (a torn or edited file), another node's, a pod without a name, namespace or uid, a pod bound
// to another node, a pod key twice, addresses that do not parse. Pure: no I/O.
import { isPlainObject, recordOf as rec } from '../../api/json.js';
import type { KObject } from '../../api/object.js';
import { canonicalIP, parseCidrRange } from '../allocator/cidr.js';
import { statusPodIPs } from './pod-lifecycle.js';

export const CHECKPOINT_KIND = 'NodeCheckpoint';
export const CHECKPOINT_API_VERSION = 'svcplane.io/v1';

export interface NodeCheckpoint {
  readonly node: string;
  /** The registered Node's metadata.uid ('' when the node has not been registered). */
  readonly nodeUID: string;
  /** The node's spec.podCIDRs, primary first. */
  readonly podCIDRs: readonly string[];
  readonly internalIP: string;
  /** The pod IP pool's round-robin position, one per pod CIDR. */
  readonly poolCursors: readonly number[];
  /** The pods the node runs, as it last saw and reported them (sorted by namespace/name). */
  readonly pods: readonly KObject[];
}

export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';
}

/** The metadata fields a pod keeps in the checkpoint. */
const KEPT_METADATA = [
  'name',
  'namespace',
  'uid',
  'labels',
  'annotations',
  'ownerReferences',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'generation',
] as const;

/** The pod as the checkpoint keeps it: its identifying metadata, spec and status (no managedFields, no resourceVersion). */
export function checkpointPod(pod: KObject): KObject {
  const meta: Record<string, unknown> = {};
  const from = pod.metadata as Record<string, unknown>;
  for (const k of KEPT_METADATA) if (from[k] !== undefined && from[k] !== null) meta[k] = from[k];
  const p = pod as { spec?: unknown; status?: unknown };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: meta,
    spec: rec(p.spec),
    status: rec(p.status),
  } as KObject;
}

const podKey = (pod: KObject): string => `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;

/** The document, pods sorted by key so equal checkpoints encode equally (a write can be skipped). */
export function encodeCheckpoint(cp: NodeCheckpoint): string {
  const pods = [...cp.pods].map(checkpointPod).sort((a, b) => (podKey(a) < podKey(b) ? -1 : 1));
  return `${JSON.stringify({
    kind: CHECKPOINT_KIND,
    apiVersion: CHECKPOINT_API_VERSION,
    node: cp.node,
    nodeUID: cp.nodeUID,
    podCIDRs: cp.podCIDRs,
    internalIP: cp.internalIP,
    poolCursors: cp.poolCursors,
    pods,
  })}\n`;
}

const nonEmpty = (v: unknown): v is string => typeof v === 'string' && v !== '';

/** The checkpoint of `node` in `text`; throws CheckpointError (one line) when it cannot be trusted. */
export function decodeCheckpoint(text: string, node: string): NodeCheckpoint {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new CheckpointError(`not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (!isPlainObject(doc)) throw new CheckpointError('not a JSON object');
  if (doc['kind'] !== CHECKPOINT_KIND || doc['apiVersion'] !== CHECKPOINT_API_VERSION) {
    throw new CheckpointError(
      `kind/apiVersion ${JSON.stringify(doc['kind'])}/${JSON.stringify(doc['apiVersion'])} is not ${CHECKPOINT_KIND}/${CHECKPOINT_API_VERSION}`,
    );
  }
  if (doc['node'] !== node) {
    throw new CheckpointError(`it is node ${JSON.stringify(doc['node'])}'s, not "${node}"'s`);
  }
  const nodeUID = doc['nodeUID'];
  if (typeof nodeUID !== 'string')
    throw new CheckpointError(`nodeUID ${JSON.stringify(nodeUID)} is not a string`);
  const podCIDRs = doc['podCIDRs'];
  if (
    !Array.isArray(podCIDRs) ||
    podCIDRs.length < 1 ||
    podCIDRs.length > 2 ||
    !podCIDRs.every((c) => typeof c === 'string' && parseCidrRange(c) !== undefined)
  ) {
    throw new CheckpointError(`podCIDRs ${JSON.stringify(podCIDRs)} is not one or two CIDRs`);
  }
  const internalIP = doc['internalIP'];
  if (typeof internalIP !== 'string' || canonicalIP(internalIP) === undefined) {
    throw new CheckpointError(`internalIP ${JSON.stringify(internalIP)} is not an IP address`);
  }
  const cursors = doc['poolCursors'];
  if (
    !Array.isArray(cursors) ||
    cursors.length !== podCIDRs.length ||
    !cursors.every((c) => Number.isSafeInteger(c) && (c as number) >= 0)
  ) {
    throw new CheckpointError(
      `poolCursors ${JSON.stringify(cursors)} is not one non-negative integer per pod CIDR`,
    );
  }
  const rawPods = doc['pods'];
  if (!Array.isArray(rawPods)) throw new CheckpointError('pods is not a list');
  const seen = new Set<string>();
  const pods: KObject[] = [];
  for (const [i, raw] of rawPods.entries()) {
    const meta = rec(rec(raw)['metadata']);
    const where = `pods[${i}]`;
    if (!nonEmpty(meta['name']) || !nonEmpty(meta['namespace']) || !nonEmpty(meta['uid'])) {
      throw new CheckpointError(`${where} has no metadata.name, namespace or uid`);
    }
    const pod = raw as KObject;
    const key = podKey(pod);
    if (seen.has(key)) throw new CheckpointError(`${where}: pod ${key} is listed twice`);
    seen.add(key);
    const nodeName = rec(rec(raw)['spec'])['nodeName'];
    if (nodeName !== node) {
      throw new CheckpointError(
        `${where}: pod ${key} is bound to ${JSON.stringify(nodeName)}, not "${node}"`,
      );
    }
    const bad = statusPodIPs(pod as { metadata: object; status?: unknown }).find(
      (ip) => canonicalIP(ip) === undefined,
    );
    if (bad !== undefined)
      throw new CheckpointError(`${where}: pod ${key} has pod IP ${JSON.stringify(bad)}`);
    pods.push(checkpointPod(pod));
  }
  return {
    node,
    nodeUID,
    podCIDRs: podCIDRs as string[],
    internalIP,
    poolCursors: cursors as number[],
    pods,
  };
}
