// Service validation (ValidateService / ValidateServiceUpdate in pkg/apis/core/validation), rule for
// rule and in upstream's order, so that several errors aggregate in the same order kubectl shows.
// The spec rules are shared with ServiceGrid, whose spec.template is a ServiceSpec.
import {
  FieldPath,
  type FieldError,
  duplicate,
  forbidden,
  invalid,
  notSupported,
  required,
} from '../field-errors.js';
import {
  isValidPortName,
  isValidPortNum,
  validateDNS1123Label,
  validateDNS1123Subdomain,
  validateQualifiedName,
} from './formats.js';
import {
  CIDR_MESSAGE,
  ipFamily,
  isDualStackIPs,
  isValidCIDR,
  parseIP,
  validateIP,
  validateNonSpecialIP,
} from './ip.js';
import type { In } from './json.js';
import { validateLabels } from './labels.js';
import { validateTopologyKeys } from './topology-keys.js';

export const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'] as const;
const SESSION_AFFINITIES = ['ClientIP', 'None'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const IP_FAMILIES = ['IPv4', 'IPv6'];
const IP_FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];
const TRAFFIC_POLICIES = ['Cluster', 'Local'];
const TRAFFIC_DISTRIBUTIONS = ['PreferClose', 'PreferSameZone', 'PreferSameNode'];
const MAX_CLIENT_IP_AFFINITY_SECONDS = 86400;
const TOPOLOGY_MODE = 'service.kubernetes.io/topology-mode';
const TOPOLOGY_HINTS = 'service.kubernetes.io/topology-aware-hints';
const LB_SOURCE_RANGES = 'service.beta.kubernetes.io/load-balancer-source-ranges';

/** The fields of a ServiceSpec that several rules look at, read once. */
export interface ServiceView {
  readonly type: string;
  readonly clusterIP: string;
  readonly clusterIPs: string[];
  readonly ipFamilies: string[];
  readonly ipFamilyPolicy: string | undefined;
  readonly externalIPs: string[];
  readonly externalTrafficPolicy: string;
  readonly healthCheckNodePort: number;
  readonly loadBalancerClass: string | undefined;
}

export function serviceView(spec: In): ServiceView {
  return {
    type: spec.s('type'),
    clusterIP: spec.s('clusterIP'),
    clusterIPs: spec.strs('clusterIPs') ?? [],
    ipFamilies: spec.strs('ipFamilies') ?? [],
    ipFamilyPolicy: spec.str('ipFamilyPolicy'),
    externalIPs: spec.strs('externalIPs') ?? [],
    externalTrafficPolicy: spec.s('externalTrafficPolicy'),
    healthCheckNodePort: spec.int('healthCheckNodePort') ?? 0,
    loadBalancerClass: spec.str('loadBalancerClass'),
  };
}

export const isHeadless = (s: Pick<ServiceView, 'clusterIPs'>): boolean =>
  s.clusterIPs.length === 1 && s.clusterIPs[0] === 'None';

/** NodePort, LoadBalancer, or ClusterIP with external IPs (apiservice.ExternallyAccessible). */
export const externallyAccessible = (s: Pick<ServiceView, 'type' | 'externalIPs'>): boolean =>
  s.type === 'LoadBalancer' || s.type === 'NodePort' || (s.type === 'ClusterIP' && s.externalIPs.length > 0);

const needsHealthCheck = (s: ServiceView): boolean =>
  s.type === 'LoadBalancer' && s.externalTrafficPolicy === 'Local';

/** A ServicePort's targetPort as Go's IntOrString reads it: absent is the integer 0. */
function validateTargetPort(p: FieldPath, v: number | string | undefined): FieldError[] {
  if (typeof v === 'string') return isValidPortName(v).map((m) => invalid(p, v, m));
  const n = v ?? 0;
  return isValidPortNum(n).map((m) => invalid(p, n, m));
}

