// ObjectMeta validation on create and on update, as apimachinery's ValidateObjectMetaAccessor and
// ValidateObjectMetaAccessorUpdate do it (plus core's finalizer-name rule), with the same paths:
// label and annotation errors are reported at `metadata.labels` / `metadata.annotations` without the
// key, owner reference errors at `metadata.ownerReferences.<field>` without the index.
import { FieldPath, type FieldError, forbidden, invalid, required } from '../field-errors.js';
import { formatValue } from '../field-errors.js';
import type { ResourceInfo } from '../resources.js';
import { type NameRule, nameValidator } from './formats.js';
import { In, byteLength, isObj, stringMap } from './json.js';
import { validateLabels } from './labels.js';
import { tooLong } from './limits.js';
import { isDNS1123Label, isQualifiedName } from './names.js';

export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;
const IMMUTABLE = 'field is immutable';
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

export interface ObjectMetaOptions {
  readonly namespaced: boolean;
  /** The name rule; 'dns1035' is what Services use upstream (their names must start with a letter). */
  readonly nameRule: ResourceInfo['nameRule'] | NameRule;
  /** Create checks the name, generateName and namespace; update only the common fields. */
  readonly isCreate: boolean;
  /** Core's extra rule that an unqualified finalizer must be a standard one (default true). */
  readonly kubeFinalizers?: boolean;
}

const META = FieldPath.root('metadata');

function metaReader(meta: unknown, errs: FieldError[]): In {
  return In.at(meta, META, errs) ?? new In({}, META, errs);
}

