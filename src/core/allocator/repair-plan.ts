// The repair plan: a pure function from (what the store records as allocated, what the Services
// use, the leak counters of the previous pass) to (what to record, what to free, which problems to
// report). In behaviour like kube-apiserver's ipallocator/controller/repair.go and
// portallocator/controller/repair.go:
//   - the allocation is rebuilt from the Services alone;
//   - values that are invalid, out of range or used twice are reported (the Services are not changed);
//   - values used but not recorded are recorded ("… is not allocated; repairing");
//   - values recorded but unused are leak candidates and are freed only on the 3rd consecutive pass
//     that sees them (an in-flight create allocates before it writes its Service);
//   - a full range aborts the pass: nothing is written.
// Unlike upstream, a leak counter is dropped once its value is freed or seen in use, so a value that
// leaks again later gets the full three passes again.
import { isAllocatorError } from './errors.js';
import { canonicalIP, parseAddress, type IPFamily } from './cidr.js';
import { IPAllocator, type IPRange } from './ip-allocator.js';
import { PortAllocator, type PortRange } from './port-allocator.js';

export const NUM_REPAIRS_BEFORE_LEAK_CLEANUP = 3;

export interface ServiceRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/** The parts of a Service the repair reads. */
export interface RepairService extends ServiceRef {
  readonly clusterIP?: string;
  readonly clusterIPs?: readonly string[];
  readonly ports?: readonly { readonly nodePort?: number; readonly protocol?: string }[];
  readonly healthCheckNodePort?: number;
}

/** One problem, reported as a Warning Event on the Service and counted in metrics under `metric`. */
export interface RepairProblem {
  readonly service: ServiceRef;
  readonly reason: string;
  readonly action: string;
  readonly message: string;
  readonly metric: 'invalid' | 'repair' | 'duplicate' | 'outOfRange' | 'full' | 'unknown';
}

export interface RepairPlan<V> {
  /** Values in use but not recorded: record them. */
  readonly record: V[];
  /** Values recorded but to be freed now: leaks on their 3rd pass, and values outside every range. */
  readonly free: V[];
  /** Values recorded and unused that stay for now, with their remaining passes. */
  readonly leaks: Map<V, number>;
  readonly problems: RepairProblem[];
  /** Log lines (leak flagging and clean-up), as upstream logs them. */
  readonly logs: string[];
  /** Set when the pass must not write anything (a full range). */
  readonly abort?: string;
}

const ref = (s: RepairService): ServiceRef => ({ namespace: s.namespace, name: s.name, uid: s.uid });

/** kube's IsServiceIPSet: a clusterIP that is neither empty nor "None". */
export const isServiceIPSet = (s: RepairService): boolean =>
  s.clusterIP !== undefined && s.clusterIP !== '' && s.clusterIP !== 'None';

/**
 * Counts down the leftovers (held in the store, used by no Service) as upstream's repair loops do; the logs
 * name a leftover as `what` ("the node port 30080") and say why one cannot be held (`outside`).
 */
function countLeaks<V>(
  leftovers: Iterable<V>,
  previous: ReadonlyMap<V, number>,
  keep: (v: V) => boolean,
  what: string,
  outside: string,
  plan: { free: V[]; leaks: Map<V, number>; logs: string[] },
): void {
  for (const v of leftovers) {
    let count = previous.get(v);
    if (count === undefined) {
      plan.logs.push(`${what} ${String(v)} may have leaked: flagging for later clean up`);
      count = NUM_REPAIRS_BEFORE_LEAK_CLEANUP - 1;
    }
    if (count > 0) {
      if (keep(v)) {
        plan.leaks.set(v, count - 1);
      } else {
        plan.logs.push(`${what} ${String(v)} may have leaked, but can not be allocated: ${outside}`);
        plan.free.push(v);
      }
      continue;
    }
    plan.logs.push(`${what} ${String(v)} appears to have leaked: cleaning up`);
    plan.free.push(v);
  }
}