export function validateServicePorts(spec: In, errs: FieldError[]): void {
  const ports = spec.objs('ports');
  const names = new Set<string>();
  for (const port of ports) {
    const name = port.s('name');
    if (ports.length > 1 && name === '') {
      errs.push(required(port.p('name'), ''));
    } else if (name !== '') {
      errs.push(...validateDNS1123Label(port.p('name'), name));
      if (names.has(name)) errs.push(duplicate(port.p('name'), name));
      else names.add(name);
    }
    const num = port.int('port') ?? 0;
    for (const m of isValidPortNum(num)) errs.push(invalid(port.p('port'), num, m));
    const protocol = port.s('protocol');
    if (protocol === '') errs.push(required(port.p('protocol'), ''));
    else if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(port.p('protocol'), protocol, PROTOCOLS));
    errs.push(...validateTargetPort(port.p('targetPort'), port.intOrStr('targetPort')));
    const appProtocol = port.str('appProtocol');
    if (appProtocol !== undefined) errs.push(...validateQualifiedName(port.p('appProtocol'), appProtocol));
  }
}

/** ValidateServiceClusterIPsRelatedFields: clusterIP(s), ipFamilies and ipFamilyPolicy. */
export function validateClusterIPsRelated(s: ServiceView, specPath: FieldPath): FieldError[] {
  if (s.type === 'ExternalName') return [];
  const errs: FieldError[] = [];
  const ipsPath = specPath.child('clusterIPs');
  const famPath = specPath.child('ipFamilies');
  if (s.clusterIP !== '') {
    if (s.clusterIPs.length === 0) errs.push(required(ipsPath, ''));
    else if (s.clusterIPs[0] !== s.clusterIP)
      errs.push(invalid(ipsPath, s.clusterIPs, 'first value must match `clusterIP`'));
  } else if (s.clusterIPs.length !== 0) {
    errs.push(invalid(ipsPath, s.clusterIPs, 'must be empty when `clusterIP` is not specified'));
  }
  const seen = new Set<string>();
  s.ipFamilies.forEach((fam, i) => {
    if (!IP_FAMILIES.includes(fam)) errs.push(notSupported(famPath.index(i), fam, IP_FAMILIES));
    if (seen.has(fam)) errs.push(duplicate(famPath.index(i), fam));
    seen.add(fam);
  });
  if (s.ipFamilyPolicy !== undefined && !IP_FAMILY_POLICIES.includes(s.ipFamilyPolicy)) {
    errs.push(notSupported(specPath.child('ipFamilyPolicy'), s.ipFamilyPolicy, IP_FAMILY_POLICIES));
  }
  let badIPs = false;
  s.clusterIPs.forEach((ip, i) => {
    if (i === 0 && ip === 'None') {
      if (s.clusterIPs.length > 1) {
        badIPs = true;
        errs.push(invalid(ipsPath, s.clusterIPs, "'None' must be the first and only value"));
      }
      return;
    }
    const e = validateIP(ipsPath.index(i), ip);
    if (e.length > 0) badIPs = true;
    errs.push(...e);
  });
  if (s.clusterIPs.length > 2) errs.push(invalid(ipsPath, s.clusterIPs, 'may only hold up to 2 values'));
  if (badIPs) return errs;
  if (s.clusterIPs.length > 1 && !isDualStackIPs(s.clusterIPs)) {
    errs.push(invalid(ipsPath, s.clusterIPs, 'may specify no more than one IP for each IP family'));
  }
  if (!isHeadless(s) && s.clusterIPs.length > 0 && s.ipFamilies.length > 0) {
    s.clusterIPs.forEach((ip, i) => {
      if (i > s.ipFamilies.length - 1) return;
      const fam = ipFamily(ip);
      if (s.ipFamilies[i] === 'IPv4' && fam === 'IPv6') {
        errs.push(
          invalid(ipsPath.index(i), ip, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``),
        );
      }
      if (s.ipFamilies[i] === 'IPv6' && fam !== 'IPv6') {
        errs.push(
          invalid(ipsPath.index(i), ip, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``),
        );
      }
    });
  }
  return errs;
}

