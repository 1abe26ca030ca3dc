// Taint-based eviction: when a pod on a node with NoExecute taints must go. Behaves like
// kube-controller-manager's taint eviction controller (pkg/controller/tainteviction): a taint the pod
// does not tolerate evicts it now; otherwise it goes after the smallest tolerationSeconds among the
// tolerations it uses, counted from when it was first seen under the taints; a toleration without
// tolerationSeconds tolerates forever.
import type { Taint, Toleration } from './types.js';

/** Whether `t` tolerates `taint` (ToleratesTaint). */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect !== undefined && t.effect !== '' && t.effect !== taint.effect) return false;
  if (t.key !== undefined && t.key !== '' && t.key !== taint.key) return false;
  const op = t.operator === undefined || t.operator === '' ? 'Equal' : t.operator;
  if (op === 'Exists') return true;
  if (op === 'Equal') return (t.value ?? '') === (taint.value ?? '');
  return false;
}

export type EvictionDecision =
  | { readonly kind: 'keep' }
  | { readonly kind: 'evict' }
  | { readonly kind: 'evictAt'; readonly atMs: number };

/**
 * The fate of a pod on a node whose NoExecute taints are `taints` (other effects are ignored), first
 * seen under them at `sinceMs`.
 */
export function evictionDecision(
  tolerations: readonly Toleration[],
  taints: readonly Taint[],
  sinceMs: number,
  now: number,
): EvictionDecision {
  const noExecute = taints.filter((t) => t.effect === 'NoExecute');
  if (noExecute.length === 0) return { kind: 'keep' };
  const used: Toleration[] = [];
  for (const taint of noExecute) {
    const t = tolerations.find((x) => tolerates(x, taint));
    if (t === undefined) return { kind: 'evict' };
    used.push(t);
  }
  let min = Infinity;
  for (const t of used) {
    if (t.tolerationSeconds === undefined || t.tolerationSeconds === null) continue;
    if (t.tolerationSeconds <= 0) return { kind: 'evict' };
    min = Math.min(min, t.tolerationSeconds);
  }
  if (min === Infinity) return { kind: 'keep' };
  const atMs = sinceMs + min * 1000;
  return now >= atMs ? { kind: 'evict' } : { kind: 'evictAt', atMs };
}
