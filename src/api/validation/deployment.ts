// Deployment validation (pkg/apis/apps/validation ValidateDeploymentSpec / ...Update / ...Status).
// The spec rules are shared with DeploymentGrid, whose spec.template is a DeploymentSpec.
import { FieldPath, type FieldError, forbidden, invalid, notSupported, required } from '../field-errors.js';
import { isValidPercent } from './formats.js';
import { In, isObj, jsonEqual, mapValue } from './json.js';
import { selectorIsEmpty, selectorMatches, validateLabelSelector } from './labels.js';
import { validatePodTemplateSpec } from './pod.js';

const NONNEG = 'must be greater than or equal to 0';

export function nonNegative(p: FieldPath, v: number | undefined, errs: FieldError[]): void {
  if (v !== undefined && v < 0) errs.push(invalid(p, v, NONNEG));
}

/** getIntOrPercentValue: a percentage's number, an integer, or 0. */
function intOrPercentValue(v: number | string | undefined): number {
  if (typeof v === 'number') return v;
  if (v === undefined) return 0;
  if (isValidPercent(v).length === 0) return Number(v.slice(0, -1));
  return /^[+-]?\d+$/.test(v) ? Number(v) : 0;
}

function validatePositiveIntOrPercent(
  p: FieldPath,
  v: number | string | undefined,
  errs: FieldError[],
): void {
  if (typeof v === 'string') for (const m of isValidPercent(v)) errs.push(invalid(p, v, m));
  else nonNegative(p, v ?? 0, errs);
}

function validateStrategy(spec: In, errs: FieldError[]): void {
  const strategy = spec.obj('strategy') ?? new In({}, spec.p('strategy'), errs);
  const type = strategy.s('type');
  const ru = strategy.obj('rollingUpdate');
  switch (type) {
    case 'Recreate':
      if (ru !== undefined) {
        errs.push(
          forbidden(strategy.p('rollingUpdate'), "may not be specified when strategy `type` is 'Recreate'"),
        );
      }
      break;
    case 'RollingUpdate': {
      if (ru === undefined) {
        errs.push(required(strategy.p('rollingUpdate'), 'this should be defaulted and never be nil'));
        break;
      }
      const maxUnavailable = ru.intOrStr('maxUnavailable');
      const maxSurge = ru.intOrStr('maxSurge');
      validatePositiveIntOrPercent(ru.p('maxUnavailable'), maxUnavailable, errs);
      validatePositiveIntOrPercent(ru.p('maxSurge'), maxSurge, errs);
      if (intOrPercentValue(maxUnavailable) === 0 && intOrPercentValue(maxSurge) === 0) {
        errs.push(invalid(ru.p('maxUnavailable'), maxUnavailable ?? 0, 'may not be 0 when `maxSurge` is 0'));
      }
      if (typeof maxUnavailable === 'string' && isValidPercent(maxUnavailable).length === 0) {
        if (intOrPercentValue(maxUnavailable) > 100) {
          errs.push(invalid(ru.p('maxUnavailable'), maxUnavailable, 'must not be greater than 100%'));
        }
      }
      break;
    }
    default:
      errs.push(notSupported(strategy.path, strategy.v, ['Recreate', 'RollingUpdate']));
  }
}

/** Every rule of a DeploymentSpec at `spec.path` (`spec` or `spec.template`). */
export function validateDeploymentSpec(spec: In): FieldError[] {
  const errs: FieldError[] = [];
  const replicas = spec.int('replicas') ?? 0;
  nonNegative(spec.p('replicas'), replicas, errs);
  validateSelectorAndTemplate(spec, errs);
  validateStrategy(spec, errs);
  const minReady = spec.int('minReadySeconds') ?? 0;
  nonNegative(spec.p('minReadySeconds'), minReady, errs);
  nonNegative(spec.p('revisionHistoryLimit'), spec.int('revisionHistoryLimit'), errs);
  const pds = spec.int('progressDeadlineSeconds');
  if (pds !== undefined) {
    nonNegative(spec.p('progressDeadlineSeconds'), pds, errs);
    if (pds <= minReady)
      errs.push(invalid(spec.p('progressDeadlineSeconds'), pds, 'must be greater than minReadySeconds'));
  }
  spec.bool('paused');
  return errs;
}

/**
 * The selector and pod template rules Deployments and ReplicaSets share (ValidateDeploymentSpec's and
 * ValidateReplicaSetSpec's selector checks, ValidatePodTemplateSpecForReplicaSet). Upstream's ReplicaSet
 * rule says "for deployment" too.
 */