export interface ServiceSpecOptions {
  /** `metadata.annotations` of the Service (topology and source-range annotations); Services only. */
  readonly annotations?: ReadonlyMap<string, string>;
  /**
   * Upstream reports a missing allocateLoadBalancerNodePorts at the bare path
   * `allocateLoadBalancerNodePorts` (no `spec.`); Services keep that quirk, templates do not.
   */
  readonly rootQuirks?: boolean;
  /** The stored object's spec, on update (loadBalancerClass may not change while LoadBalancer). */
  readonly old?: ServiceView;
}

/** Every create-time rule of a ServiceSpec, at `specPath` (`spec` or `spec.template`). */
export function validateServiceSpec(
  spec: In,
  specPath: FieldPath,
  opts: ServiceSpecOptions = {},
): FieldError[] {
  const errs: FieldError[] = [];
  const s = serviceView(spec);
  const headless = isHeadless(s);

  const ann = opts.annotations;
  if (ann !== undefined) {
    const mode = ann.get(TOPOLOGY_MODE);
    const hints = ann.get(TOPOLOGY_HINTS);
    if (mode !== undefined && hints !== undefined && mode !== hints) {
      errs.push(
        invalid(
          FieldPath.root('metadata', 'annotations').key(TOPOLOGY_MODE),
          mode,
          `must match annotations[${TOPOLOGY_HINTS}] when both are specified`,
        ),
      );
    }
  }

  const ports = spec.arr('ports') ?? [];
  if (ports.length === 0 && !headless && s.type !== 'ExternalName')
    errs.push(required(specPath.child('ports'), ''));
  switch (s.type) {
    case 'LoadBalancer':
    case 'NodePort':
      if (headless) {
        errs.push(
          invalid(
            specPath.child('clusterIPs').index(0),
            s.clusterIPs[0],
            `may not be set to 'None' for ${s.type} services`,
          ),
        );
      }
      break;
    case 'ExternalName': {
      if (s.clusterIPs.length > 0)
        errs.push(forbidden(specPath.child('clusterIPs'), 'may not be set for ExternalName services'));
      if (s.ipFamilies.length > 0)
        errs.push(forbidden(specPath.child('ipFamilies'), 'may not be set for ExternalName services'));
      if (s.ipFamilyPolicy !== undefined) {
        errs.push(forbidden(specPath.child('ipFamilyPolicy'), 'may not be set for ExternalName services'));
      }
      const externalName = spec.s('externalName');
      const cname = externalName.endsWith('.') ? externalName.slice(0, -1) : externalName;
      if (cname.length > 0) errs.push(...validateDNS1123Subdomain(specPath.child('externalName'), cname));
      else errs.push(required(specPath.child('externalName'), ''));
      break;
    }
  }

  validateServicePorts(spec, errs);

  const selector = spec.strMap('selector');
  if (selector !== undefined) errs.push(...validateLabels(selector, specPath.child('selector')));

  const affinity = spec.s('sessionAffinity');
  const affinityPath = specPath.child('sessionAffinity');
  if (affinity === '') errs.push(required(affinityPath, ''));
  else if (!SESSION_AFFINITIES.includes(affinity))
    errs.push(notSupported(affinityPath, affinity, SESSION_AFFINITIES));
  const configPath = specPath.child('sessionAffinityConfig');
  if (affinity === 'ClientIP') {
    const why = 'when session affinity type is ClientIP';
    const config = spec.obj('sessionAffinityConfig');
    const clientIP = config?.obj('clientIP');
    const timeout = clientIP?.int('timeoutSeconds');
    if (config === undefined) errs.push(required(configPath, why));
    else if (clientIP === undefined) errs.push(required(configPath.child('clientIP'), why));
    else if (timeout === undefined) errs.push(required(configPath.child('clientIP', 'timeoutSeconds'), why));
    else if (timeout <= 0 || timeout > MAX_CLIENT_IP_AFFINITY_SECONDS) {
      errs.push(
        invalid(
          configPath.child('clientIP', 'timeoutSeconds'),
          timeout,
          `must be greater than 0 and less than ${MAX_CLIENT_IP_AFFINITY_SECONDS}`,
        ),
      );
    }
  } else if (affinity === 'None' && spec.has('sessionAffinityConfig')) {
    errs.push(forbidden(configPath, 'must not be set when session affinity is None'));
  }

  errs.push(...validateClusterIPsRelated(s, specPath));

  s.externalIPs.forEach((ip, i) => {
    const p = specPath.child('externalIPs').index(i);
    const e = validateIP(p, ip);
    errs.push(...(e.length > 0 ? e : validateNonSpecialIP(p, ip)));
  });

  if (s.type === '') errs.push(required(specPath.child('type'), ''));
  else if (!(SERVICE_TYPES as readonly string[]).includes(s.type)) {
    errs.push(notSupported(specPath.child('type'), s.type, SERVICE_TYPES));
  }

  const portItems = spec.objs('ports');
  if (s.type === 'ClusterIP') {
    for (const port of portItems) {
      if ((port.int('nodePort') ?? 0) !== 0) {
        errs.push(forbidden(port.p('nodePort'), "may not be used when `type` is 'ClusterIP'"));
      }
    }
  }
  const nodePorts = new Set<string>();
  for (const port of portItems) {
    const nodePort = port.int('nodePort') ?? 0;
    if (nodePort === 0) continue;
    const key = `${port.s('protocol')}/${nodePort}`;
    if (nodePorts.has(key)) errs.push(duplicate(port.p('nodePort'), nodePort));
    nodePorts.add(key);
  }
  const seenPorts = new Set<string>();
  for (const port of portItems) {
    const protocol = port.s('protocol');
    const num = port.int('port') ?? 0;
    const key = `${protocol}/${num}`;
    if (seenPorts.has(key)) errs.push(duplicate(port.path, { protocol, port: num }));
    seenPorts.add(key);
  }

  const ranges = spec.strs('loadBalancerSourceRanges') ?? [];
  if (ranges.length > 0) {
    const p = specPath.child('LoadBalancerSourceRanges');
    if (s.type !== 'LoadBalancer') errs.push(forbidden(p, "may only be used when `type` is 'LoadBalancer'"));
    ranges.forEach((r, i) => {
      const v = r.trim();
      if (!isValidCIDR(v)) errs.push(invalid(p.index(i), v, CIDR_MESSAGE));
    });
  } else if (ann?.has(LB_SOURCE_RANGES) === true) {
    const p = FieldPath.root('metadata', 'annotations').key(LB_SOURCE_RANGES);
    if (s.type !== 'LoadBalancer') errs.push(forbidden(p, "may only be used when `type` is 'LoadBalancer'"));
    const val = (ann.get(LB_SOURCE_RANGES) ?? '').trim();
    if (val !== '') {
      for (const part of val.split(',')) {
        const v = part.trim();
        if (!isValidCIDR(v)) errs.push(invalid(p, v, CIDR_MESSAGE));
      }
    }
  }

  const allocate = spec.bool('allocateLoadBalancerNodePorts');
  if (allocate !== undefined && s.type !== 'LoadBalancer') {
    errs.push(
      forbidden(
        specPath.child('allocateLoadBalancerNodePorts'),
        "may only be used when `type` is 'LoadBalancer'",
      ),
    );
  }
  if (s.type === 'LoadBalancer' && allocate === undefined) {
    const p =
      opts.rootQuirks === true
        ? FieldPath.root('allocateLoadBalancerNodePorts')
        : specPath.child('allocateLoadBalancerNodePorts');
    errs.push(required(p, ''));
  }

  // loadBalancerClass
  const classPath = specPath.child('loadBalancerClass');
  if (opts.old !== undefined && opts.old.type === 'LoadBalancer' && s.type === 'LoadBalancer') {
    if (opts.old.loadBalancerClass !== s.loadBalancerClass) {
      errs.push(invalid(classPath, s.loadBalancerClass ?? null, 'may not change once set'));
    }
  }
  if (s.loadBalancerClass !== undefined) {
    if (s.type === 'LoadBalancer') errs.push(...validateQualifiedName(classPath, s.loadBalancerClass));
    else errs.push(forbidden(classPath, "may only be used when `type` is 'LoadBalancer'"));
  }

  // externalTrafficPolicy and healthCheckNodePort
  const etpPath = specPath.child('externalTrafficPolicy');
  if (!externallyAccessible(s)) {
    if (s.externalTrafficPolicy !== '') {
      errs.push(
        invalid(etpPath, s.externalTrafficPolicy, 'may only be set for externally-accessible services'),
      );
    }
  } else if (s.externalTrafficPolicy === '') {
    errs.push(required(etpPath, ''));
  } else if (!TRAFFIC_POLICIES.includes(s.externalTrafficPolicy)) {
    errs.push(notSupported(etpPath, s.externalTrafficPolicy, TRAFFIC_POLICIES));
  }
  const hcPath = specPath.child('healthCheckNodePort');
  if (!needsHealthCheck(s)) {
    if (s.healthCheckNodePort !== 0) {
      errs.push(
        invalid(
          hcPath,
          s.healthCheckNodePort,
          "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
        ),
      );
    }
  } else if (s.healthCheckNodePort !== 0) {
    // Upstream also requires it here, but the allocator fills it; until then 0 is accepted.
    for (const m of isValidPortNum(s.healthCheckNodePort))
      errs.push(invalid(hcPath, s.healthCheckNodePort, m));
  }

  // topologyKeys (1.17–1.21; still used by ServiceGrids), after the external traffic fields as upstream.
  // A non-string entry is reported by strs() alone (kube refuses it while decoding).
  const topologyKeys = spec.strs('topologyKeys') ?? [];
  if ((spec.arr('topologyKeys') ?? []).every((k) => typeof k === 'string')) {
    errs.push(...validateTopologyKeys(topologyKeys, specPath.child('topologyKeys'), s.externalTrafficPolicy));
  }

  // internalTrafficPolicy
  const itp = spec.str('internalTrafficPolicy');
  const itpPath = specPath.child('internalTrafficPolicy');
  if (itp === undefined) {
    if (s.type === 'ClusterIP' || s.type === 'NodePort' || s.type === 'LoadBalancer')
      errs.push(required(itpPath, ''));
  } else if (!TRAFFIC_POLICIES.includes(itp)) {
    errs.push(notSupported(itpPath, itp, TRAFFIC_POLICIES));
  }

  // trafficDistribution
  const td = spec.str('trafficDistribution');
  if (td !== undefined && !TRAFFIC_DISTRIBUTIONS.includes(td)) {
    errs.push(notSupported(specPath.child('trafficDistribution'), td, TRAFFIC_DISTRIBUTIONS));
  }
  return errs;
}

