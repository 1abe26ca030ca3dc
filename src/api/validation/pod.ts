// Pod and PodTemplateSpec validation: the main rules of ValidatePodSpec (containers, ports, volumes
// and mounts, policies, names, tolerations, DNS), ValidatePodUpdate's "only these fields may change"
// rule and the pod IPs of a status update. Resource quantities, probes, security contexts and
// affinity are not checked yet.
import {
  FieldPath,
  type FieldError,
  duplicate,
  forbidden,
  invalid,
  notFound,
  notSupported,
  required,
} from '../field-errors.js';
import {
  inclusiveRangeError,
  isValidPortNum,
  validateDNS1123Label,
  validateDNS1123Subdomain,
  validatePortName,
  validateQualifiedName,
} from './formats.js';
import { isDualStackIPs, validateIP } from './ip.js';
import { In, jsonEqual } from './json.js';
import { validateLabelName, validateLabels } from './labels.js';
import { isDNS1123Subdomain, isValidLabelValue } from './names.js';
import { validateAnnotations } from './object-meta.js';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const MAX_INT32 = 2147483647;

/** The volume source fields; exactly one must be set. */
const VOLUME_SOURCES = [
  'emptyDir',
  'hostPath',
  'gitRepo',
  'gcePersistentDisk',
  'awsElasticBlockStore',
  'secret',
  'nfs',
  'iscsi',
  'glusterfs',
  'flocker',
  'persistentVolumeClaim',
  'rbd',
  'cinder',
  'cephfs',
  'quobyte',
  'downwardAPI',
  'fc',
  'flexVolume',
  'configMap',
  'azureFile',
  'vsphereVolume',
  'photonPersistentDisk',
  'portworxVolume',
  'azureDisk',
  'storageos',
  'projected',
  'scaleIO',
  'csi',
  'ephemeral',
  'image',
];

export interface PodSpecOptions {
  /** A Pod's own spec (true) or a template in another object (false). */
  readonly isPod: boolean;
}

function validateVolumes(spec: In, errs: FieldError[]): Set<string> {
  const names = new Set<string>();
  for (const vol of spec.objs('volumes')) {
    const el: FieldError[] = [];
    let n = 0;
    for (const src of VOLUME_SOURCES) {
      if (!vol.has(src)) continue;
      if (n > 0) el.push(forbidden(vol.p(src), 'may not specify more than 1 volume type'));
      else n++;
    }
    if (n === 0) el.push(required(vol.path, 'must specify a volume type'));
    const name = vol.s('name');
    if (name === '') el.push(required(vol.p('name'), ''));
    else el.push(...validateDNS1123Label(vol.p('name'), name));
    if (names.has(name)) el.push(duplicate(vol.p('name'), name));
    if (el.length === 0) names.add(name);
    errs.push(...el);
  }
  return names;
}

function validateContainerPorts(ctr: In, errs: FieldError[]): void {
  const names = new Set<string>();
  for (const port of ctr.objs('ports')) {
    const name = port.s('name');
    if (name !== '') {
      const msgs = validatePortName(port.p('name'), name);
      if (msgs.length > 0) errs.push(...msgs);
      else if (names.has(name)) errs.push(duplicate(port.p('name'), name));
      else names.add(name);
    }
    const cp = port.int('containerPort') ?? 0;
    if (cp === 0) errs.push(required(port.p('containerPort'), ''));
    else for (const m of isValidPortNum(cp)) errs.push(invalid(port.p('containerPort'), cp, m));
    const hp = port.int('hostPort') ?? 0;
    if (hp !== 0) for (const m of isValidPortNum(hp)) errs.push(invalid(port.p('hostPort'), hp, m));
    const protocol = port.s('protocol');
    if (protocol === '') errs.push(required(port.p('protocol'), ''));
    else if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(port.p('protocol'), protocol, PROTOCOLS));
  }
}

function validateEnv(ctr: In, errs: FieldError[]): void {
  for (const env of ctr.objs('env')) {
    const name = env.s('name');
    if (name === '') errs.push(required(env.p('name'), ''));
    else if (!/^[\x20-\x3c\x3e-\x7e]+$/.test(name)) {
      errs.push(
        invalid(
          env.p('name'),
          name,
          "a valid environment variable name must consist only of printable ASCII characters other than '='",
        ),
      );
    }
    if (env.s('value') !== '' && env.has('valueFrom')) {
      errs.push(invalid(env.p('valueFrom'), '', 'may not be specified when `value` is not empty'));
    }
  }
}

