// What the node lifecycle controller does to the pods of a node that stops being Ready. Behaves like
// kube-controller-manager's MarkPodsNotReady (pkg/controller/util/node/controller_utils.go): each
// pod bound to the node gets its Ready condition set to False (reason and message kept, transition
// now), through pods/status, so Endpoints and EndpointSlices drop it. ContainersReady is left alone,
// and nothing is undone when the node recovers: the kubelet re-reports Ready, as upstream relies on.
import { conditionOf, type Pod } from './types.js';

/**
 * The strategic-merge status patch setting the pod's Ready condition False, or undefined when it has
 * none (only an existing condition is flipped, as upstream), is already False, or the pod has finished.
 */
export function notReadyPatch(pod: Pod, now: string): Record<string, unknown> | undefined {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return undefined;
  const ready = conditionOf(pod.status?.conditions, 'Ready');
  if (ready === undefined || ready.status === 'False') return undefined;
  return {
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          ...(ready.reason === undefined ? {} : { reason: ready.reason }),
          ...(ready.message === undefined ? {} : { message: ready.message }),
          lastTransitionTime: now,
        },
      ],
    },
  };
}