/** validateUpgradeDowngradeClusterIPs: clusterIPs may be added or released, never changed. */
function validateClusterIPsUpdate(s: ServiceView, old: ServiceView, specPath: FieldPath): FieldError[] {
  if (s.type === 'ExternalName' || old.type === 'ExternalName') return [];
  if (isHeadless(s) && isHeadless(old)) return [];
  const errs: FieldError[] = [];
  const ipsPath = specPath.child('clusterIPs');
  const [n, o] = [s.clusterIPs, old.clusterIPs];
  if (n.length === o.length) {
    o.forEach((ip, i) => {
      if (ip !== n[i]) errs.push(invalid(ipsPath.index(i), n, 'may not change once set'));
    });
  } else if (o.length > n.length) {
    if (n.length === 0) errs.push(invalid(ipsPath.index(0), n, 'primary clusterIP can not be unset'));
    if (o.length > 0 && n.length > 0 && n[0] !== o[0])
      errs.push(invalid(ipsPath.index(0), n, 'may not change once set'));
    if (n.length === 1 && s.ipFamilyPolicy !== 'SingleStack') {
      errs.push(
        invalid(
          specPath.child('ipFamilyPolicy'),
          s.ipFamilyPolicy ?? null,
          "must be set to 'SingleStack' when releasing the secondary clusterIP",
        ),
      );
    }
  } else if (o.length > 0 && n[0] !== o[0]) {
    errs.push(invalid(ipsPath.index(0), n, 'may not change once set'));
  }
  return errs;
}

