// The OpenAPI v3 documents: an index at /openapi/v3 naming one document per group-version, each
// reachable at /openapi/v3/<path>?hash=<content hash>.
//
// What clients need from them (kubectl's validation, explain and client-side apply):
// - kubectl's validation looks for a PATCH operation whose `x-kubernetes-group-version-kind` is the
//   object's kind and which takes a `fieldValidation` query parameter; finding it, kubectl leaves
//   validation to the server and sends fieldValidation=Strict.
// - `kubectl explain` finds the kind through an operation on the resource path, then the component
//   schema whose `x-kubernetes-group-version-kind` list holds it, and walks properties, items,
//   additionalProperties and single-element allOf wrappers around $refs.
// - kubectl's client-side apply computes strategic merge patches from these schemas (patch strategy
//   and merge key on the field, types resolved through allOf[0].$ref) when the PATCH operation
//   accepts application/strategic-merge-patch+json; custom resources do not, so it sends a merge patch.
// - kubectl caches each document under its URL, so the hash changes whenever the content does.
//
// Named subschemas (Schema.name) become components referenced by $ref; what belongs to the field
// rather than the type (description, default, patch strategy, list type) stays on the referring
// side, with the $ref wrapped in allOf. The v2 document reuses this conversion (Components, 'v2').
import type { JsonRecord } from '../json.js';
import { groupVersion, RESOURCES, type ResourceInfo } from '../resources.js';
import { kindSchemaFor, type KindSchema } from '../schema/index.js';
import { deleteOptions, patchBody, status } from '../schema/meta.js';
import {
  binding as bindingSchema,
  scale as scaleSchema,
  tokenRequest as tokenRequestSchema,
} from '../schema/subresources.js';
import {
  BINDING_KIND,
  SCALE_KIND,
  TOKEN_REQUEST_KIND,
  hasApproval,
  hasBinding,
  hasScale,
  hasToken,
} from '../subresources.js';
import type { Schema } from '../schema/schema.js';

/** `info.version` of every document. */
export const OPENAPI_INFO_VERSION = 'unversioned';

export const GVK_EXTENSION = 'x-kubernetes-group-version-kind';

// ---------------------------------------------------------------------------------------------------
// Schemas to components

/** Keys that describe a field, not its type: they stay beside the $ref. */
const FIELD_KEYS = [
  'description',
  'default',
  'x-kubernetes-patch-strategy',
  'x-kubernetes-patch-merge-key',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
] as const satisfies readonly (keyof Schema)[];

/** Type-level keys copied verbatim (besides the structural ones handled separately). */
const TYPE_KEYS = [
  'type',
  'format',
  'description',
  'enum',
  'default',
  'required',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-patch-strategy',
  'x-kubernetes-patch-merge-key',
] as const satisfies readonly (keyof Schema)[];

/**
 * OpenAPI v3 wraps a $ref that has field keys beside it in allOf (siblings of $ref are ignored there);
 * Swagger 2.0, as Kubernetes publishes it, puts them beside the $ref. Integer-or-string values are
 * `anyOf` integer and string in v3, and a string of format int-or-string in v2.
 */
export type Dialect = 'v3' | 'v2';

/** The component (v3) or definition (v2) schemas of one document, filled as schemas are converted. */
export class Components {
  readonly schemas = new Map<string, JsonRecord>();

  constructor(readonly dialect: Dialect = 'v3') {}

  private refTo(name: string): JsonRecord {
    return { $ref: this.dialect === 'v3' ? `#/components/schemas/${name}` : `#/definitions/${name}` };
  }

  /** A schema as it appears at a use site: a $ref (with any field keys) or inline. */
  use(schema: Schema): JsonRecord {
    const name = schema.name;
    if (name === undefined) return this.inline(schema);
    this.define(name, withoutFieldKeys(schema));
    const fieldKeys: JsonRecord = {};
    for (const k of FIELD_KEYS) if (schema[k] !== undefined) fieldKeys[k] = schema[k];
    if (Object.keys(fieldKeys).length === 0) return this.refTo(name);
    if (this.dialect === 'v2') return { ...fieldKeys, ...this.refTo(name) };
    return { ...fieldKeys, allOf: [this.refTo(name)] };
  }