function validateVolumeMounts(ctr: In, volumes: ReadonlySet<string>, errs: FieldError[]): void {
  const paths = new Set<string>();
  for (const mnt of ctr.objs('volumeMounts')) {
    const name = mnt.s('name');
    if (name === '') errs.push(required(mnt.p('name'), ''));
    else if (!volumes.has(name)) errs.push(notFound(mnt.p('name'), name));
    const mountPath = mnt.s('mountPath');
    if (mountPath === '') errs.push(required(mnt.p('mountPath'), ''));
    if (paths.has(mountPath)) errs.push(invalid(mnt.p('mountPath'), mountPath, 'must be unique'));
    paths.add(mountPath);
  }
}

function validateEnum(c: In, key: string, allowed: readonly string[], errs: FieldError[]): void {
  const v = c.s(key);
  if (v === '') errs.push(required(c.p(key), ''));
  else if (!allowed.includes(v)) errs.push(notSupported(c.p(key), v, allowed));
}

function validateContainerCommon(ctr: In, volumes: ReadonlySet<string>, errs: FieldError[]): void {
  const name = ctr.s('name');
  if (name === '') errs.push(required(ctr.p('name'), ''));
  else errs.push(...validateDNS1123Label(ctr.p('name'), name));
  if (ctr.s('image') === '') errs.push(required(ctr.p('image'), ''));
  validateEnum(ctr, 'terminationMessagePolicy', TERMINATION_MESSAGE_POLICIES, errs);
  validateContainerPorts(ctr, errs);
  validateEnv(ctr, errs);
  validateVolumeMounts(ctr, volumes, errs);
  validateEnum(ctr, 'imagePullPolicy', PULL_POLICIES, errs);
  ctr.obj('resources');
  ctr.obj('securityContext');
}

function validateTaintEffect(p: FieldPath, effect: string, allowEmpty: boolean): FieldError[] {
  if (!allowEmpty && effect === '') return [required(p, '')];
  return TAINT_EFFECTS.includes(effect) ? [] : [notSupported(p, effect, TAINT_EFFECTS)];
}

/** Taints of a Node (validateNodeTaints). */
export function validateTaints(list: In[]): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Map<string, Set<string>>();
  for (const taint of list) {
    const key = taint.s('key');
    const value = taint.s('value');
    const effect = taint.s('effect');
    errs.push(...validateLabelName(key, taint.p('key')));
    const vErrs = isValidLabelValue(value);
    if (vErrs.length > 0) errs.push(invalid(taint.p('value'), value, vErrs.join(';')));
    errs.push(...validateTaintEffect(taint.p('effect'), effect, false));
    const keys = seen.get(effect) ?? new Set<string>();
    if (keys.has(key)) {
      errs.push({
        ...duplicate(taint.path, taint.v),
        detail: 'taints must be unique by key and effect pair',
      });
      continue;
    }
    keys.add(key);
    seen.set(effect, keys);
  }
  return errs;
}