/** validateUpgradeDowngradeIPFamilies. */
function validateIPFamiliesUpdate(s: ServiceView, old: ServiceView, specPath: FieldPath): FieldError[] {
  if (s.type === 'ExternalName' || old.type === 'ExternalName') return [];
  if (isHeadless(s) !== isHeadless(old) || isHeadless(s)) return [];
  const errs: FieldError[] = [];
  const famPath = specPath.child('ipFamilies');
  const [n, o] = [s.ipFamilies, old.ipFamilies];
  if (n.length === o.length) {
    o.forEach((fam, i) => {
      if (fam !== n[i]) errs.push(invalid(famPath.index(0), n, 'may not change once set'));
    });
  } else if (o.length > n.length) {
    if (s.clusterIPs.length === 0)
      errs.push(invalid(famPath.index(0), n, 'primary ipFamily can not be unset'));
    if (n.length > 0 && n[0] !== o[0])
      errs.push(invalid(famPath.index(0), s.clusterIPs, 'may not change once set'));
    if (n.length === 1 && s.ipFamilyPolicy !== 'SingleStack') {
      errs.push(
        invalid(
          specPath.child('ipFamilyPolicy'),
          s.ipFamilyPolicy ?? null,
          "must be set to 'SingleStack' when releasing the secondary ipFamily",
        ),
      );
    }
  } else if (o.length > 0 && n.length > 0 && n[0] !== o[0]) {
    errs.push(invalid(famPath.index(0), s.clusterIPs, 'may not change once set'));
  }
  return errs;
}