  /**
   * Register `schema` under `name`. The first definition wins (top-level kinds are defined first, with
   * their description); a later one must have the same shape, or two types share a name by mistake.
   */
  define(name: string, schema: Schema, extra: JsonRecord = {}): void {
    const body = { ...this.inline(schema), ...extra };
    const existing = this.schemas.get(name);
    if (existing === undefined) {
      this.schemas.set(name, body);
      return;
    }
    if (shape(existing) !== shape(body)) throw new Error(`two different schemas are named ${name}`);
  }

  inline(schema: Schema): JsonRecord {
    const out: JsonRecord = {};
    for (const k of TYPE_KEYS) if (schema[k] !== undefined) out[k] = schema[k];
    if (schema['x-kubernetes-int-or-string'] === true) {
      if (this.dialect === 'v3') {
        // Structural form: no type of its own, either alternative accepted.
        out['x-kubernetes-int-or-string'] = true;
        out['anyOf'] = [{ type: 'integer' }, { type: 'string' }];
      } else {
        out['type'] = 'string';
        out['format'] = 'int-or-string';
      }
    }
    if (schema.properties !== undefined) {
      const props: JsonRecord = {};
      for (const [k, v] of Object.entries(schema.properties)) props[k] = this.use(v);
      out['properties'] = props;
    }
    if (schema.items !== undefined) out['items'] = this.use(schema.items);
    if (schema.additionalProperties !== undefined)
      out['additionalProperties'] = this.use(schema.additionalProperties);
    return out;
  }

  /** The schemas by name, sorted. */
  toJSON(): JsonRecord {
    const out: JsonRecord = {};
    for (const name of [...this.schemas.keys()].sort()) out[name] = this.schemas.get(name);
    return out;
  }
}

function withoutFieldKeys(schema: Schema): Schema {
  const copy: Schema = { ...schema };
  for (const k of FIELD_KEYS) delete copy[k];
  return copy;
}

/** A component compared without its own description and group-version-kind. */
function shape(body: JsonRecord): string {
  const { description: _d, [GVK_EXTENSION]: _g, ...rest } = body;
  return JSON.stringify(rest);
}

// ---------------------------------------------------------------------------------------------------
// Paths and operations

const queryParam = (name: string, description: string, type = 'string'): JsonRecord => ({
  name,
  in: 'query',
  description,
  schema: { type, uniqueItems: true },
});

const pathParam = (name: string, description: string): JsonRecord => ({
  name,
  in: 'path',
  description,
  required: true,
  schema: { type: 'string', uniqueItems: true },
});