function validateTolerations(spec: In, errs: FieldError[]): void {
  for (const t of spec.objs('tolerations')) {
    const key = t.s('key');
    const operator = t.s('operator');
    const value = t.s('value');
    const effect = t.s('effect');
    if (key !== '') errs.push(...validateLabelName(key, t.p('key')));
    if (key === '' && operator !== 'Exists') {
      errs.push(
        invalid(
          t.p('operator'),
          operator,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (t.has('tolerationSeconds') && effect !== 'NoExecute') {
      errs.push(invalid(t.p('effect'), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    t.int('tolerationSeconds');
    switch (operator) {
      case 'Equal':
      case '': {
        const vErrs = isValidLabelValue(value);
        if (vErrs.length > 0) errs.push(invalid(t.p('operator'), value, vErrs.join(';')));
        break;
      }
      case 'Exists':
        if (value !== '')
          errs.push(invalid(t.p('operator'), t.v, "value must be empty when `operator` is 'Exists'"));
        break;
      default:
        errs.push(notSupported(t.p('operator'), operator, ['Equal', 'Exists']));
    }
    if (effect !== '') errs.push(...validateTaintEffect(t.p('effect'), effect, true));
  }
}

function validateDNSConfig(spec: In, dnsPolicy: string, errs: FieldError[]): void {
  const p = spec.p('dnsConfig');
  const cfg = spec.obj('dnsConfig');
  const nameservers = cfg?.strs('nameservers') ?? [];
  if (dnsPolicy === 'None') {
    if (cfg === undefined) {
      errs.push(required(p, 'must provide `dnsConfig` when `dnsPolicy` is None'));
      return;
    }
    if (nameservers.length === 0) {
      errs.push(
        required(p.child('nameservers'), 'must provide at least one DNS nameserver when `dnsPolicy` is None'),
      );
      return;
    }
  }
  if (cfg === undefined) return;
  if (nameservers.length > 3)
    errs.push(invalid(p.child('nameservers'), nameservers, 'must not have more than 3 nameservers'));
  nameservers.forEach((ns, i) => errs.push(...validateIP(p.child('nameservers').index(i), ns)));
  const searches = cfg.strs('searches') ?? [];
  if (searches.length > 32)
    errs.push(invalid(p.child('searches'), searches, 'must not have more than 32 search paths'));
  if (searches.join(' ').length > 2048) {
    errs.push(
      invalid(
        p.child('searches'),
        searches,
        'must not have more than 2048 characters (including spaces) in the search list',
      ),
    );
  }
  searches.forEach((s, i) => {
    const v = s.endsWith('.') ? s.slice(0, -1) : s;
    errs.push(...validateDNS1123Subdomain(p.child('searches').index(i), v));
  });
  for (const opt of cfg.objs('options'))
    if (opt.s('name') === '') errs.push(required(opt.path, 'must not be empty'));
}

/** Every create-time rule of a PodSpec, at `spec.path` (`spec` or `spec.template.spec`). */
export function validatePodSpec(spec: In, opts: PodSpecOptions): FieldError[] {
  const errs: FieldError[] = [];
  const volumes = validateVolumes(spec, errs);

  const containers = spec.objs('containers');
  const allNames = new Set<string>();
  if (containers.length === 0) {
    errs.push(required(spec.p('containers'), ''));
  } else {
    for (const ctr of containers) {
      validateContainerCommon(ctr, volumes, errs);
      const name = ctr.s('name');
      if (allNames.has(name)) errs.push(duplicate(ctr.p('name'), name));
      else allNames.add(name);
      if (ctr.has('restartPolicy'))
        errs.push(forbidden(ctr.p('restartPolicy'), 'may not be set for non-init containers'));
    }
  }
  for (const ctr of spec.objs('initContainers')) {
    validateContainerCommon(ctr, volumes, errs);
    const name = ctr.s('name');
    if (allNames.has(name)) errs.push(duplicate(ctr.p('name'), name));
    else allNames.add(name);
    const rp = ctr.str('restartPolicy');
    if (rp !== undefined && rp !== 'Always') errs.push(notSupported(ctr.p('restartPolicy'), rp, ['Always']));
  }
  if ((spec.arr('ephemeralContainers') ?? []).length > 0) {
    errs.push(
      opts.isPod
        ? forbidden(spec.p('ephemeralContainers'), 'cannot be set on create')
        : forbidden(spec.p('ephemeralContainers'), 'ephemeral containers not allowed in pod template'),
    );
  }

  if (spec.bool('hostNetwork') === true) {
    for (const ctr of containers) {
      for (const port of ctr.objs('ports')) {
        const hp = port.int('hostPort') ?? 0;
        const cp = port.int('containerPort') ?? 0;
        if ((opts.isPod || hp !== 0) && hp !== cp) {
          errs.push(invalid(port.p('hostPort'), hp, 'must match `containerPort` when `hostNetwork` is true'));
        }
      }
    }
  }

  validateEnum(spec, 'restartPolicy', RESTART_POLICIES, errs);
  const dnsPolicy = spec.s('dnsPolicy');
  validateEnum(spec, 'dnsPolicy', DNS_POLICIES, errs);
  errs.push(...validateLabels(spec.strMap('nodeSelector'), spec.p('nodeSelector')));
  spec.obj('securityContext');
  spec.obj('affinity');
  validateDNSConfig(spec, dnsPolicy, errs);
  spec.objs('readinessGates').forEach((g) => {
    errs.push(...validateQualifiedName(g.p('conditionType'), g.s('conditionType')));
  });

  for (const key of ['serviceAccountName', 'nodeName', 'priorityClassName'] as const) {
    const v = spec.s(key);
    if (v !== '') for (const m of isDNS1123Subdomain(v)) errs.push(invalid(spec.p(key), v, m));
  }
  const ads = spec.int('activeDeadlineSeconds');
  if (ads !== undefined && (ads < 1 || ads > MAX_INT32)) {
    errs.push(invalid(spec.p('activeDeadlineSeconds'), ads, inclusiveRangeError(1, MAX_INT32)));
  }
  for (const key of ['hostname', 'subdomain'] as const) {
    const v = spec.s(key);
    if (v !== '') errs.push(...validateDNS1123Label(spec.p(key), v));
  }
  validateTolerations(spec, errs);
  spec.int('terminationGracePeriodSeconds');
  const gates = new Set<string>();
  spec.objs('schedulingGates').forEach((g, i) => {
    const name = g.s('name');
    const gp = spec.p('schedulingGates').index(i);
    errs.push(...validateQualifiedName(gp, name));
    if (gates.has(name)) errs.push(duplicate(gp, name));
    gates.add(name);
  });
  return errs;
}

/** A PodTemplateSpec at `p` (ValidatePodTemplateSpec): labels and annotations at `<p>.labels`. */
export function validatePodTemplateSpec(template: In, errs: FieldError[]): void {
  const meta = template.obj('metadata');
  // Upstream reports template label and annotation errors at `<template>.labels`, not `.metadata.labels`.
  errs.push(...validateLabels(meta?.strMap('labels'), template.p('labels')));
  errs.push(...validateAnnotations(meta?.strMap('annotations'), template.p('annotations')));
  const spec = template.obj('spec') ?? new In({}, template.p('spec'), errs);
  errs.push(...validatePodSpec(spec, { isPod: false }));
}

const UPDATABLE =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

/** ValidatePodUpdate's spec rule: only images, activeDeadlineSeconds and added tolerations may change. */
export function validatePodSpecUpdate(spec: unknown, oldSpec: unknown): FieldError[] {
  const errs: FieldError[] = [];
  const n = In.at(spec, FieldPath.root('spec'), errs) ?? new In({}, FieldPath.root('spec'), errs);
  const o = In.at(oldSpec, FieldPath.root('spec'), []) ?? new In({}, FieldPath.root('spec'), []);
  // Mask the mutable fields of the new spec with the old values, then compare.
  const masked: Record<string, unknown> = { ...n.v };
  for (const list of ['containers', 'initContainers'] as const) {
    const nl = n.arr(list);
    const ol = o.arr(list);
    if (nl !== undefined && ol !== undefined && nl.length === ol.length) {
      masked[list] = nl.map((c, i) => {
        const oc = ol[i];
        return typeof c === 'object' &&
          c !== null &&
          !Array.isArray(c) &&
          typeof oc === 'object' &&
          oc !== null &&
          !Array.isArray(oc)
          ? { ...c, image: (oc as Record<string, unknown>)['image'] }
          : c;
      });
    }
  }
  masked['activeDeadlineSeconds'] = o.raw('activeDeadlineSeconds');
  const oldTolerations = o.arr('tolerations') ?? [];
  const newTolerations = n.arr('tolerations') ?? [];
  if (oldTolerations.every((t) => newTolerations.some((x) => jsonEqual(x, t)))) {
    masked['tolerations'] = o.raw('tolerations');
  }
  const oldGrace = o.int('terminationGracePeriodSeconds');
  if (oldGrace !== undefined && oldGrace < 0 && n.int('terminationGracePeriodSeconds') === 1) {
    masked['terminationGracePeriodSeconds'] = oldGrace;
  }
  const oldGates = o.arr('schedulingGates') ?? [];
  const newGates = n.arr('schedulingGates') ?? [];
  if (newGates.every((g) => oldGates.some((x) => jsonEqual(x, g))))
    masked['schedulingGates'] = o.raw('schedulingGates');
  const strip = (v: Record<string, unknown>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined && x !== null));
  if (!jsonEqual(strip(masked), strip(o.v))) errs.push(forbidden('spec', UPDATABLE));
  const ads = n.int('activeDeadlineSeconds');
  if (ads !== undefined && (ads < 1 || ads > MAX_INT32)) {
    errs.push(invalid('spec.activeDeadlineSeconds', ads, inclusiveRangeError(1, MAX_INT32)));
  }
  return errs;
}

/** Pod IPs and host IPs of a status update (validatePodIPs / validateHostIPs). */
export function validatePodStatus(status: In | undefined): FieldError[] {
  const errs: FieldError[] = [];
  if (status === undefined) return errs;
  for (const [key, one] of [
    ['podIPs', 'podIP'],
    ['hostIPs', 'hostIP'],
  ] as const) {
    const single = status.s(one);
    if (single !== '') errs.push(...validateIP(status.p(one), single));
    const listPath = status.p(key);
    const items = status.objs(key);
    const ips = items.map((x) => x.s('ip'));
    ips.forEach((ip, i) => errs.push(...validateIP(listPath.index(i), ip)));
    if (ips.length > 1) {
      if (!isDualStackIPs(ips) || ips.length > 2) {
        errs.push(invalid(listPath, status.raw(key), 'may specify no more than one IP for each IP family'));
      }
      const seen = new Set<string>();
      items.forEach((item, i) => {
        const ip = ips[i]!;
        if (seen.has(ip)) errs.push(duplicate(listPath.index(i), item.v));
        seen.add(ip);
      });
    }
  }
  return errs;
}
