// What a Service write asks of the allocators, as pure functions over the Service spec. In behaviour
// like kube-apiserver's pkg/registry/core/service/storage/alloc.go:
//   - initIPFamilyFields settles ipFamilyPolicy and ipFamilies before validation;
//   - clusterIPRequests / nodePortRequests say which values to take (a specific one, or the next free
//     one of a family), and where each result goes;
//   - heldValues says what a stored Service holds, so that an update releases (after it is stored)
//     exactly what the old object held and the new one does not, and a delete releases everything.
// The I/O shell (src/apiserver/allocation) performs the requests against the persisted allocators.
import { FieldPath, invalid, type FieldError } from '../../api/field-errors.js';
import type { JsonRecord } from '../../api/json.js';
import { In } from '../../api/validation/json.js';
import { validateClusterIPsRelated, serviceView } from '../../api/validation/service.js';
import { canonicalIP, parseAddress, type IPFamily } from './cidr.js';
import { collectServiceNodePorts } from './repair-plan.js';

const SPEC = FieldPath.root('spec');

export interface ClusterFamilies {
  /** The configured families, primary (the default for new Services) first. */
  readonly families: readonly IPFamily[];
}

const otherFamily = (f: IPFamily): IPFamily => (f === 'IPv4' ? 'IPv6' : 'IPv4');
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const strList = (v: unknown): string[] =>
  Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : '')) : [];
const typeOf = (spec: JsonRecord): string => str(spec['type']) || 'ClusterIP';
const ports = (spec: JsonRecord): JsonRecord[] =>
  Array.isArray(spec['ports'])
    ? (spec['ports'] as unknown[]).filter((p): p is JsonRecord => typeof p === 'object' && p !== null)
    : [];
const num = (v: unknown): number => (typeof v === 'number' && Number.isInteger(v) ? v : 0);

export const isHeadlessSpec = (spec: JsonRecord): boolean => {
  const ips = strList(spec['clusterIPs']);
  return ips.length === 1 && ips[0] === 'None';
};
const selectorless = (spec: JsonRecord): boolean => {
  const sel = spec['selector'];
  return typeof sel !== 'object' || sel === null || Object.keys(sel).length === 0;
};
const dualTypes = new Set(['ClusterIP', 'NodePort', 'LoadBalancer']);

/** NeedsHealthCheck: a LoadBalancer with externalTrafficPolicy Local. */
export const needsHealthCheck = (spec: JsonRecord): boolean =>
  typeOf(spec) === 'LoadBalancer' && spec['externalTrafficPolicy'] === 'Local';

/** NodePort always; LoadBalancer unless allocateLoadBalancerNodePorts is false. */
export const shouldAllocateNodePorts = (spec: JsonRecord): boolean =>
  typeOf(spec) === 'NodePort' ||
  (typeOf(spec) === 'LoadBalancer' && spec['allocateLoadBalancerNodePorts'] !== false);

/**
 * Settles spec.ipFamilyPolicy and spec.ipFamilies in place (initIPFamilyFields). Returns the field
 * errors that make the request invalid (HTTP 422); the spec may then be half-settled.
 */