const P = {
  pretty: queryParam('pretty', "If 'true', the response is indented."),
  dryRun: queryParam(
    'dryRun',
    'When present, the request is fully processed but nothing is persisted. The only valid value is All.',
  ),
  fieldManager: queryParam(
    'fieldManager',
    'Name of the actor making the change, recorded in managedFields. Required for apply patches.',
  ),
  fieldValidation: queryParam(
    'fieldValidation',
    'What to do with unknown or duplicate fields in the body: Ignore drops them, Warn drops them and ' +
      'returns a warning for each, Strict rejects the request.',
  ),
  force: queryParam(
    'force',
    'For apply patches: take ownership of fields that conflict with other managers.',
    'boolean',
  ),
  allowWatchBookmarks: queryParam('allowWatchBookmarks', 'Ask for BOOKMARK events in a watch.', 'boolean'),
  continue: queryParam('continue', 'Token from a previous page, to fetch the next one.'),
  fieldSelector: queryParam('fieldSelector', 'Restrict the result to objects whose fields match.'),
  labelSelector: queryParam('labelSelector', 'Restrict the result to objects whose labels match.'),
  limit: queryParam('limit', 'Maximum number of items in one page.', 'integer'),
  resourceVersion: queryParam('resourceVersion', 'Which version of the data to serve, or to watch from.'),
  resourceVersionMatch: queryParam('resourceVersionMatch', 'How resourceVersion is interpreted for a list.'),
  sendInitialEvents: queryParam(
    'sendInitialEvents',
    'Start a watch with synthetic events for the current state.',
    'boolean',
  ),
  timeoutSeconds: queryParam('timeoutSeconds', 'Server-side timeout for a list or watch.', 'integer'),
  watch: queryParam('watch', 'Stream changes instead of returning a list.', 'boolean'),
  gracePeriodSeconds: queryParam('gracePeriodSeconds', 'Seconds before the object is deleted.', 'integer'),
  orphanDependents: queryParam('orphanDependents', 'Deprecated: use propagationPolicy.', 'boolean'),
  propagationPolicy: queryParam('propagationPolicy', 'Orphan, Background or Foreground.'),
  ignoreStoreReadError: queryParam(
    'ignoreStoreReadErrorWithClusterBreakingPotential',
    'Delete even when the stored object cannot be read. Dangerous.',
    'boolean',
  ),
  name: pathParam('name', 'Name of the object.'),
  namespace: pathParam('namespace', 'Namespace of the object; cluster-scoped kinds have none.'),
} as const;

const LIST_PARAMS = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const WRITE_PARAMS = [P.dryRun, P.fieldManager, P.fieldValidation];
const PATCH_PARAMS = [P.dryRun, P.fieldManager, P.fieldValidation, P.force];
const DELETE_PARAMS = [
  P.dryRun,
  P.gracePeriodSeconds,
  P.ignoreStoreReadError,
  P.orphanDependents,
  P.propagationPolicy,
];

/** `CoreV1`, `AppsV1`, `DiscoveryV1`, `SuperedgeIoV1`: the group-version part of operation IDs. */
function operationGroup(r: ResourceInfo): string {
  const cap = (s: string): string => (s === '' ? s : `${s[0]?.toUpperCase() ?? ''}${s.slice(1)}`);
  const group = r.group === '' ? 'core' : r.group.replace(/\.k8s\.io$/, '');
  return `${group.split(/[.-]/).map(cap).join('')}${cap(r.version)}`;
}

const pathPrefix = (r: Pick<ResourceInfo, 'group' | 'version'>): string =>
  r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;

/** The index key of a group-version: `api/v1`, `apis/apps/v1`. */
export const openAPIV3Path = (r: Pick<ResourceInfo, 'group' | 'version'>): string => pathPrefix(r).slice(1);

const PATCH_TYPES_BUILTIN = [
  'application/apply-patch+yaml',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
];
const PATCH_TYPES_CUSTOM = PATCH_TYPES_BUILTIN.filter((t) => t !== 'application/strategic-merge-patch+json');

