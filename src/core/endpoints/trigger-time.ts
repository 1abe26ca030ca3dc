// The value of `endpoints.kubernetes.io/last-change-trigger-time`: when did the change that this write
// publishes happen? In behaviour like kubernetes' pkg/controller/util/endpoint/trigger_time_tracker.go
// (ComputeEndpointLastChangeTriggerTime):
//   - a pod's trigger time is its Ready condition's lastTransitionTime; the Service's is its creationTimestamp;
//   - the first computation for a Service returns the Service's creationTimestamp;
//   - later ones return the earliest trigger time that moved forward since the previous computation: pods
//     whose time is later than the one last observed for that pod name (a pod not seen before counts), and
//     the Service's if it is later than the one last observed; "" when none did;
//   - a computation's state replaces the Service's when the caller commits it, after its write landed; forget()
//     drops it when the Service is deleted.
// kube's tracker replaces the state as it computes, so a sync whose write fails (a conflict on a stale cache)
// is retried with the change already "observed": the retry writes no annotation, and the time of the change
// is lost. Here a computation that is not committed leaves the state as it was, and the retry computes
// from the same state (the same time, unless the pods moved on meanwhile).
// Timestamps are RFC 3339 strings, compared at millisecond precision (metav1.Time carries whole seconds),
// and the result is written in UTC as Go's RFC3339Nano prints it ("2018-01-01T00:00:00Z",
// "2018-01-01T00:00:00.5Z"). Go's zero time and unparseable values count as unset.
import { formatTimestamp, parseTimestamp } from '../../api/printers/time.js';
import { list, rec, str } from './read.js';
import type { Pod, Service } from './types.js';

/** `namespace/name`: the workqueue key of a Service, and the key forget() takes. */
export const serviceKey = (service: Service): string =>
  `${str(service.metadata.namespace)}/${str(service.metadata.name)}`;

/** Go's RFC3339Nano of a UTC instant in milliseconds: the fraction only when non-zero, without trailing zeros. */
export function formatRFC3339Nano(ms: number): string {
  const base = formatTimestamp(ms);
  const fraction = ((ms % 1000) + 1000) % 1000;
  if (fraction === 0) return base;
  return `${base.slice(0, -1)}.${String(fraction).padStart(3, '0').replace(/0+$/, '')}Z`;
}

/** The pod's Ready condition's lastTransitionTime, or undefined when it has none. */
export function podTriggerTime(pod: Pod): number | undefined {
  const ready = list(rec(pod.status)['conditions']).find((c) => rec(c)['type'] === 'Ready');
  return ready === undefined ? undefined : parseTimestamp(rec(ready)['lastTransitionTime']);
}

interface ServiceState {
  /** Pod name → last observed trigger time (pods without one are not recorded). */
  readonly pods: ReadonlyMap<string, number>;
  readonly service: number | undefined;
}

/** A computed trigger time, and the step that makes it observed once the write carrying it has landed. */
export interface TriggerTime {
  /** The annotation's value; "" when no trigger time applies (the annotation is then removed). */
  readonly value: string;
  /** Records the trigger times this computation saw as observed. Call it after the write succeeded. */
  readonly commit: () => void;
}

const earliest = (a: number | undefined, b: number): number => (a === undefined || b < a ? b : a);

/** Per-Service memory of the trigger times last observed. Pure: state lives in this object only. */
export class TriggerTimeTracker {
  private readonly states = new Map<string, ServiceState>();

  /**
   * The trigger time for a sync of `service` whose selected pods are `pods`. The state moves on only when the
   * result is committed; an uncommitted one (its write failed) is as if never computed.
   */
  computeEndpointLastChangeTriggerTime(service: Service, pods: readonly Pod[]): TriggerTime {
    const key = serviceKey(service);
    const previous = this.states.get(key);
    let changed: number | undefined;
    const podTimes = new Map<string, number>();
    for (const pod of pods) {
      const t = podTriggerTime(pod);
      if (t === undefined) continue;
      const name = str(pod.metadata.name);
      podTimes.set(name, t);
      const last = previous?.pods.get(name);
      if (last === undefined || t > last) changed = earliest(changed, t);
    }
    const serviceTime = parseTimestamp(service.metadata.creationTimestamp);
    if (serviceTime !== undefined && (previous?.service === undefined || serviceTime > previous.service)) {
      changed = earliest(changed, serviceTime);
    }
    const result = previous === undefined ? serviceTime : changed;
    return {
      value: result === undefined ? '' : formatRFC3339Nano(result),
      commit: () => {
        // Only over the state it was computed from: an older computation never undoes a newer one.
        if (this.states.get(key) === previous) this.states.set(key, { pods: podTimes, service: serviceTime });
      },
    };
  }

  /** Drops the state of a Service (`namespace/name`), as when it is deleted. */
  forget(key: string): void {
    this.states.delete(key);
  }

  /** Whether state is held for the Service (`namespace/name`). */
  has(key: string): boolean {
    return this.states.has(key);
  }
}
