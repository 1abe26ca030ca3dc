// `kubectl get pods`: READY, STATUS and RESTARTS are derived from container statuses by the same rules
// kube-apiserver's pod printer uses, so that a pod's status reads the same against either server.
import type { KObject } from '../object.js';
import { int, obj, objOrUndefined, objects, str, type Json } from './fields.js';
import { humanDuration, parseTimestamp, since } from './time.js';
import { AGE_COLUMN, NAME_COLUMN, column, wide, type Printer, type TableRowCondition } from './types.js';

const columns = [
  NAME_COLUMN,
  column('Ready', 'How many of the containers of this pod are ready to accept traffic, out of how many.'),
  column('Status', 'A one-word summary of the state of the pod and its containers.'),
  column(
    'Restarts',
    'How many times the containers of this pod have restarted, and how long ago the last one did.',
  ),
  AGE_COLUMN,
  wide('IP', 'The first IP address allocated to the pod.'),
  wide('Node', 'The node the pod is bound to.'),
  wide('Nominated Node', 'The node the scheduler nominated for the pod after preempting others there.'),
  wide('Readiness Gates', 'How many of the readiness gates of the pod are met, out of how many.'),
];

/** The later of two instants, either possibly unset. */
const later = (a: number | undefined, b: number | undefined): number | undefined =>
  b === undefined ? a : a === undefined || b > a ? b : a;

const lastFinishedAt = (cs: Json): number | undefined =>
  parseTimestamp(obj(obj(cs['lastState'])['terminated'])['finishedAt']);

const conditionTrue = (conditions: Json[], type: string): boolean =>
  conditions.some((c) => c['type'] === type && c['status'] === 'True');

/** `Init:Error`, `Init:Signal:9` or `Init:ExitCode:2` for a failed init container. */
function terminatedReason(terminated: Json, prefix: string): string {
  const reason = str(terminated['reason']);
  if (reason !== '') return prefix + reason;
  const signal = int(terminated['signal']);
  return signal !== 0 ? `${prefix}Signal:${signal}` : `${prefix}ExitCode:${int(terminated['exitCode'])}`;
}

function podCells(pod: KObject, nowMs: number): unknown[] {
  const spec = obj(pod['spec']);
  const status = obj(pod['status']);
  const conditions = objects(status['conditions']);
  const initContainers = objects(spec['initContainers']);
  const sidecars = new Set(
    initContainers.filter((c) => c['restartPolicy'] === 'Always').map((c) => str(c['name'])),
  );
  const totalContainers = objects(spec['containers']).length + sidecars.size;

  const phase = str(status['phase']);
  let reason = str(status['reason']) || phase;
  if (conditions.some((c) => c['type'] === 'PodScheduled' && c['reason'] === 'SchedulingGated')) {
    reason = 'SchedulingGated';
  }

  let ready = 0;
  let restarts = 0;
  let lastRestart: number | undefined;
  let sidecarRestarts = 0;
  let lastSidecarRestart: number | undefined;
  let initializing = false;

  const initStatuses = objects(status['initContainerStatuses']);
  for (const [i, cs] of initStatuses.entries()) {
    const count = int(cs['restartCount']);
    const finishedAt = lastFinishedAt(cs);
    restarts += count;
    lastRestart = later(lastRestart, finishedAt);
    const isSidecar = sidecars.has(str(cs['name']));
    if (isSidecar) {
      sidecarRestarts += count;
      lastSidecarRestart = later(lastSidecarRestart, finishedAt);
    }
    const state = obj(cs['state']);
    const terminated = objOrUndefined(state['terminated']);
    const waiting = objOrUndefined(state['waiting']);
    if (terminated !== undefined && int(terminated['exitCode']) === 0) continue;
    if (isSidecar && cs['started'] === true) {
      if (cs['ready'] === true) ready++;
      continue;
    }
    const waitingReason = str(waiting?.['reason']);
    if (terminated !== undefined) reason = terminatedReason(terminated, 'Init:');
    else if (waitingReason !== '' && waitingReason !== 'PodInitializing') reason = `Init:${waitingReason}`;
    else reason = `Init:${i}/${initContainers.length}`;
    initializing = true;
    break;
  }

  if (!initializing || conditionTrue(conditions, 'Initialized')) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    // In reverse, so that the first container with something to report has the last word.
    for (const cs of objects(status['containerStatuses']).reverse()) {
      restarts += int(cs['restartCount']);
      lastRestart = later(lastRestart, lastFinishedAt(cs));
      const state = obj(cs['state']);
      const waitingReason = str(obj(state['waiting'])['reason']);
      const terminated = objOrUndefined(state['terminated']);
      if (waitingReason !== '') reason = waitingReason;
      else if (terminated !== undefined) reason = terminatedReason(terminated, '');
      else if (cs['ready'] === true && objOrUndefined(state['running']) !== undefined) {
        hasRunning = true;
        ready++;
      }
    }
    if (reason === 'Completed' && hasRunning) {
      reason = conditionTrue(conditions, 'Ready') ? 'Running' : 'NotReady';
    }
  }

  const deleting = pod.metadata.deletionTimestamp != null;
  if (deleting && status['reason'] === 'NodeLost') reason = 'Unknown';
  else if (deleting && phase !== 'Succeeded' && phase !== 'Failed') reason = 'Terminating';

  const restartsCell =
    restarts !== 0 && lastRestart !== undefined
      ? `${restarts} (${humanDuration(nowMs - lastRestart)} ago)`
      : String(restarts);

  const podIPs = objects(status['podIPs']);
  const podIP = (podIPs.length > 0 ? str(podIPs[0]?.['ip']) : str(status['podIP'])) || '<none>';
  const gates = objects(spec['readinessGates']);
  let readinessGates = '<none>';
  if (gates.length > 0) {
    const met = gates.filter((g) => {
      const c = conditions.find((x) => x['type'] === g['conditionType']);
      return c !== undefined && c['status'] === 'True';
    }).length;
    readinessGates = `${met}/${gates.length}`;
  }

  return [
    pod.metadata.name ?? '',
    `${ready}/${totalContainers}`,
    reason,
    restartsCell,
    since(pod.metadata.creationTimestamp, nowMs),
    podIP,
    str(spec['nodeName']) || '<none>',
    str(status['nominatedNodeName']) || '<none>',
    readinessGates,
  ];
}

function podConditions(pod: KObject): TableRowCondition[] {
  switch (obj(pod['status'])['phase']) {
    case 'Succeeded':
      return [
        {
          type: 'Completed',
          status: 'True',
          reason: 'Succeeded',
          message: 'The pod has completed successfully.',
        },
      ];
    case 'Failed':
      return [{ type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' }];
    default:
      return [];
  }
}

export const podPrinter: Printer = { columns, cells: podCells, conditions: podConditions };