function addResource(paths: JsonRecord, c: Components, r: ResourceInfo, k: KindSchema): void {
  const gvk = { group: r.group, kind: r.kind, version: r.version };
  const kindRef = c.use(k.schema);
  const listRef = c.use(k.listSchema);
  const statusRef = c.use(status);
  const json = (schema: JsonRecord): JsonRecord => ({ 'application/json': { schema } });
  const ok = (schema: JsonRecord, ...codes: string[]): JsonRecord => {
    const out: JsonRecord = {};
    for (const code of codes)
      out[code] = { description: code === '201' ? 'Created' : 'OK', content: json(schema) };
    out['401'] = { description: 'Unauthorized' };
    return out;
  };
  const group = operationGroup(r);
  const scope = r.namespaced ? 'Namespaced' : '';
  const op = (
    action: string,
    id: string,
    description: string,
    parameters: JsonRecord[],
    responses: JsonRecord,
    requestBody?: JsonRecord,
  ): JsonRecord => ({
    tags: [`${group.replace(/V\d.*$/, '').toLowerCase()}_${r.version}`],
    description,
    operationId: id,
    parameters: [...parameters, P.pretty],
    ...(requestBody === undefined ? {} : { requestBody }),
    responses,
    'x-kubernetes-action': action,
    [GVK_EXTENSION]: gvk,
  });
  const writeBody = { content: json(kindRef), required: true };
  const patchBodyRef = c.use(patchBody);
  const patchContent: JsonRecord = {};
  for (const t of r.custom ? PATCH_TYPES_CUSTOM : PATCH_TYPES_BUILTIN)
    patchContent[t] = { schema: patchBodyRef };
  const deleteBody = { content: json(c.use(deleteOptions)) };

  const base = `${pathPrefix(r)}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.resource}`;
  const scopeParams = r.namespaced ? [P.namespace] : [];
  paths[base] = {
    parameters: scopeParams,
    get: op(
      'list',
      `list${group}${scope}${r.kind}`,
      `List or watch ${r.kind} objects.`,
      LIST_PARAMS,
      ok(listRef, '200'),
    ),
    post: op(
      'post',
      `create${group}${scope}${r.kind}`,
      `Create a ${r.kind}.`,
      WRITE_PARAMS,
      ok(kindRef, '200', '201', '202'),
      writeBody,
    ),
    delete: op(
      'deletecollection',
      `deleteCollection${group}${scope}${r.kind}`,
      `Delete a collection of ${r.kind} objects.`,
      [...DELETE_PARAMS, ...LIST_PARAMS.filter((p) => p !== P.watch && p !== P.allowWatchBookmarks)],
      ok(statusRef, '200'),
      deleteBody,
    ),
  };
  const item = `${base}/{name}`;
  const itemParams = [P.name, ...scopeParams];
  paths[item] = {
    parameters: itemParams,
    get: op('get', `read${group}${scope}${r.kind}`, `Read the named ${r.kind}.`, [], ok(kindRef, '200')),
    put: op(
      'put',
      `replace${group}${scope}${r.kind}`,
      `Replace the named ${r.kind}.`,
      WRITE_PARAMS,
      ok(kindRef, '200', '201'),
      writeBody,
    ),
    patch: op(
      'patch',
      `patch${group}${scope}${r.kind}`,
      `Partially update the named ${r.kind}.`,
      PATCH_PARAMS,
      ok(kindRef, '200', '201'),
      { content: patchContent, required: true },
    ),
    delete: op(
      'delete',
      `delete${group}${scope}${r.kind}`,
      `Delete the named ${r.kind}.`,
      DELETE_PARAMS,
      ok(kindRef, '200', '202'),
      deleteBody,
    ),
  };
  for (const sub of [...(r.hasStatus ? ['status'] : []), ...(hasApproval(r) ? ['approval'] : [])]) {
    const Sub = sub === 'status' ? 'Status' : 'Approval';
    paths[`${item}/${sub}`] = {
      parameters: itemParams,
      get: op(
        'get',
        `read${group}${scope}${r.kind}${Sub}`,
        `Read the ${sub} of the named ${r.kind}.`,
        [],
        ok(kindRef, '200'),
      ),
      put: op(
        'put',
        `replace${group}${scope}${r.kind}${Sub}`,
        `Replace the ${sub} of the named ${r.kind}.`,
        WRITE_PARAMS,
        ok(kindRef, '200', '201'),
        writeBody,
      ),
      patch: op(
        'patch',
        `patch${group}${scope}${r.kind}${Sub}`,
        `Partially update the ${sub} of the named ${r.kind}.`,
        PATCH_PARAMS,
        ok(kindRef, '200', '201'),
        { content: patchContent, required: true },
      ),
    };
  }
  if (hasScale(r)) {
    c.define(scaleSchema.name as string, scaleSchema, { [GVK_EXTENSION]: [{ ...SCALE_KIND }] });
    const scaleRef = c.use(scaleSchema);
    const scaleOp = (o: JsonRecord): JsonRecord => ({ ...o, [GVK_EXTENSION]: { ...SCALE_KIND } });
    paths[`${item}/scale`] = {
      parameters: itemParams,
      get: scaleOp(
        op(
          'get',
          `read${group}${scope}${r.kind}Scale`,
          `Read the scale of the named ${r.kind}.`,
          [],
          ok(scaleRef, '200'),
        ),
      ),
      put: scaleOp(
        op(
          'put',
          `replace${group}${scope}${r.kind}Scale`,
          `Replace the scale of the named ${r.kind}.`,
          WRITE_PARAMS,
          ok(scaleRef, '200', '201'),
          { content: json(scaleRef), required: true },
        ),
      ),
      patch: scaleOp(
        op(
          'patch',
          `patch${group}${scope}${r.kind}Scale`,
          `Partially update the scale of the named ${r.kind}.`,
          PATCH_PARAMS,
          ok(scaleRef, '200', '201'),
          { content: patchContent, required: true },
        ),
      ),
    };
  }
  if (hasBinding(r)) {
    c.define(bindingSchema.name as string, bindingSchema, { [GVK_EXTENSION]: [{ ...BINDING_KIND }] });
    const bindingRef = c.use(bindingSchema);
    const bindingOp = (id: string, description: string): JsonRecord => ({
      ...op('post', id, description, WRITE_PARAMS, ok(bindingRef, '200', '201', '202'), {
        content: json(bindingRef),
        required: true,
      }),
      [GVK_EXTENSION]: { ...BINDING_KIND },
    });
    paths[`${item}/binding`] = {
      parameters: itemParams,
      post: bindingOp(`create${group}${scope}${r.kind}Binding`, `Bind the named ${r.kind} to a node.`),
    };
    paths[`${pathPrefix(r)}/namespaces/{namespace}/bindings`] = {
      parameters: scopeParams,
      post: bindingOp(`create${group}${scope}Binding`, 'Bind a pod, named in the body, to a node.'),
    };
  }
  if (hasToken(r)) {
    c.define(tokenRequestSchema.name as string, tokenRequestSchema, {
      [GVK_EXTENSION]: [{ ...TOKEN_REQUEST_KIND }],
    });
    const tokenRef = c.use(tokenRequestSchema);
    paths[`${item}/token`] = {
      parameters: itemParams,
      post: {
        ...op(
          'post',
          `create${group}${scope}${r.kind}Token`,
          `Create a token of the named ${r.kind}.`,
          WRITE_PARAMS,
          ok(tokenRef, '200', '201', '202'),
          { content: json(tokenRef), required: true },
        ),
        [GVK_EXTENSION]: { ...TOKEN_REQUEST_KIND },
      },
    };
  }
  if (r.namespaced) {
    paths[`${pathPrefix(r)}/${r.resource}`] = {
      get: op(
        'list',
        `list${group}${r.kind}ForAllNamespaces`,
        `List or watch ${r.kind} objects of all namespaces.`,
        LIST_PARAMS,
        ok(listRef, '200'),
      ),
    };
  }
}