export function initIPFamilyFields(
  spec: JsonRecord,
  oldSpec: JsonRecord | undefined,
  cluster: ClusterFamilies,
): FieldError[] {
  if (typeOf(spec) === 'ExternalName') return [];
  if (
    oldSpec !== undefined &&
    spec['ipFamilyPolicy'] === 'PreferDualStack' &&
    oldSpec['ipFamilyPolicy'] === 'PreferDualStack' &&
    sameList(strList(spec['clusterIPs']), strList(oldSpec['clusterIPs'])) &&
    sameList(strList(spec['ipFamilies']), strList(oldSpec['ipFamilies'])) &&
    typeOf(spec) === typeOf(oldSpec) &&
    dualTypes.has(typeOf(spec))
  ) {
    return []; // a PreferDualStack Service is never upgraded or downgraded behind its back
  }
  const headlessSelectorless = str(spec['clusterIP']) === 'None' && selectorless(spec);
  if (spec['ipFamilyPolicy'] === undefined || spec['ipFamilyPolicy'] === null) {
    if (oldSpec !== undefined && typeof oldSpec['ipFamilyPolicy'] === 'string')
      spec['ipFamilyPolicy'] = oldSpec['ipFamilyPolicy'];
    else spec['ipFamilyPolicy'] = headlessSelectorless ? 'RequireDualStack' : 'SingleStack';
  }
  const typeErrs: FieldError[] = [];
  const loose = validateClusterIPsRelated(serviceView(new In(spec, SPEC, typeErrs)), SPEC);
  if (loose.length > 0 || typeErrs.length > 0) return [...typeErrs, ...loose];

  const policy = str(spec['ipFamilyPolicy']);
  let ips = strList(spec['clusterIPs']);
  let families = strList(spec['ipFamilies']) as IPFamily[];

  // Like upstream, the errors of one stage are reported together (one 422 listing them all).
  const errs: FieldError[] = [];
  if (oldSpec !== undefined) {
    const oldIPs = strList(oldSpec['clusterIPs']);
    const oldFamilies = strList(oldSpec['ipFamilies']);
    if (policy === 'SingleStack') {
      if (sameList(ips, oldIPs) && ips.length > 1) ips = ips.slice(0, 1);
      if (sameList(families, oldFamilies) && families.length > 1) families = families.slice(0, 1);
    } else {
      // An empty list is "not specified", not a reduction.
      if (ips.length > 0 && ips.length < oldIPs.length) {
        errs.push(
          invalid(
            SPEC.child('ipFamilyPolicy'),
            policy,
            "must be 'SingleStack' to release the secondary cluster IP",
          ),
        );
      }
      if (families.length > 0 && families.length < oldFamilies.length) {
        errs.push(
          invalid(
            SPEC.child('ipFamilyPolicy'),
            policy,
            "must be 'SingleStack' to release the secondary IP family",
          ),
        );
      }
    }
  }
  if (policy === 'SingleStack') {
    if (ips.length > 1) {
      errs.push(
        invalid(
          SPEC.child('ipFamilyPolicy'),
          policy,
          "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
        ),
      );
    }
    if (families.length > 1) {
      errs.push(
        invalid(
          SPEC.child('ipFamilyPolicy'),
          policy,
          "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
        ),
      );
    }
  }
  const configured = new Set(cluster.families);
  for (let i = 0; i < ips.length; i++) {
    if (ips[i] === 'None') break;
    const fam = parseAddress(ips[i]!)?.family;
    if (fam === undefined) break;
    // Only an inferred family is checked here; a given one is checked with ipFamilies below.
    if (i < families.length) continue;
    if (!configured.has(fam)) {
      errs.push(invalid(SPEC.child('clusterIPs').index(i), ips, `${fam} is not configured on this cluster`));
    } else families.push(fam);
  }
  if (errs.length > 0) return errs;
  const primary = cluster.families[0] ?? 'IPv4';
  const finish = (): FieldError[] => {
    if (ips.length > 0) spec['clusterIPs'] = ips;
    if (ips.length > 0) spec['clusterIP'] = ips[0];
    spec['ipFamilies'] = families;
    return [];
  };
  if (headlessSelectorless) {
    if (families.length === 0) families.push(primary);
    if (policy !== 'SingleStack' && families.length === 1) families.push(otherFamily(families[0]!));
    return finish();
  }
  if (policy === 'RequireDualStack' && cluster.families.length < 2) {
    errs.push(
      invalid(SPEC.child('ipFamilyPolicy'), policy, 'this cluster is not configured for dual-stack services'),
    );
  }
  for (let i = 0; i < families.length; i++) {
    if (!configured.has(families[i]!)) {
      errs.push(invalid(SPEC.child('ipFamilies').index(i), families[i], 'not configured on this cluster'));
    }
  }
  if (errs.length > 0) return errs;
  if (families.length === 0) families.push(primary);
  if (policy !== 'SingleStack' && families.length === 1 && cluster.families.length === 2) {
    families.push(otherFamily(families[0]!));
  }
  return finish();
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** One value to take: a specific one (`value` set) or the next free one. */
export interface IPRequest {
  readonly family: IPFamily;
  readonly ip?: string;
}

/**
 * The cluster IPs a write must take: for every family in ipFamilies without an IP, the next free
 * address; for every IP the old object did not hold, that IP. Headless and ExternalName take none.
 */
export function clusterIPRequests(spec: JsonRecord, oldSpec: JsonRecord | undefined): IPRequest[] {
  if (typeOf(spec) === 'ExternalName' || isHeadlessSpec(spec)) return [];
  const families = strList(spec['ipFamilies']) as IPFamily[];
  const ips = strList(spec['clusterIPs']);
  const held = new Set(oldSpec === undefined ? [] : heldValues(oldSpec).ips);
  const out: IPRequest[] = [];
  families.forEach((family, i) => {
    const ip = ips[i] ?? '';
    if (ip === '') out.push({ family });
    else if (!held.has(canonicalIP(ip) ?? ip)) out.push({ family, ip });
  });
  return out;
}

/** Writes the taken cluster IPs into the spec: clusterIPs[i] for each family, clusterIP = the first. */
export function assignClusterIPs(spec: JsonRecord, taken: ReadonlyMap<IPFamily, string>): void {
  if (typeOf(spec) === 'ExternalName' || isHeadlessSpec(spec)) return;
  const families = strList(spec['ipFamilies']) as IPFamily[];
  const ips = strList(spec['clusterIPs']);
  const out = families.map((f, i) =>
    ips[i] !== undefined && ips[i] !== '' ? ips[i]! : (taken.get(f) ?? ''),
  );
  spec['clusterIPs'] = out;
  spec['clusterIP'] = out[0] ?? '';
}

/** A node port to take. `field` names where a specific value's error is reported. */
export type PortRequest =
  { readonly kind: 'specific'; readonly port: number; readonly field: string } | { readonly kind: 'next' };

export interface NodePortPlan {
  readonly requests: PortRequest[];
  /** ports[portIndex].nodePort ← the result of requests[request]. */
  readonly assign: { readonly portIndex: number; readonly request: number }[];
  /** healthCheckNodePort ← the result of requests[request]. */
  readonly healthCheck?: number;
  /** A request that cannot be served at all (upstream's plain error "duplicate nodePort: …"). */
  readonly error?: string;
}

/**
 * The node ports a write must take (initNodePorts on create, txnUpdateNodePorts on update). On create,
 * ports that share a port number (53/TCP and 53/UDP) share one node port.
 */
export function nodePortRequests(spec: JsonRecord, oldSpec: JsonRecord | undefined): NodePortPlan {
  const requests: PortRequest[] = [];
  const assign: { portIndex: number; request: number }[] = [];
  const list = ports(spec);
  const allocate = shouldAllocateNodePorts(spec);
  const wantsPorts = typeOf(spec) === 'NodePort' || typeOf(spec) === 'LoadBalancer';
  const oldHeld = new Set(oldSpec === undefined ? [] : collectServiceNodePorts(portView(oldSpec)));
  const field = (i: number): string => SPEC.child('ports').index(i).child('nodePort').toString();
  let error: string | undefined;
  if (wantsPorts && oldSpec === undefined) {
    const byServicePort = new Map<number, number>();
    list.forEach((p, i) => {
      const np = num(p['nodePort']);
      if (np === 0 && !allocate) return;
      const svcPort = num(p['port']);
      const shared = byServicePort.get(svcPort);
      if (shared === undefined) {
        const requested = list.find((q) => num(q['port']) === svcPort && num(q['nodePort']) !== 0);
        const value = requested === undefined ? 0 : num(requested['nodePort']);
        requests.push(value !== 0 ? { kind: 'specific', port: value, field: field(i) } : { kind: 'next' });
        byServicePort.set(svcPort, requests.length - 1);
        assign.push({ portIndex: i, request: requests.length - 1 });
      } else if (np === 0) {
        assign.push({ portIndex: i, request: shared });
      } else {
        const sharedReq = requests[shared]!;
        if (sharedReq.kind === 'specific' && sharedReq.port === np) return;
        requests.push({ kind: 'specific', port: np, field: field(i) });
      }
    });
  } else if (wantsPorts) {
    const taken = new Set<number>();
    const seen = new Set<string>();
    list.forEach((p, i) => {
      const np = num(p['nodePort']);
      if (np === 0 && !allocate) return;
      const proto = str(p['protocol']) || 'TCP';
      if (np !== 0) {
        if (!oldHeld.has(np) && !taken.has(np)) {
          requests.push({ kind: 'specific', port: np, field: field(i) });
          taken.add(np);
        }
        const key = `${proto}/${np}`;
        if (seen.has(key)) error ??= `duplicate nodePort: {${proto} ${np}}`;
        seen.add(key);
      } else {
        requests.push({ kind: 'next' });
        assign.push({ portIndex: i, request: requests.length - 1 });
      }
    });
  }
  let healthCheck: number | undefined;
  if (needsHealthCheck(spec) && (oldSpec === undefined || !needsHealthCheck(oldSpec))) {
    const hc = num(spec['healthCheckNodePort']);
    requests.push(
      hc !== 0
        ? { kind: 'specific', port: hc, field: SPEC.child('healthCheckNodePort').toString() }
        : { kind: 'next' },
    );
    healthCheck = requests.length - 1;
  }
  return {
    requests,
    assign,
    ...(healthCheck === undefined ? {} : { healthCheck }),
    ...(error === undefined ? {} : { error }),
  };
}

/** Writes the taken node ports into the spec. */
export function assignNodePorts(spec: JsonRecord, plan: NodePortPlan, taken: readonly number[]): void {
  const list = ports(spec);
  for (const { portIndex, request } of plan.assign) {
    const port = list[portIndex];
    const value = taken[request];
    if (port !== undefined && value !== undefined) port['nodePort'] = value;
  }
  if (plan.healthCheck !== undefined) {
    const value = taken[plan.healthCheck];
    if (value !== undefined) spec['healthCheckNodePort'] = value;
  }
}

const portView = (
  spec: JsonRecord,
): { ports: { nodePort: number; protocol: string }[]; healthCheckNodePort: number } => ({
  ports: ports(spec).map((p) => ({ nodePort: num(p['nodePort']), protocol: str(p['protocol']) || 'TCP' })),
  healthCheckNodePort: needsHealthCheck(spec) ? num(spec['healthCheckNodePort']) : 0,
});

/** The cluster IPs (canonical) and node ports a stored Service holds. */
export function heldValues(spec: JsonRecord): { ips: string[]; ports: number[] } {
  const ips: string[] = [];
  if (typeOf(spec) !== 'ExternalName') {
    const list = strList(spec['clusterIPs']);
    const all = list.length > 0 ? list : [str(spec['clusterIP'])];
    for (const ip of all) {
      const c = canonicalIP(ip);
      if (c !== undefined) ips.push(c);
    }
  }
  return { ips, ports: [...new Set(collectServiceNodePorts(portView(spec)))] };
}

const shouldHoldNodePorts = (spec: JsonRecord): boolean =>
  typeOf(spec) === 'NodePort' || typeOf(spec) === 'LoadBalancer';

/** What an update lets go of: held by the old object and not by the new one. */
export function releasedByUpdate(oldSpec: JsonRecord, spec: JsonRecord): { ips: string[]; ports: number[] } {
  const now = heldValues(spec);
  const before = heldValues(oldSpec);
  // Leaving NodePort/LoadBalancer lets go of every old node port, whatever the new spec still lists.
  if (!shouldHoldNodePorts(spec)) now.ports = [];
  const ipSet = new Set(now.ips);
  const portSet = new Set(now.ports);
  return {
    ips: before.ips.filter((ip) => !ipSet.has(ip)),
    ports: before.ports.filter((p) => !portSet.has(p)),
  };
}