/** What a repair says, per outcome, about one value a Service uses. */
interface RebuildTexts {
  readonly action: string;
  readonly notAllocated: readonly [reason: string, message: string];
  readonly duplicate: readonly [reason: string, message: string];
  readonly outOfRange: readonly [reason: string, message: string];
  readonly full: readonly [reason: string, message: string, abort: string];
}

/**
 * The step both repairs share: take a value a Service uses in the rebuilt allocator. Taken and
 * recorded → no longer a leak candidate; taken but not recorded → record it; already taken, out of
 * range → report. Returns the abort message when the range is full.
 */
function rebuildValue<V>(
  plan: { record: V[]; problems: RepairProblem[] },
  leftover: Set<V>,
  svc: RepairService,
  value: V,
  allocate: () => void,
  texts: RebuildTexts,
): string | undefined {
  const report = (
    [reason, message]: readonly [string, string, ...string[]],
    metric: RepairProblem['metric'],
  ): void => {
    plan.problems.push({ service: ref(svc), reason, action: texts.action, message, metric });
  };
  try {
    allocate();
    if (leftover.has(value)) leftover.delete(value);
    else {
      report(texts.notAllocated, 'repair');
      plan.record.push(value);
    }
  } catch (err) {
    if (isAllocatorError(err, 'ErrAllocated')) report(texts.duplicate, 'duplicate');
    else if (isAllocatorError(err, 'ErrNotInRange')) report(texts.outOfRange, 'outOfRange');
    else if (isAllocatorError(err, 'ErrFull')) {
      report(texts.full, 'full');
      return texts.full[2];
    } else throw err;
  }
  return undefined;
}

/** A pass that found a full range writes nothing and keeps the previous leak counters. */
const aborted = <P extends { leaks: Map<V, number> }, V>(
  plan: P,
  previousLeaks: ReadonlyMap<V, number>,
  abort: string,
): P & { abort: string } => ({ ...plan, record: [], free: [], leaks: new Map(previousLeaks), abort });

/**
 * The ClusterIP repair plan. `stored` holds recorded addresses in canonical form; `ranges` are the
 * configured ranges (primary first).
 */
export function planClusterIPRepair(
  ranges: readonly IPRange[],
  stored: Iterable<string>,
  services: readonly RepairService[],
  previousLeaks: ReadonlyMap<string, number>,
): RepairPlan<string> & { rebuilt: Map<IPFamily, IPAllocator> } {
  const rebuilt = new Map<IPFamily, IPAllocator>(ranges.map((r) => [r.family, new IPAllocator(r)]));
  const cidrOf = new Map(ranges.map((r) => [r.family, r.spec]));
  const leftover = new Set(stored);
  const plan = {
    record: [] as string[],
    free: [] as string[],
    leaks: new Map<string, number>(),
    problems: [] as RepairProblem[],
    logs: [] as string[],
    rebuilt,
  };
  const report = (s: RepairService, p: Omit<RepairProblem, 'service'>): void => {
    plan.problems.push({ service: ref(s), ...p });
  };
  for (const svc of services) {
    if (!isServiceIPSet(svc)) continue;
    const ips = svc.clusterIPs !== undefined && svc.clusterIPs.length > 0 ? svc.clusterIPs : [svc.clusterIP!];
    for (const raw of ips) {
      const addr = parseAddress(raw);
      if (addr === undefined) {
        report(svc, {
          reason: 'ClusterIPNotValid',
          action: 'ClusterIPValidation',
          message: `Cluster IP ${raw} is not a valid IP; please recreate service`,
          metric: 'invalid',
        });
        continue;
      }
      const alloc = rebuilt.get(addr.family);
      if (alloc === undefined) {
        report(svc, {
          reason: 'ClusterIPNotValid',
          action: 'ClusterIPValidation',
          message: `Cluster IP ${raw}(${addr.family}) is of ip family that is no longer configured on cluster; please recreate service`,
          metric: 'invalid',
        });
        continue;
      }
      const ip = canonicalIP(raw)!;
      const cidr = cidrOf.get(addr.family)!;
      const at = `Cluster IP [${addr.family}]:${raw}`;
      const abort = rebuildValue(plan, leftover, svc, ip, () => alloc.allocate(ip), {
        action: 'ClusterIPAllocation',
        notAllocated: ['ClusterIPNotAllocated', `${at} is not allocated; repairing`],
        duplicate: [
          'ClusterIPAlreadyAllocated',
          `${at} was assigned to multiple services; please recreate service`,
        ],
        outOfRange: [
          'ClusterIPOutOfRange',
          `${at} is not within the service CIDR ${cidr}; please recreate service`,
        ],
        full: [
          'ServiceCIDRFull',
          `Service CIDR ${cidr} is full; you must widen the CIDR in order to create new services for ${at}`,
          `the service CIDR ${cidr} is full; you must widen the CIDR in order to create new services for ${at}`,
        ],
      });
      if (abort !== undefined) return aborted(plan, previousLeaks, abort);
    }
  }
  countLeaks(
    leftover,
    previousLeaks,
    (ip) => {
      const alloc = rebuilt.get(parseAddress(ip)?.family ?? 'IPv4');
      if (alloc === undefined || !alloc.contains(ip)) return false;
      alloc.allocate(ip);
      return true;
    },
    'the cluster IP',
    'not in a configured range',
    plan,
  );
  return plan;
}