/**
 * Define the kind and list schemas of `resources` in `c`, each carrying the group-version-kind list
 * that `kubectl explain` and kubectl's patch computation look kinds up by. Kinds come first, so their
 * components keep the kind description.
 */
export function defineKinds(c: Components, resources: readonly ResourceInfo[]): KindSchema[] {
  const kinds: KindSchema[] = [];
  for (const r of resources) {
    const k = kindSchemaFor(r.group, r.kind);
    if (k === undefined) throw new Error(`no schema for ${groupVersion(r)} ${r.kind}`);
    if (kinds.includes(k)) continue;
    kinds.push(k);
    c.define(k.definitionName, k.schema, {
      [GVK_EXTENSION]: [{ group: k.group, kind: k.kind, version: k.version }],
    });
  }
  for (const k of kinds)
    c.define(k.listDefinitionName, k.listSchema, {
      [GVK_EXTENSION]: [{ group: k.group, kind: k.listKind, version: k.version }],
    });
  return kinds;
}

/** The document of one group-version (`''`, `v1` for the core group); undefined when none is served. */
export function buildGroupVersionDocument(group: string, version: string): JsonRecord | undefined {
  const resources = RESOURCES.filter((r) => r.group === group && r.version === version);
  if (resources.length === 0) return undefined;
  const c = new Components('v3');
  defineKinds(c, resources);
  const paths: JsonRecord = {};
  for (const r of resources) addResource(paths, c, r, kindSchemaFor(r.group, r.kind) as KindSchema);
  const sortedPaths: JsonRecord = {};
  for (const p of Object.keys(paths).sort()) sortedPaths[p] = paths[p];
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: OPENAPI_INFO_VERSION },
    paths: sortedPaths,
    components: { schemas: c.toJSON() },
  };
}