/** The update-only rules of a ServiceSpec; the caller adds validateServiceSpec(…, { old }). */
export function validateServiceSpecUpdate(spec: In, old: In, specPath: FieldPath): FieldError[] {
  const s = serviceView(spec);
  const o = serviceView(old);
  const errs = [...validateClusterIPsUpdate(s, o, specPath), ...validateIPFamiliesUpdate(s, o, specPath)];
  if (needsHealthCheck(o) && needsHealthCheck(s) && s.healthCheckNodePort !== o.healthCheckNodePort) {
    errs.push(forbidden(specPath.child('healthCheckNodePort'), 'field is immutable'));
  }
  return errs;
}

/** ValidateLoadBalancerStatus (status updates). */
export function validateLoadBalancerStatus(status: In | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const lb = status?.obj('loadBalancer');
  if (lb === undefined) return errs;
  for (const ing of lb.objs('ingress')) {
    const ip = ing.s('ip');
    if (ip !== '') errs.push(...validateIP(ing.p('ip'), ip));
    const ipMode = ing.str('ipMode');
    if (ipMode !== undefined) {
      if (ip === '') errs.push(forbidden(ing.p('ipMode'), 'may not be specified when `ip` is not set'));
      else if (!['Proxy', 'VIP'].includes(ipMode))
        errs.push(notSupported(ing.p('ipMode'), ipMode, ['Proxy', 'VIP']));
    }
    const hostname = ing.s('hostname');
    if (hostname !== '') {
      errs.push(...validateDNS1123Subdomain(ing.p('hostname'), hostname));
      if (parseIP(hostname) !== undefined)
        errs.push(invalid(ing.p('hostname'), hostname, 'must be a DNS name, not an IP address'));
    }
  }
  return errs;
}
