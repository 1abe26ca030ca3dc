// Graceful deletion of pods, as kube-apiserver's pod strategy (CheckGracefulDelete) and
// rest.BeforeDelete decide it. Pure: the registry writes what the plan says.
import type { KObject } from '../../api/object.js';
import { parseTimestamp } from '../../api/printers/time.js';
import { rfc3339 } from './object-meta.js';

/** Used when a pod has no spec.terminationGracePeriodSeconds (defaulting normally sets it to 30). */
export const DEFAULT_POD_GRACE_SECONDS = 30;

export type PodDeletionPlan =
  /** Not graceful: removed at once (or held by finalizers), as every other kind. */
  | { readonly kind: 'immediate' }
  /** Already terminating with a grace period no longer than the one asked for: nothing changes. */
  | { readonly kind: 'pending' }
  /**
   * Write deletionTimestamp and deletionGracePeriodSeconds; with a grace of 0 (and no finalizers) the
   * pod is then removed, so watchers see MODIFIED then DELETED.
   */
  | { readonly kind: 'graceful'; readonly deletionTimestamp: string; readonly grace: number };

/**
 * How a DELETE with `requested` (DeleteOptions.gracePeriodSeconds, undefined when not given) treats
 * `pod` at `nowMs`:
 * - first deletion: grace = requested ?? spec.terminationGracePeriodSeconds (?? 30); an unscheduled pod
 *   (no spec.nodeName) or one that already Succeeded or Failed goes at once; a negative grace is 1;
 *   deletionTimestamp = now + grace;
 * - a pod already terminating with a grace of 0 (or none) goes at once; otherwise only a shorter grace
 *   changes anything: deletionTimestamp moves to old − old grace + new grace.
 */
export function planPodDeletion(pod: KObject, requested: number | undefined, nowMs: number): PodDeletionPlan {
  const meta = pod.metadata;
  if (meta.deletionTimestamp !== undefined && meta.deletionTimestamp !== null) {
    const current = meta.deletionGracePeriodSeconds;
    if (typeof current !== 'number' || current <= 0) return { kind: 'immediate' };
    if (requested === undefined) return { kind: 'pending' };
    // Upstream does not clamp here; a negative grace on a terminating pod is read as 1, as on a first delete.
    const grace = requested < 0 ? 1 : requested;
    if (grace >= current) return { kind: 'pending' };
    const was = parseTimestamp(meta.deletionTimestamp) ?? nowMs + current * 1000;
    return { kind: 'graceful', deletionTimestamp: rfc3339(was - current * 1000 + grace * 1000), grace };
  }
  const spec = (pod.spec ?? {}) as { nodeName?: unknown; terminationGracePeriodSeconds?: unknown };
  const phase = ((pod.status ?? {}) as { phase?: unknown }).phase;
  const unscheduled = typeof spec.nodeName !== 'string' || spec.nodeName === '';
  // Kept as before: an unscheduled or finished pod is removed with one DELETED event (upstream writes
  // the deletionTimestamp first, so its watchers also see a MODIFIED).
  if (unscheduled || phase === 'Succeeded' || phase === 'Failed') return { kind: 'immediate' };
  const fromSpec =
    typeof spec.terminationGracePeriodSeconds === 'number'
      ? spec.terminationGracePeriodSeconds
      : DEFAULT_POD_GRACE_SECONDS;
  let grace = requested ?? fromSpec;
  if (grace < 0) grace = 1;
  return { kind: 'graceful', deletionTimestamp: rfc3339(nowMs + grace * 1000), grace };
}
