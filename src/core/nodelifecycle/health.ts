// Node health: when a node's heartbeats have stopped, and what its conditions become then. Behaves like
// kube-controller-manager's node lifecycle controller (pkg/controller/nodelifecycle,
// tryUpdateNodeHealth): a "probe timestamp" per node is taken on the controller's own clock whenever it
// observes a new heartbeat (the Ready condition's lastHeartbeatTime changing, or a Lease with a newer
// renewTime), so clock skew between kubelet and controller does not matter. Once `now` is past
// probe + grace, the monitored conditions turn Unknown.
//
// A node that never posted a Ready condition (made by hand, or a kubelet that died while registering)
// is measured from its creationTimestamp with the longer startup grace period, as upstream does.
import {
  MESSAGE_NEVER_UPDATED,
  MESSAGE_STATUS_UNKNOWN,
  MONITORED_CONDITIONS,
  REASON_NEVER_UPDATED,
  REASON_STATUS_UNKNOWN,
  conditionOf,
  parseTime,
  rfc3339,
  type Lease,
  type Node,
  type NodeCondition,
} from './types.js';

/** What the controller remembers of a node between passes (nodeHealthData upstream). Times in ms. */
export interface NodeHealth {
  /** Controller time of the last observed heartbeat. */
  readonly probeTimestamp: number;
  /** Controller time the Ready condition was last seen to change. */
  readonly readyTransitionTimestamp: number;
  /** The Ready condition's times as last observed; undefined when the node had none. */
  readonly savedReady: { readonly heartbeat: string; readonly transition: string } | undefined;
  /** renewTime of the newest Lease observed, in ms. */
  readonly leaseRenewTime: number | undefined;
}

export interface HealthTiming {
  /** --node-monitor-grace-period (default 40 s). */
  readonly gracePeriodMs: number;
  /** --node-startup-grace-period (default 60 s), for a node that never posted Ready. */
  readonly startupGracePeriodMs: number;
}

export interface Assessment {
  readonly health: NodeHealth;
  readonly gracePeriodMs: number;
  /** Ready's status before this pass ('Unknown' when the node has no Ready condition). */
  readonly observedReady: string;
  /** Ready's status after this pass (what `conditions` says when given). */
  readonly currentReady: string;
  /** The node's new status.conditions when they must be written (heartbeats overdue), else undefined. */
  readonly conditions: NodeCondition[] | undefined;
}

const savedOf = (c: NodeCondition | undefined): NodeHealth['savedReady'] =>
  c === undefined
    ? undefined
    : { heartbeat: c.lastHeartbeatTime ?? '', transition: c.lastTransitionTime ?? '' };

/** Whether `now` is past the node's probe timestamp plus `gracePeriodMs`. */
export const overdue = (health: NodeHealth, gracePeriodMs: number, now: number): boolean =>
  now > health.probeTimestamp + gracePeriodMs;

/**
 * Updates a node's health record from what is observed now (its Ready condition and its Lease) and
 * says whether its conditions must turn Unknown.
 */
export function assessNode(
  prev: NodeHealth | undefined,
  node: Node,
  lease: Lease | undefined,
  now: number,
  timing: HealthTiming,
): Assessment {
  const conditions = node.status?.conditions ?? [];
  const ready = conditionOf(conditions, 'Ready');
  const created = parseTime(node.metadata.creationTimestamp) ?? now;
  let health: NodeHealth;
  let gracePeriodMs: number;
  if (ready === undefined) {
    gracePeriodMs = timing.startupGracePeriodMs;
    health =
      prev === undefined
        ? {
            probeTimestamp: created,
            readyTransitionTimestamp: created,
            savedReady: undefined,
            leaseRenewTime: undefined,
          }
        : { ...prev, savedReady: undefined };
  } else {
    gracePeriodMs = timing.gracePeriodMs;
    const current = savedOf(ready)!;
    if (prev === undefined || prev.savedReady === undefined) {
      // First sight of this node's Ready condition (or of the node): assume a heartbeat now.
      health = {
        probeTimestamp: now,
        readyTransitionTimestamp: now,
        savedReady: current,
        leaseRenewTime: prev?.leaseRenewTime,
      };
    } else if (prev.savedReady.heartbeat !== current.heartbeat) {
      health = {
        probeTimestamp: now,
        readyTransitionTimestamp:
          prev.savedReady.transition !== current.transition ? now : prev.readyTransitionTimestamp,
        savedReady: current,
        leaseRenewTime: prev.leaseRenewTime,
      };
    } else {
      health = { ...prev, savedReady: current };
    }
  }
  // A renewed Lease is a heartbeat.
  const renew = parseTime(lease?.spec?.renewTime);
  if (renew !== undefined && (health.leaseRenewTime === undefined || health.leaseRenewTime < renew)) {
    health = { ...health, probeTimestamp: now, leaseRenewTime: renew };
  }
  const observedReady = ready?.status ?? 'Unknown';
  if (!overdue(health, gracePeriodMs, now)) {
    return { health, gracePeriodMs, observedReady, currentReady: observedReady, conditions: undefined };
  }
  const next = unknownConditions(conditions, node.metadata.creationTimestamp ?? rfc3339(created), now);
  const currentReady = conditionOf(next ?? conditions, 'Ready')?.status ?? 'Unknown';
  if (next !== undefined && currentReady !== observedReady) {
    health = { ...health, readyTransitionTimestamp: now };
  }
  return { health, gracePeriodMs, observedReady, currentReady, conditions: next };
}

/**
 * The conditions of a node whose kubelet stopped posting: each monitored condition that is missing is
 * added as Unknown/NodeStatusNeverUpdated (heartbeat = the node's creation), each that is not Unknown
 * becomes Unknown/NodeStatusUnknown (heartbeat kept, transition now). Undefined when nothing changes.
 */
export function unknownConditions(
  conditions: readonly NodeCondition[],
  creationTimestamp: string,
  now: number,
): NodeCondition[] | undefined {
  const out = conditions.map((c) => ({ ...c }));
  let changed = false;
  for (const type of MONITORED_CONDITIONS) {
    const c = out.find((x) => x.type === type);
    if (c === undefined) {
      out.push({
        type,
        status: 'Unknown',
        reason: REASON_NEVER_UPDATED,
        message: MESSAGE_NEVER_UPDATED,
        lastHeartbeatTime: creationTimestamp,
        lastTransitionTime: rfc3339(now),
      });
      changed = true;
    } else if (c.status !== 'Unknown') {
      c.status = 'Unknown';
      c.reason = REASON_STATUS_UNKNOWN;
      c.message = MESSAGE_STATUS_UNKNOWN;
      c.lastTransitionTime = rfc3339(now);
      changed = true;
    }
  }
  return changed ? out : undefined;
}

/** Every node's probe timestamp reset to now (upstream does this when a full disruption ends). */
export const resetProbe = (h: NodeHealth, now: number): NodeHealth => ({ ...h, probeTimestamp: now });