export function validateAnnotations(
  annotations: ReadonlyMap<string, string> | undefined,
  p: FieldPath,
): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  const entries = [...(annotations ?? [])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [k, v] of entries) {
    for (const m of isQualifiedName(k.toLowerCase())) errs.push(invalid(p, k, m));
    size += byteLength(k) + byteLength(v);
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(tooLong(p, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

function validateOwnerReferences(m: In): FieldError[] {
  const errs: FieldError[] = [];
  const p = META.child('ownerReferences');
  const refs = m.objs('ownerReferences');
  let firstController = '';
  for (const ref of refs) {
    const apiVersion = ref.s('apiVersion');
    const kind = ref.s('kind');
    const name = ref.s('name');
    const uid = ref.s('uid');
    const slashes = apiVersion.split('/').length - 1;
    const version = slashes === 0 ? apiVersion : slashes === 1 ? apiVersion.split('/')[1]! : '';
    const group = slashes === 1 ? apiVersion.split('/')[0]! : '';
    if (version === '') errs.push(invalid(p.child('apiVersion'), apiVersion, 'version must not be empty'));
    if (kind === '') errs.push(invalid(p.child('kind'), kind, 'must not be empty'));
    if (name === '') errs.push(invalid(p.child('name'), name, 'must not be empty'));
    if (uid === '') errs.push(invalid(p.child('uid'), uid, 'must not be empty'));
    if (group === '' && version === 'v1' && kind === 'Event') {
      errs.push(invalid(p, ref.v, '/v1, Kind=Event is disallowed from being an owner'));
    }
    if (ref.bool('controller') === true) {
      const cur = `${kind}/${name}`;
      if (firstController !== '') {
        errs.push(
          invalid(
            p,
            m.raw('ownerReferences'),
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${cur}`,
          ),
        );
      } else {
        firstController = cur;
      }
    }
    ref.bool('blockOwnerDeletion');
  }
  return errs;
}

function validateFinalizers(finalizers: string[], kube: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const p = META.child('finalizers');
  for (const f of finalizers) for (const msg of isQualifiedName(f)) errs.push(invalid(p, f, msg));
  if (finalizers.includes('orphan') && finalizers.includes('foregroundDeletion')) {
    errs.push(invalid(p, finalizers, 'finalizer orphan and foregroundDeletion cannot be both set'));
  }
  if (kube) {
    finalizers.forEach((f, i) => {
      if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) {
        errs.push(
          invalid(p.index(i), f, 'name is neither a standard finalizer name nor is it fully qualified'),
        );
      }
    });
  }
  return errs;
}

/** The checks create and update share: generation, labels, annotations, owners, finalizers. */
function validateCommon(m: In, kubeFinalizers: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const generation = m.int('generation');
  if (generation !== undefined && generation < 0) {
    errs.push(invalid(META.child('generation'), generation, 'must be greater than or equal to 0'));
  }
  errs.push(...validateLabels(m.strMap('labels'), META.child('labels')));
  errs.push(...validateAnnotations(m.strMap('annotations'), META.child('annotations')));
  errs.push(...validateOwnerReferences(m));
  errs.push(...validateFinalizers(m.strs('finalizers') ?? [], kubeFinalizers));
  return errs;
}

/** Validate `metadata` of an object being created (or, with isCreate false, only the common fields). */
export function validateObjectMeta(meta: unknown, opts: ObjectMetaOptions): FieldError[] {
  const errs: FieldError[] = [];
  const m = metaReader(meta, errs);
  if (opts.isCreate) {
    const nameFn = nameValidator(opts.nameRule);
    const generateName = m.s('generateName');
    const name = m.s('name');
    if (generateName !== '') {
      for (const msg of nameFn(generateName, true))
        errs.push(invalid(META.child('generateName'), generateName, msg));
    }
    if (name === '') {
      if (generateName === '') errs.push(required(META.child('name'), 'name or generateName is required'));
    } else {
      for (const msg of nameFn(name, false)) errs.push(invalid(META.child('name'), name, msg));
    }
    const namespace = m.s('namespace');
    if (opts.namespaced) {
      if (namespace === '') errs.push(required(META.child('namespace'), ''));
      else
        for (const msg of isDNS1123Label(namespace))
          errs.push(invalid(META.child('namespace'), namespace, msg));
    } else if (namespace !== '') {
      errs.push(forbidden(META.child('namespace'), 'not allowed on this type'));
    }
  }
  errs.push(...validateCommon(m, opts.kubeFinalizers ?? true));
  return errs;
}

/**
 * Validate `metadata` on update: name, namespace, uid, creationTimestamp, deletionTimestamp and
 * deletionGracePeriodSeconds are immutable (an empty uid or timestamp is taken as "not sent": the
 * server copies those from the stored object), generation may not go down, and no finalizer may be
 * added once deletion has started. The common rules apply to the new metadata.
 */
export function validateObjectMetaUpdate(
  meta: unknown,
  oldMeta: unknown,
  opts: { kubeFinalizers?: boolean } = {},
): FieldError[] {
  const errs: FieldError[] = [];
  const m = metaReader(meta, errs);
  const o = new In(isObj(oldMeta) ? oldMeta : {}, META, []);

  if (o.has('deletionTimestamp')) {
    const old = new Set(o.strs('finalizers') ?? []);
    const added = [...new Set((m.strs('finalizers') ?? []).filter((f) => !old.has(f)))].sort();
    if (added.length > 0) {
      errs.push(
        forbidden(
          META.child('finalizers'),
          `no new finalizers can be added if the object is being deleted, found new finalizers ${formatValue(added)}`,
        ),
      );
    }
  }
  const gen = m.int('generation') ?? 0;
  if (gen < (o.int('generation') ?? 0))
    errs.push(invalid(META.child('generation'), gen, 'must not be decremented'));

  for (const key of ['name', 'namespace'] as const) {
    const now = m.s(key);
    if (now !== o.s(key)) errs.push(invalid(META.child(key), now, IMMUTABLE));
  }
  for (const key of ['uid', 'creationTimestamp', 'deletionTimestamp'] as const) {
    const now = m.str(key);
    if (now !== undefined && now !== '' && now !== (o.str(key) ?? ''))
      errs.push(invalid(META.child(key), now, IMMUTABLE));
  }
  const grace = m.int('deletionGracePeriodSeconds');
  if (grace !== undefined && grace !== o.int('deletionGracePeriodSeconds')) {
    errs.push(invalid(META.child('deletionGracePeriodSeconds'), grace, IMMUTABLE));
  }
  errs.push(...validateCommon(m, opts.kubeFinalizers ?? true));
  return errs;
}

/** The annotations of an object's metadata as a Map. */
export function metaAnnotations(meta: unknown): Map<string, string> {
  return isObj(meta) && isObj(meta['annotations']) ? stringMap(meta['annotations'], META, []) : new Map();
}