/**
 * The node ports a Service holds, as upstream's collectServiceNodePorts counts them: a nodePort
 * listed twice for one protocol counts twice (a duplicate), once per port number across protocols;
 * the healthCheckNodePort counts unless it is a nodePort used only by non-TCP ports.
 */
export function collectServiceNodePorts(s: Pick<RepairService, 'ports' | 'healthCheckNodePort'>): number[] {
  const out: number[] = [];
  const protocols = new Map<number, Set<string>>();
  for (const p of s.ports ?? []) {
    const np = p.nodePort ?? 0;
    if (np === 0) continue;
    const proto = p.protocol ?? 'TCP';
    const seen = protocols.get(np);
    if (seen === undefined) {
      protocols.set(np, new Set([proto]));
      out.push(np);
    } else if (seen.has(proto)) {
      out.push(np);
    } else {
      seen.add(proto);
    }
  }
  const hc = s.healthCheckNodePort ?? 0;
  if (hc !== 0) {
    const seen = protocols.get(hc);
    if (seen === undefined || seen.has('TCP')) out.push(hc);
  }
  return out;
}

/** The NodePort repair plan. */
export function planNodePortRepair(
  range: PortRange,
  stored: Iterable<number>,
  services: readonly RepairService[],
  previousLeaks: ReadonlyMap<number, number>,
): RepairPlan<number> & { rebuilt: PortAllocator } {
  const rebuilt = new PortAllocator(range);
  const leftover = new Set(stored);
  const plan = {
    record: [] as number[],
    free: [] as number[],
    leaks: new Map<number, number>(),
    problems: [] as RepairProblem[],
    logs: [] as string[],
    rebuilt,
  };
  for (const svc of services) {
    for (const port of collectServiceNodePorts(svc)) {
      const abort = rebuildValue(plan, leftover, svc, port, () => rebuilt.allocate(port), {
        action: 'PortAllocation',
        notAllocated: ['PortNotAllocated', `Port ${port} is not allocated; repairing`],
        duplicate: [
          'PortAlreadyAllocated',
          `Port ${port} was assigned to multiple services; please recreate service`,
        ],
        outOfRange: [
          'PortOutOfRange',
          `Port ${port} is not within the port range ${rebuilt.spec}; please recreate service`,
        ],
        full: [
          'PortRangeFull',
          `Port range ${rebuilt.spec} is full; you must widen the port range in order to create new services`,
          `the port range ${rebuilt.spec} is full; you must widen the port range in order to create new services`,
        ],
      });
      if (abort !== undefined) return aborted(plan, previousLeaks, abort);
    }
  }
  countLeaks(
    leftover,
    previousLeaks,
    (port) => {
      if (!rebuilt.contains(port)) return false;
      rebuilt.allocate(port);
      return true;
    },
    'the node port',
    'not in the port range',
    plan,
  );
  return plan;
}
