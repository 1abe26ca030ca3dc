// What kube-apiserver's default admission plugins (plugin/pkg/admission/priority and
// plugin/pkg/admission/defaulttolerationseconds upstream) add to a new Pod, for a server that has no
// PriorityClass API and no ServiceAccount token controller:
//   - Priority: no priorityClassName → priority 0, preemptionPolicy PreemptLowerPriority; the two
//     built-in classes get their values; any other name is refused, as kube refuses a class it cannot
//     find; a priority set by the client that differs from the computed one is refused.
//   - DefaultTolerationSeconds: NoExecute tolerations of not-ready and unreachable for 300 s, unless a
//     toleration already covers them (same key or an empty key, effect NoExecute or empty).
// Left out, and why (docs/apiserver.md): the ServiceAccount plugin's token volume and serviceAccount alias
// (svcplane issues no service-account tokens), and TaintNodesByCondition (its not-ready taint needs the
// node lifecycle controller to remove it).
import { type Obj, absent, ensureChild, items } from './util.js';

const BUILTIN_PRIORITY_CLASSES: Readonly<Record<string, number>> = {
  'system-node-critical': 2_000_001_000,
  'system-cluster-critical': 2_000_000_000,
};

export const DEFAULT_TOLERATION_SECONDS = 300;
const NOT_READY = 'node.kubernetes.io/not-ready';
const UNREACHABLE = 'node.kubernetes.io/unreachable';

/** Applies the plugins to a Pod being created; returns why it is forbidden, or undefined. */
export function admitPodCreate(pod: Obj): string | undefined {
  const spec = ensureChild(pod, 'spec');
  if (spec === undefined) return undefined; // validation reports it
  const why = admitPriority(spec);
  if (why !== undefined) return why;
  addDefaultTolerations(spec);
  return undefined;
}

function admitPriority(spec: Obj): string | undefined {
  const className = typeof spec['priorityClassName'] === 'string' ? spec['priorityClassName'] : '';
  let priority = 0;
  if (className !== '') {
    const builtin = BUILTIN_PRIORITY_CLASSES[className];
    if (builtin === undefined) return `no PriorityClass with name ${className} was found`;
    priority = builtin;
  }
  if (!absent(spec, 'priority') && spec['priority'] !== priority) {
    return (
      `the integer value of priority (${String(spec['priority'])}) must not be provided in pod spec; ` +
      `priority admission controller computed ${priority} from the given PriorityClass name`
    );
  }
  spec['priority'] = priority;
  if (absent(spec, 'preemptionPolicy')) spec['preemptionPolicy'] = 'PreemptLowerPriority';
  return undefined;
}

function addDefaultTolerations(spec: Obj): void {
  const tolerations = items(spec, 'tolerations');
  const covers = (key: string): boolean =>
    tolerations.some((t) => {
      const k = typeof t['key'] === 'string' ? t['key'] : '';
      const effect = typeof t['effect'] === 'string' ? t['effect'] : '';
      return (k === key || k === '') && (effect === 'NoExecute' || effect === '');
    });
  const add: Obj[] = [];
  for (const key of [NOT_READY, UNREACHABLE]) {
    if (!covers(key))
      add.push({
        key,
        operator: 'Exists',
        effect: 'NoExecute',
        tolerationSeconds: DEFAULT_TOLERATION_SECONDS,
      });
  }
  if (add.length === 0) return;
  const raw = spec['tolerations'];
  if (raw !== undefined && raw !== null && !Array.isArray(raw)) return; // not a list: validation reports it
  spec['tolerations'] = [...((raw as unknown[] | null | undefined) ?? []), ...add];
}