export function validateSelectorAndTemplate(spec: In, errs: FieldError[]): void {
  const selector = spec.obj('selector');
  let selectorOk = true;
  let parsed = undefined as ReturnType<typeof validateLabelSelector>['parsed'] | undefined;
  if (selector === undefined) {
    errs.push(required(spec.p('selector'), ''));
  } else {
    const v = validateLabelSelector(selector, spec.p('selector'));
    errs.push(...v.errs);
    parsed = v.parsed;
    selectorOk = v.ok;
    if (selectorIsEmpty(v.parsed))
      errs.push(invalid(spec.p('selector'), selector.v, 'empty selector is invalid for deployment'));
  }

  const template = spec.obj('template') ?? new In({}, spec.p('template'), errs);
  if (!selectorOk) {
    errs.push(invalid(spec.p('selector'), selector?.v ?? null, 'invalid label selector'));
  } else {
    const meta = template.obj('metadata');
    const labels = meta?.strMap('labels') ?? new Map<string, string>();
    // A missing selector selects nothing (it never matches); an empty one selects everything.
    if (parsed === undefined || (!selectorIsEmpty(parsed) && !selectorMatches(parsed, labels))) {
      const value = meta?.has('labels') === true ? mapValue(labels) : null;
      errs.push(
        invalid(template.p('metadata').child('labels'), value, '`selector` does not match template `labels`'),
      );
    }
    validatePodTemplateSpec(template, errs);
    const podSpec = template.obj('spec');
    const restartPolicy = podSpec?.s('restartPolicy') ?? '';
    if (restartPolicy !== 'Always') {
      errs.push(notSupported(template.p('spec').child('restartPolicy'), restartPolicy, ['Always']));
    }
    if (podSpec?.has('activeDeadlineSeconds') === true) {
      errs.push(
        forbidden(
          template.p('spec').child('activeDeadlineSeconds'),
          'activeDeadlineSeconds in ReplicaSet is not Supported',
        ),
      );
    }
  }
}

/** Drop null, empty lists and empty maps, as Go's semantic equality ignores nil-versus-empty. */
function normalize(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(normalize);
  if (!isObj(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) {
    const n = normalize(x);
    if (n === null || n === undefined) continue;
    if (Array.isArray(n) && n.length === 0) continue;
    if (isObj(n) && Object.keys(n).length === 0) continue;
    out[k] = n;
  }
  return out;
}

/** apps/v1 makes spec.selector immutable. */
export function validateDeploymentSpecUpdate(spec: In, oldSpec: In): FieldError[] {
  const now = spec.raw('selector') ?? null;
  const before = oldSpec.raw('selector') ?? null;
  return jsonEqual(normalize(now), normalize(before))
    ? []
    : [invalid(spec.p('selector'), now, 'field is immutable')];
}

/** ValidateDeploymentStatus. */
export function validateDeploymentStatus(
  obj: Record<string, unknown>,
  old: Record<string, unknown>,
): FieldError[] {
  const errs: FieldError[] = [];
  const status = In.at(obj['status'], FieldPath.root('status'), errs);
  if (status === undefined) return errs;
  const n = (k: string): number => status.int(k) ?? 0;
  nonNegative(status.p('observedGeneration'), n('observedGeneration'), errs);
  for (const k of [
    'replicas',
    'updatedReplicas',
    'readyReplicas',
    'availableReplicas',
    'unavailableReplicas',
  ]) {
    nonNegative(status.p(k), n(k), errs);
  }
  const collisions = status.int('collisionCount');
  nonNegative(status.p('collisionCount'), collisions, errs);
  const msg = 'cannot be greater than status.replicas';
  for (const k of ['updatedReplicas', 'readyReplicas', 'availableReplicas']) {
    if (n(k) > n('replicas')) errs.push(invalid(status.p(k), n(k), msg));
  }
  if (n('availableReplicas') > n('readyReplicas')) {
    errs.push(
      invalid(status.p('availableReplicas'), n('availableReplicas'), 'cannot be greater than readyReplicas'),
    );
  }
  const oldStatus = In.at(old['status'], FieldPath.root('status'), []);
  const oldCollisions = oldStatus?.int('collisionCount');
  if (oldCollisions !== undefined) {
    if (collisions === undefined || collisions < oldCollisions) {
      errs.push(invalid(status.p('collisionCount'), collisions ?? null, 'cannot be decremented'));
    }
  }
  return errs;
}
