// What the controllers read of a pod, so that the pod informer they share keeps only that.
import { ENDPOINTS_POD_VIEW } from '../core/endpoints/types.js';
import { unionProjections, type Projection } from '../core/projection/projection.js';
import { GC_VIEW } from './garbagecollector/garbage-collector.js';
import { NODE_LIFECYCLE_POD_VIEW } from './nodelifecycle/node-lifecycle-controller.js';
import { POD_GC_POD_VIEW } from './podgc/pod-gc-controller.js';
import { REPLICASET_POD_VIEW } from './replicaset/replicaset-controller.js';
import { DEPLOYMENT_POD_VIEW } from './deployment/deployment-controller.js';
import { SCHEDULER_POD_VIEW } from '../core/scheduling/pod-info.js';

/**
 * What each controller reads of a pod. The shared pod informer keeps the union over the controllers that
 * run; a controller missing here is taken to read whole pods, and then pods are kept whole.
 */
const POD_VIEWS: Readonly<Record<string, Projection>> = {
  endpoints: ENDPOINTS_POD_VIEW,
  endpointslice: ENDPOINTS_POD_VIEW,
  garbagecollector: GC_VIEW,
  nodelifecycle: NODE_LIFECYCLE_POD_VIEW,
  podgc: POD_GC_POD_VIEW,
  servicetopology: {}, // reads no pods
  replicaset: REPLICASET_POD_VIEW,
  deployment: DEPLOYMENT_POD_VIEW,
  scheduler: SCHEDULER_POD_VIEW,
};

/** The union of the running controllers' pod views, or undefined (whole pods) if one has none. */
export function podViewOf(controllers: readonly string[]): Projection | undefined {
  if (controllers.length === 0) return undefined;
  let view: Projection = {};
  for (const name of controllers) {
    const mine = POD_VIEWS[name];
    if (mine === undefined) return undefined;
    view = unionProjections(view, mine);
  }
  return view;
}
