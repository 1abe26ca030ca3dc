// The taints the node lifecycle controller manages. Behaves like kube-controller-manager's
// node_lifecycle_controller.go: NoSchedule taints follow the node's conditions (and
// spec.unschedulable) on every Node change; the NoExecute not-ready/unreachable taint follows the
// Ready status seen on the health pass. Taints with other keys or effects are never touched.
import {
  TAINT_DISK_PRESSURE,
  TAINT_MEMORY_PRESSURE,
  TAINT_NETWORK_UNAVAILABLE,
  TAINT_NOT_READY,
  TAINT_PID_PRESSURE,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
  conditionOf,
  rfc3339,
  type Node,
  type Taint,
} from './types.js';

/** Keys whose NoSchedule taint the controller owns. */
export const NO_SCHEDULE_KEYS: readonly string[] = [
  TAINT_NOT_READY,
  TAINT_UNREACHABLE,
  TAINT_MEMORY_PRESSURE,
  TAINT_DISK_PRESSURE,
  TAINT_PID_PRESSURE,
  TAINT_NETWORK_UNAVAILABLE,
  TAINT_UNSCHEDULABLE,
];

const same = (a: Taint, key: string, effect: string): boolean => a.key === key && a.effect === effect;

/** The controller-owned NoSchedule taint keys the node's conditions and spec imply. */
export function desiredNoScheduleKeys(node: Node): string[] {
  const conditions = node.status?.conditions ?? [];
  const keys: string[] = [];
  const ready = conditionOf(conditions, 'Ready')?.status;
  if (ready === 'False') keys.push(TAINT_NOT_READY);
  if (ready === 'Unknown') keys.push(TAINT_UNREACHABLE);
  const isTrue = (type: string): boolean => conditionOf(conditions, type)?.status === 'True';
  if (isTrue('MemoryPressure')) keys.push(TAINT_MEMORY_PRESSURE);
  if (isTrue('DiskPressure')) keys.push(TAINT_DISK_PRESSURE);
  if (isTrue('PIDPressure')) keys.push(TAINT_PID_PRESSURE);
  if (isTrue('NetworkUnavailable')) keys.push(TAINT_NETWORK_UNAVAILABLE);
  if (node.spec?.unschedulable === true) keys.push(TAINT_UNSCHEDULABLE);
  return keys;
}

/**
 * The node's taints with the controller-owned NoSchedule ones made to match its state, or undefined
 * when they already do. Other taints keep their order; added ones go last.
 */
export function noScheduleTaintsUpdate(node: Node): Taint[] | undefined {
  const taints = node.spec?.taints ?? [];
  const want = new Set(desiredNoScheduleKeys(node));
  const kept = taints.filter(
    (t) => !(t.effect === 'NoSchedule' && NO_SCHEDULE_KEYS.includes(t.key) && !want.has(t.key)),
  );
  const added = [...want]
    .filter((k) => !taints.some((t) => same(t, k, 'NoSchedule')))
    .map((key): Taint => ({ key, effect: 'NoSchedule' }));
  if (added.length === 0 && kept.length === taints.length) return undefined;
  return [...kept, ...added];
}

/** The NoExecute taint key a Ready status implies: not-ready for False, unreachable for Unknown. */
export function noExecuteKeyFor(readyStatus: string): string | undefined {
  if (readyStatus === 'False') return TAINT_NOT_READY;
  if (readyStatus === 'True') return undefined;
  return TAINT_UNREACHABLE;
}

const opposite = (key: string): string => (key === TAINT_NOT_READY ? TAINT_UNREACHABLE : TAINT_NOT_READY);

export const hasNoExecute = (node: Node, key: string): boolean =>
  (node.spec?.taints ?? []).some((t) => same(t, key, 'NoExecute'));

/**
 * What the health pass does about a node's NoExecute taint given the Ready status it observed before
 * this pass (processTaintBaseEviction):
 * - `remove`: Ready is True and a not-ready/unreachable NoExecute taint is present: drop it now;
 * - `swap`: the opposite NoExecute taint is present: replace it now (no rate limit);
 * - `queue`: the node needs the taint: add it through its zone's rate-limited queue;
 * - `cancel`: Ready is True and nothing to remove, but a queued tainting must not happen;
 * - `none`: already right.
 */
export type NoExecuteAction =
  | { readonly kind: 'none' }
  | { readonly kind: 'cancel' }
  | { readonly kind: 'remove' }
  | { readonly kind: 'swap'; readonly key: string }
  | { readonly kind: 'queue'; readonly key: string };

export function noExecuteAction(node: Node, observedReady: string): NoExecuteAction {
  const key = noExecuteKeyFor(observedReady);
  if (key === undefined) {
    return hasNoExecute(node, TAINT_NOT_READY) || hasNoExecute(node, TAINT_UNREACHABLE)
      ? { kind: 'remove' }
      : { kind: 'cancel' };
  }
  if (hasNoExecute(node, key)) return { kind: 'none' };
  if (hasNoExecute(node, opposite(key))) return { kind: 'swap', key };
  return { kind: 'queue', key };
}

/**
 * The node's taints with `key`:NoExecute (timeAdded = now) in place of the opposite one, or undefined
 * when `key` is already there and the opposite is not.
 */
export function withNoExecuteTaint(node: Node, key: string, now: number): Taint[] | undefined {
  const taints = node.spec?.taints ?? [];
  const other = opposite(key);
  const has = taints.some((t) => same(t, key, 'NoExecute'));
  const kept = taints.filter((t) => !same(t, other, 'NoExecute'));
  if (has && kept.length === taints.length) return undefined;
  return has ? kept : [...kept, { key, effect: 'NoExecute', timeAdded: rfc3339(now) }];
}

/** The node's taints without the not-ready/unreachable NoExecute ones, or undefined when it has none. */
export function withoutNoExecuteTaints(node: Node): Taint[] | undefined {
  const taints = node.spec?.taints ?? [];
  const kept = taints.filter(
    (t) => !(t.effect === 'NoExecute' && (t.key === TAINT_NOT_READY || t.key === TAINT_UNREACHABLE)),
  );
  return kept.length === taints.length ? undefined : kept;
}
