// One scheduling cycle for one pod (kube-scheduler's schedule_one.go): filter the nodes, starting where
// the previous cycle stopped and stopping once enough feasible nodes are found; score those; pick the
// best, ties broken uniformly at random (reservoir sampling). Pure: the random source is passed in.
import { failedSchedulingMessage } from './fit-error.js';
import { filterNode, type NodeFailure } from './filters.js';
import type { NodeInfo } from './node-info.js';
import type { PodInfo } from './pod-info.js';
import { scoreNodes, type ZoneOwnerCount } from './scores.js';

const MIN_FEASIBLE_NODES_TO_FIND = 100;
const MIN_FEASIBLE_NODES_PERCENTAGE = 5;
const BASE_PERCENTAGE_OF_NODES_TO_SCORE = 50;

/**
 * How many feasible nodes are enough (adaptive percentageOfNodesToScore): all of them under 100 nodes,
 * else max(100, n × max(5, 50 − n/125)%), in integer arithmetic.
 */
export function numFeasibleNodesToFind(numAllNodes: number): number {
  if (numAllNodes < MIN_FEASIBLE_NODES_TO_FIND) return numAllNodes;
  const pct = Math.max(
    MIN_FEASIBLE_NODES_PERCENTAGE,
    BASE_PERCENTAGE_OF_NODES_TO_SCORE - Math.trunc(numAllNodes / 125),
  );
  const n = Math.trunc((numAllNodes * pct) / 100);
  return n < MIN_FEASIBLE_NODES_TO_FIND ? MIN_FEASIBLE_NODES_TO_FIND : n;
}

export interface ScheduleInput {
  readonly pod: PodInfo;
  readonly nodes: readonly NodeInfo[];
  /** Where filtering starts (the previous cycle's nextStartNodeIndex). */
  readonly start: number;
  /** Uniform in [0, 1). */
  readonly random: () => number;
  readonly zoneCount: ZoneOwnerCount;
}

export type ScheduleResult =
  | {
      readonly kind: 'Scheduled';
      readonly node: NodeInfo;
      readonly feasibleNodes: number;
      readonly evaluatedNodes: number;
      readonly nextStart: number;
    }
  | {
      readonly kind: 'Unschedulable';
      /** The FailedScheduling message. */
      readonly message: string;
      /** Node name → why it failed. */
      readonly failures: ReadonlyMap<string, NodeFailure>;
      readonly nextStart: number;
    };

export function schedulePod(input: ScheduleInput): ScheduleResult {
  const { pod, nodes } = input;
  const n = nodes.length;
  const want = numFeasibleNodesToFind(n);
  const feasible: NodeInfo[] = [];
  const failures = new Map<string, NodeFailure>();
  const start = n === 0 ? 0 : ((input.start % n) + n) % n;
  let processed = 0;
  for (let i = 0; i < n && feasible.length < want; i++) {
    const node = nodes[(start + i) % n]!;
    processed++;
    const failure = filterNode(pod, node);
    if (failure === undefined) feasible.push(node);
    else failures.set(node.name, failure);
  }
  const nextStart = n === 0 ? 0 : (start + processed) % n;
  if (feasible.length === 0) {
    return {
      kind: 'Unschedulable',
      message: failedSchedulingMessage(n, [...failures.values()], pod.preemptionNever),
      failures,
      nextStart,
    };
  }
  const node =
    feasible.length === 1
      ? feasible[0]!
      : selectHost(feasible, scoreNodes(pod, feasible, input.zoneCount), input.random);
  return { kind: 'Scheduled', node, feasibleNodes: feasible.length, evaluatedNodes: processed, nextStart };
}

/** The highest-scoring node; among equals each is equally likely (reservoir sampling). */
export function selectHost<T>(nodes: readonly T[], scores: readonly number[], random: () => number): T {
  let best = 0;
  let bestScore = scores[0]!;
  let ties = 1;
  for (let i = 1; i < nodes.length; i++) {
    const s = scores[i]!;
    if (s > bestScore) {
      best = i;
      bestScore = s;
      ties = 1;
    } else if (s === bestScore) {
      ties++;
      if (Math.floor(random() * ties) === 0) best = i;
    }
  }
  return nodes[best]!;
}

/** A small seeded generator (mulberry32), for reproducible tie-breaking. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