// ---------------------------------------------------------------------------------------------------
// Hash, index and the cached documents

/** FNV-1a, 64 bits, over the UTF-8 bytes of `text`, as 16 upper-case hex digits. */
export function fnv1a64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  // Four 16-bit limbs, least significant first; offset basis 0xcbf29ce484222325.
  let a0 = 0x2325;
  let a1 = 0x8422;
  let a2 = 0x9ce4;
  let a3 = 0xcbf2;
  for (const b of bytes) {
    a0 ^= b;
    // Multiply by the prime 0x100000001b3 = 2^40 + 0x1b3, modulo 2^64.
    let r0 = a0 * 0x1b3;
    let r1 = a1 * 0x1b3;
    let r2 = a2 * 0x1b3 + a0 * 0x100;
    let r3 = a3 * 0x1b3 + a1 * 0x100;
    r1 += r0 >>> 16;
    r0 &= 0xffff;
    r2 += r1 >>> 16;
    r1 &= 0xffff;
    r3 += r2 >>> 16;
    r2 &= 0xffff;
    r3 &= 0xffff;
    a0 = r0;
    a1 = r1;
    a2 = r2;
    a3 = r3;
  }
  const hex = (n: number): string => n.toString(16).padStart(4, '0');
  return `${hex(a3)}${hex(a2)}${hex(a1)}${hex(a0)}`.toUpperCase();
}

export interface OpenAPIV3Document {
  /** Index key: `api/v1`, `apis/apps/v1`. */
  readonly path: string;
  readonly group: string;
  readonly version: string;
  /** The document as served. */
  readonly json: string;
  /** Hash of `json`, as used in `serverRelativeURL`. */
  readonly hash: string;
}

export interface OpenAPIV3Index {
  readonly paths: Record<string, { readonly serverRelativeURL: string }>;
}

let documents: ReadonlyMap<string, OpenAPIV3Document> | undefined;

/** Every group-version document, by index key; built once. */
export function openAPIV3Documents(): ReadonlyMap<string, OpenAPIV3Document> {
  if (documents !== undefined) return documents;
  const built = new Map<string, OpenAPIV3Document>();
  const gvs = new Map<string, ResourceInfo>();
  for (const r of RESOURCES) if (!gvs.has(openAPIV3Path(r))) gvs.set(openAPIV3Path(r), r);
  for (const path of [...gvs.keys()].sort()) {
    const r = gvs.get(path) as ResourceInfo;
    const doc = buildGroupVersionDocument(r.group, r.version);
    if (doc === undefined) continue;
    const json = JSON.stringify(doc);
    built.set(path, { path, group: r.group, version: r.version, json, hash: fnv1a64(json) });
  }
  documents = built;
  return built;
}

/** The document served at /openapi/v3/<path> (without the query), if any. */
export const openAPIV3Document = (path: string): OpenAPIV3Document | undefined =>
  openAPIV3Documents().get(path.replace(/^\/+/, ''));

/** The body of GET /openapi/v3. */
export function openAPIV3Index(): OpenAPIV3Index {
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const d of openAPIV3Documents().values())
    paths[d.path] = { serverRelativeURL: `/openapi/v3/${d.path}?hash=${d.hash}` };
  return { paths };
}
