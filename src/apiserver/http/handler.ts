// The API server's request handler: authentication, authorization, routing and the REST verbs.
// Everything it answers with on failure is a Kubernetes Status (respond.ts maps errors in one place).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { notSupported, required, tooLong, type FieldError } from '../../api/field-errors.js';
import type { KObject } from '../../api/object.js';
import { findResource, groupVersion, selectableFields, type ResourceInfo } from '../../api/resources.js';
import { StatusError, statusErrors } from '../../api/status.js';
import { checkSupportedFields, parseFieldSelector } from '../../core/selectors/fields.js';
import { parseLabelSelector } from '../../core/selectors/labels.js';
import type { Logger } from '../logger.js';
import type { ApiMetrics } from '../metrics.js';
import { listObjects, listOptionsInvalid, parseResourceVersion } from '../registry/lister.js';
import { PATCH_CONTENT_TYPES } from '../registry/patch.js';
import type { DeleteOptions, FieldValidation, Registry, WriteContext } from '../registry/registry.js';
import type { CachedObject, WatchCache, WatchFilter } from '../watch-cache/watch-cache.js';
import { decodeWriteBody, parseJson, parseYamlDoc, readBody } from './body.js';
import {
  AGGREGATED_CONTENT_TYPE,
  aggregatedDiscovery,
  apiGroupDoc,
  apiGroupList,
  apiResourceList,
  apiVersions,
} from './discovery.js';
import { mediaType, negotiate, type Rendering } from './negotiation.js';
import {
  parseRequestInfo,
  pathSegmentNameError,
  queryTrue,
  type ResourceRequestInfo,
} from './request-info.js';
import { headers, toStatus, warningHeaders, writeJson, writeRawJson, writeStatus } from './respond.js';
import { parseIncludeObject, partialMetadata, table, tableRow } from './table.js';
import { serveWatch, type WatchRegistry, type WatchRendering } from './watch.js';

export interface Identity {
  readonly name: string;
  readonly uid: string;
  readonly groups: readonly string[];
}

export interface AuthorizationAttributes {
  readonly user: Identity;
  readonly verb: string;
  readonly resourceRequest: boolean;
  readonly apiGroup: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  readonly path: string;
}

export interface OpenApiProvider {
  v3Index(): unknown;
  /** The serialized document for one group-version (as served), if any. */
  v3Document(path: string): string | undefined;
  v2Protobuf(): Uint8Array;
}

export interface HandlerDeps {
  readonly registry: Registry;
  readonly cache: WatchCache;
  readonly metrics: ApiMetrics;
  readonly log: Logger;
  readonly authenticate: (req: IncomingMessage) => Identity | 'anonymous' | 'invalid';
  readonly authorize: (attrs: AuthorizationAttributes) => boolean;
  readonly forbiddenMessage: (attrs: AuthorizationAttributes) => string;
  readonly openapi: OpenApiProvider;
  readonly version: Record<string, string>;
  readonly serverAddress: () => string;
  readonly watches: WatchRegistry;
  readonly bookmarkIntervalMs: number;
  readonly maxWatchQueueBytes: number;
  /** kube's --min-request-timeout: watches without timeoutSeconds last 1–2× this. */
  readonly minRequestTimeoutSeconds: number;
  readonly ready: () => boolean;
}

const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);
const isPublic = (path: string): boolean =>
  PUBLIC_PATHS.has(path) || [...PUBLIC_PATHS].some((p) => path.startsWith(`${p}/`));

const CUSTOM_PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
];
const BUILTIN_PATCH_TYPES = [
  ...CUSTOM_PATCH_TYPES.slice(0, 2),
  'application/strategic-merge-patch+json',
  CUSTOM_PATCH_TYPES[2]!,
];
const MAX_LIST_LIMIT = 1_000_000;

export function createHandler(deps: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void handle(deps, req, res);
  };
}

interface MetricLabels {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
}

async function handle(deps: HandlerDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = performance.now();
  const labels: MetricLabels = {
    verb: req.method ?? '',
    group: '',
    version: '',
    resource: '',
    subresource: '',
    scope: '',
  };
  let longRunning = false;
  res.once('finish', () => {
    if (longRunning) return;
    deps.metrics.requests.inc({ ...labels, code: String(res.statusCode) });
    deps.metrics.duration.observe(labels, (performance.now() - started) / 1000);
  });
  try {
    const rawUrl = req.url ?? '/';
    const q = rawUrl.indexOf('?');
    const path = q < 0 ? rawUrl : rawUrl.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : rawUrl.slice(q + 1));
    const who = deps.authenticate(req);
    if (who === 'invalid' || (who === 'anonymous' && !isPublic(path))) {
      throw statusErrors.unauthorized();
    }
    const info = parseRequestInfo(req.method ?? 'GET', path, query);
    if (who !== 'anonymous') {
      const attrs: AuthorizationAttributes = info.isResourceRequest
        ? {
            user: who,
            verb: info.verb,
            resourceRequest: true,
            apiGroup: info.apiGroup,
            namespace: info.namespace,
            resource: info.resource,
            subresource: info.subresource,
            name: info.name,
            path,
          }
        : {
            user: who,
            verb: info.verb,
            resourceRequest: false,
            apiGroup: '',
            namespace: '',
            resource: '',
            subresource: '',
            name: '',
            path,
          };
      if (!deps.authorize(attrs)) throw forbidden(deps, attrs);
    }
    if (!info.isResourceRequest) {
      await serveNonResource(deps, req, res, path, query, info.discovery);
      return;
    }
    const r = findResource(info.apiGroup, info.apiVersion, info.resource);
    labels.verb = metricVerb(info, req);
    labels.group = info.apiGroup;
    labels.version = info.apiVersion;
    labels.resource = info.resource;
    labels.subresource = info.subresource;
    if (r === undefined) throw notFoundPath();
    labels.scope = r.namespaced ? (info.namespace === '' ? 'cluster' : 'namespace') : 'cluster';
    if (info.verb === 'watch') {
      longRunning = true;
      const ll = {
        verb: 'WATCH',
        group: r.group,
        version: r.version,
        resource: r.resource,
        scope: labels.scope,
      };
      deps.metrics.longRunning.inc(ll);
      deps.metrics.requests.inc({ ...labels, code: '200' });
      try {
        await serveResourceWatch(deps, req, res, r, info, query);
      } finally {
        deps.metrics.longRunning.dec(ll);
      }
      return;
    }
    await serveResource(deps, req, res, r, info, query);
  } catch (err) {
    const status = toStatus(err, deps.log);
    if (longRunning) deps.metrics.requests.inc({ ...labels, code: String(status.code) });
    if (!res.headersSent && !req.complete) req.resume();
    writeStatus(res, status, status.code === 401 ? { 'WWW-Authenticate': 'Bearer realm="svcplane"' } : {});
  }
}

function metricVerb(info: ResourceRequestInfo, req: IncomingMessage): string {
  if (info.verb === 'patch' && mediaType(req.headers['content-type']) === 'application/apply-patch+yaml')
    return 'APPLY';
  switch (info.verb) {
    case 'get':
      return 'GET';
    case 'list':
      return 'LIST';
    case 'watch':
      return 'WATCH';
    case 'create':
      return 'POST';
    case 'update':
      return 'PUT';
    case 'patch':
      return 'PATCH';
    case 'delete':
      return 'DELETE';
    case 'deletecollection':
      return 'DELETECOLLECTION';
  }
}

function forbidden(deps: HandlerDeps, attrs: AuthorizationAttributes): StatusError {
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: deps.forbiddenMessage(attrs),
    reason: 'Forbidden',
    details: attrs.resourceRequest
      ? {
          ...(attrs.name === '' ? {} : { name: attrs.name }),
          ...(attrs.apiGroup === '' ? {} : { group: attrs.apiGroup }),
          kind: attrs.resource,
        }
      : {},
    code: 403,
  });
}

const notFoundPath = (): StatusError =>
  new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server could not find the requested resource',
    reason: 'NotFound',
    details: {},
    code: 404,
  });

/** What go-restful answers (through kube's error handler) for a method a path has no route for. */
const methodNotAllowed = (): StatusError =>
  new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server does not allow this method on the requested resource',
    reason: 'MethodNotAllowed',
    details: {},
    code: 405,
  });

// ------------------------------------------------------------------------------------ non-resource

async function serveNonResource(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
  discovery: { group?: string; version?: string; legacy: boolean } | undefined,
): Promise<void> {
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') {
    throw new StatusError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `the server does not allow this method on the requested resource`,
      reason: 'MethodNotAllowed',
      details: {},
      code: 405,
    });
  }
  const accept = req.headers.accept;
  if (discovery !== undefined) {
    if (discovery.version === undefined && discovery.group === undefined) {
      const rendering = negotiate(accept, { discovery: true });
      if (rendering.kind === 'discovery') {
        writeJson(res, 200, aggregatedDiscovery(discovery.legacy, rendering.version), {
          contentType: AGGREGATED_CONTENT_TYPE(rendering.version),
          extraHeaders: { Vary: 'Accept' },
        });
        return;
      }
      writeJson(res, 200, discovery.legacy ? apiVersions(deps.serverAddress()) : apiGroupList(), {
        yaml: rendering.kind === 'yaml',
        extraHeaders: { Vary: 'Accept' },
      });
      return;
    }
    const rendering = negotiate(accept, {});
    const doc =
      discovery.version === undefined
        ? apiGroupDoc(discovery.group ?? '')
        : discovery.legacy && discovery.version !== 'v1'
          ? undefined
          : apiResourceList(discovery.group ?? '', discovery.version);
    if (doc === undefined) throw notFoundPath();
    writeJson(res, 200, doc, { yaml: rendering.kind === 'yaml' });
    return;
  }
  switch (path) {
    case '/healthz':
    case '/livez':
    case '/readyz': {
      const ok = path !== '/readyz' || deps.ready();
      const body = query.has('verbose')
        ? `[${ok ? '+' : '-'}]ping ok\n[${ok ? '+' : '-'}]watch-cache ${ok ? 'ok' : 'failed'}\n${path.slice(1)} check ${ok ? 'passed' : 'failed'}\n`
        : ok
          ? 'ok'
          : 'watch cache not ready';
      res.writeHead(
        ok ? 200 : 503,
        headers({ 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }),
      );
      res.end(body);
      return;
    }
    case '/version':
      writeJson(res, 200, deps.version);
      return;
    case '/metrics': {
      deps.metrics.cacheRevision.set(deps.cache.revision);
      const text = await deps.metrics.registry.metrics();
      res.writeHead(200, headers({ 'Content-Type': deps.metrics.registry.contentType }));
      res.end(text);
      return;
    }
    case '/openapi/v2': {
      const buf = deps.openapi.v2Protobuf();
      // Go's MIME parser chokes on the '@' of the protobuf media type; octet-stream is what works.
      res.writeHead(
        200,
        headers({ 'Content-Type': 'application/octet-stream', 'Content-Length': String(buf.length) }),
      );
      res.end(Buffer.from(buf));
      return;
    }
    case '/openapi/v3':
      writeJson(res, 200, deps.openapi.v3Index());
      return;
    default:
      if (path.startsWith('/openapi/v3/')) {
        const doc = deps.openapi.v3Document(path.slice('/openapi/v3/'.length));
        if (doc === undefined) throw notFoundPath();
        writeRawJson(res, 200, doc, query.has('hash') ? { 'Cache-Control': 'public, immutable' } : {});
        return;
      }
      throw notFoundPath();
  }
}

// ---------------------------------------------------------------------------------------- resources

function scopeCheck(r: ResourceInfo, info: ResourceRequestInfo): void {
  if (!r.namespaced && info.namespace !== '') throw notFoundPath();
  const oneObject = info.name !== '' || info.verb === 'create';
  if (r.namespaced && oneObject && info.namespace === '') throw notFoundPath();
  if (info.name !== '') {
    const bad = pathSegmentNameError(info.name);
    if (bad !== undefined)
      throw statusErrors.badRequest(`invalid resource name ${JSON.stringify(info.name)}: ${bad}`);
  }
  if (info.namespace !== '') {
    const bad = pathSegmentNameError(info.namespace);
    if (bad !== undefined)
      throw statusErrors.badRequest(`invalid namespace ${JSON.stringify(info.namespace)}: ${bad}`);
  }
  const sub = info.subresource;
  if (sub === '') return;
  const statusOk = sub === 'status' && r.hasStatus && ['get', 'update', 'patch'].includes(info.verb);
  const finalizeOk = sub === 'finalize' && r.resource === 'namespaces' && info.verb === 'update';
  if (!statusOk && !finalizeOk) throw notFoundPath();
}

function filterFrom(r: ResourceInfo, namespace: string, query: URLSearchParams): WatchFilter {
  const label = parseLabelSelector(query.get('labelSelector') ?? '');
  const field = parseFieldSelector(query.get('fieldSelector') ?? '');
  checkSupportedFields(field, selectableFields(r));
  return { namespace, label, field };
}

/**
 * The write options of a request, validated as kube's Validate{Create,Update,Patch,Delete}Options do:
 * every problem (plus `extra`, the patch-only ones) in one 422 Invalid for `CreateOptions.meta.k8s.io`
 * (or Update/Patch/DeleteOptions).
 */
function writeContext(
  req: IncomingMessage,
  query: URLSearchParams,
  kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions',
  fromBody?: { dryRun?: unknown },
  extra: readonly FieldError[] = [],
): WriteContext {
  const errs: FieldError[] = [...extra];
  const given = query.get('fieldManager') ?? '';
  if (given.length > 128) errs.push(tooLong('fieldManager', 128));
  const dry = [
    ...query.getAll('dryRun'),
    ...(Array.isArray(fromBody?.dryRun) ? (fromBody.dryRun as unknown[]) : []),
  ];
  if (dry.some((d) => d !== 'All')) errs.push(notSupported('dryRun', dry, ['All']));
  const fv = query.get('fieldValidation') || 'Warn';
  if (kind !== 'DeleteOptions' && fv !== 'Strict' && fv !== 'Warn' && fv !== 'Ignore') {
    errs.push(notSupported('fieldValidation', fv, ['', 'Ignore', 'Strict', 'Warn']));
  }
  if (errs.length > 0) throw statusErrors.invalid({ group: 'meta.k8s.io', kind }, '', errs);
  let manager = given;
  if (manager === '') {
    const ua = req.headers['user-agent'] ?? '';
    manager = ua.split('/')[0]!.trim().slice(0, 128);
  }
  return {
    dryRun: dry.length > 0,
    fieldManager: manager,
    fieldValidation: fv as FieldValidation,
    warnings: [],
  };
}

function renderingFor(req: IncomingMessage): Rendering {
  return negotiate(req.headers.accept, { table: true, metadata: true });
}

function writeObject(
  res: ServerResponse,
  r: ResourceInfo,
  code: number,
  obj: KObject,
  rendering: Rendering,
  query: URLSearchParams,
  nowMs: number,
  extra: Record<string, string | string[]> = {},
): void {
  switch (rendering.kind) {
    case 'table':
      writeJson(
        res,
        code,
        table(r, [obj], {
          version: rendering.version,
          include: parseIncludeObject(query.get('includeObject')),
          ...(obj.metadata.resourceVersion === undefined
            ? {}
            : { resourceVersion: obj.metadata.resourceVersion }),
          nowMs,
        }),
        { extraHeaders: extra },
      );
      return;
    case 'metadata':
      writeJson(res, code, partialMetadata(obj, rendering.version), { extraHeaders: extra });
      return;
    case 'yaml':
      writeJson(res, code, obj, { yaml: true, extraHeaders: extra });
      return;
    default:
      writeJson(res, code, obj, { extraHeaders: extra });
  }
}

async function serveResource(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  r: ResourceInfo,
  info: ResourceRequestInfo,
  query: URLSearchParams,
): Promise<void> {
  scopeCheck(r, info);
  // kube has no route for POST to an object, nor for PUT or PATCH to a collection.
  if (info.name === '' ? info.verb === 'update' || info.verb === 'patch' : info.verb === 'create') {
    throw methodNotAllowed();
  }
  const reg = deps.registry;
  const now = reg.now();
  const ns = info.namespace;
  switch (info.verb) {
    case 'get': {
      const rendering = renderingFor(req);
      const obj = await reg.get(r, ns, info.name);
      writeObject(res, r, 200, obj, rendering, query, now);
      return;
    }
    case 'list': {
      const rendering = renderingFor(req);
      await serveList(deps, res, r, ns, query, rendering, now);
      return;
    }
    case 'create': {
      const rendering = renderingFor(req);
      const buf = await readBody(req);
      const ctx = writeContext(req, query, 'CreateOptions');
      const body = decodeWriteBody(
        req.headers['content-type'],
        buf,
        { ...ctx, kind: r.kind, version: r.version },
        { group: r.group, version: r.version, kind: r.kind },
      );
      if (info.subresource !== '') throw notFoundPath();
      const obj = await reg.create(r, ns, body, ctx);
      writeObject(res, r, 201, obj, rendering, query, now, warningHeaders(ctx.warnings));
      return;
    }
    case 'update': {
      const rendering = renderingFor(req);
      const buf = await readBody(req);
      const ctx = writeContext(req, query, 'UpdateOptions');
      const body = decodeWriteBody(
        req.headers['content-type'],
        buf,
        { ...ctx, kind: r.kind, version: r.version },
        { group: r.group, version: r.version, kind: r.kind },
      );
      const sub = info.subresource === 'status' || info.subresource === 'finalize' ? info.subresource : '';
      const { object, created } = await reg.update(r, ns, info.name, body, ctx, sub);
      writeObject(res, r, created ? 201 : 200, object, rendering, query, now, warningHeaders(ctx.warnings));
      return;
    }
    case 'patch': {
      const rendering = renderingFor(req);
      const ct = mediaType(req.headers['content-type']);
      const type = PATCH_CONTENT_TYPES[ct];
      if (type === undefined || (type === 'strategic' && r.custom)) {
        req.resume();
        throw statusErrors.unsupportedMediaType(r.custom ? CUSTOM_PATCH_TYPES : BUILTIN_PATCH_TYPES);
      }
      const buf = await readBody(req);
      const patchErrs: FieldError[] =
        type !== 'apply'
          ? query.has('force')
            ? [
                {
                  type: 'FieldValueForbidden',
                  field: 'force',
                  detail: 'may not be specified for non-apply patch',
                },
              ]
            : []
          : (query.get('fieldManager') ?? '') === ''
            ? [required('fieldManager', 'is required for apply patch')]
            : [];
      const ctx = writeContext(req, query, 'PatchOptions', undefined, patchErrs);
      const patch = type === 'apply' ? parseYamlDoc(buf) : parseJson(buf);
      const force = queryTrue(query.get('force'));
      const { object, created } = await reg.patch(r, ns, info.name, type, patch, ctx, {
        subresource: info.subresource === 'status' ? 'status' : '',
        force,
      });
      writeObject(res, r, created ? 201 : 200, object, rendering, query, now, warningHeaders(ctx.warnings));
      return;
    }
    case 'delete': {
      const rendering = renderingFor(req);
      const buf = await readBody(req);
      const opts = deleteOptions(buf, query);
      const ctx = writeContext(req, query, 'DeleteOptions', opts.raw);
      const { object, deleted } = await reg.delete(r, ns, info.name, opts.options, ctx);
      if (deleted && r.resource !== 'pods') {
        writeJson(res, 200, {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Success',
          details: {
            name: info.name,
            ...(r.group === '' ? {} : { group: r.group }),
            kind: r.resource,
            uid: object.metadata.uid ?? '',
          },
        });
        return;
      }
      writeObject(res, r, 200, object, rendering, query, now);
      return;
    }
    case 'deletecollection': {
      if (!r.verbs.includes('deletecollection')) {
        req.resume();
        throw statusErrors.methodNotSupported(r, 'deletecollection');
      }
      const buf = await readBody(req);
      const opts = deleteOptions(buf, query);
      const ctx = writeContext(req, query, 'DeleteOptions', opts.raw);
      const filter = filterFrom(r, ns, query);
      const listed = await listObjects(reg.store, deps.cache, r, { filter, limit: 0 });
      const deleted: KObject[] = [];
      for (const o of listed.items) {
        try {
          const { object } = await reg.delete(r, o.namespace, o.name, opts.options, ctx);
          deleted.push(object);
        } catch (err) {
          if (err instanceof StatusError && err.reason === 'NotFound') continue;
          throw err;
        }
      }
      writeJson(res, 200, {
        kind: r.listKind,
        apiVersion: groupVersion(r),
        metadata: { resourceVersion: String(deps.cache.revision) },
        items: deleted,
      });
      return;
    }
    default:
      throw notFoundPath();
  }
}

function deleteOptions(
  buf: Buffer,
  query: URLSearchParams,
): { options: DeleteOptions; raw: Record<string, unknown> } {
  let raw: Record<string, unknown> = {};
  if (buf.length > 0 && buf.toString('utf8').trim() !== '') {
    const parsed = parseJson(buf);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw statusErrors.badRequest('the body of a DELETE must be a DeleteOptions object');
    }
    raw = parsed as Record<string, unknown>;
    const kind = raw['kind'];
    if (kind !== undefined && kind !== 'DeleteOptions') {
      throw statusErrors.badRequest(
        `the kind in the data (${String(kind)}) does not match the expected kind (DeleteOptions)`,
      );
    }
  }
  const policy = (query.get('propagationPolicy') ?? raw['propagationPolicy']) as unknown;
  const orphan = query.get('orphanDependents') ?? raw['orphanDependents'];
  let propagationPolicy: DeleteOptions['propagationPolicy'];
  if (policy !== undefined && policy !== null && policy !== '') {
    if (policy !== 'Background' && policy !== 'Foreground' && policy !== 'Orphan') {
      throw statusErrors.invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [
        {
          type: 'FieldValueNotSupported',
          field: 'propagationPolicy',
          badValue: policy,
          detail: '',
          supported: ['Foreground', 'Background', 'Orphan', 'nil'],
        },
      ]);
    }
    propagationPolicy = policy;
  } else if (orphan === true || (typeof orphan === 'string' && queryTrue(orphan)))
    propagationPolicy = 'Orphan';
  const pre = raw['preconditions'];
  const preconditions: { uid?: string; resourceVersion?: string } = {};
  if (pre !== undefined && pre !== null) {
    if (typeof pre !== 'object' || Array.isArray(pre))
      throw statusErrors.badRequest('preconditions must be an object');
    const p = pre as Record<string, unknown>;
    if (typeof p['uid'] === 'string') preconditions.uid = p['uid'];
    if (typeof p['resourceVersion'] === 'string') preconditions.resourceVersion = p['resourceVersion'];
  }
  const graceRaw = query.get('gracePeriodSeconds') ?? raw['gracePeriodSeconds'];
  let gracePeriodSeconds: number | undefined;
  if (graceRaw !== undefined && graceRaw !== null) {
    const n = Number(graceRaw);
    if (!Number.isInteger(n))
      throw statusErrors.badRequest(`invalid gracePeriodSeconds ${JSON.stringify(graceRaw)}`);
    gracePeriodSeconds = n;
  }
  return {
    options: {
      ...(propagationPolicy === undefined ? {} : { propagationPolicy }),
      ...(Object.keys(preconditions).length > 0 ? { preconditions } : {}),
      ...(gracePeriodSeconds === undefined ? {} : { gracePeriodSeconds }),
    },
    raw,
  };
}

function parseLimit(query: URLSearchParams): number {
  const raw = query.get('limit');
  if (raw === null || raw === '') return 0;
  if (!/^-?\d+$/.test(raw))
    throw statusErrors.badRequest(`invalid limit ${JSON.stringify(raw)}: must be an integer`);
  const n = Number(raw);
  return n <= 0 ? 0 : Math.min(n, MAX_LIST_LIMIT);
}

async function serveList(
  deps: HandlerDeps,
  res: ServerResponse,
  r: ResourceInfo,
  ns: string,
  query: URLSearchParams,
  rendering: Rendering,
  nowMs: number,
): Promise<void> {
  const filter = filterFrom(r, ns, query);
  const rv = query.get('resourceVersion') ?? undefined;
  const rvm = query.get('resourceVersionMatch') ?? undefined;
  if (query.get('sendInitialEvents') !== null) {
    throw listOptionsInvalid('sendInitialEvents', 'sendInitialEvents is forbidden for list');
  }
  const result = await listObjects(deps.registry.store, deps.cache, r, {
    filter,
    limit: parseLimit(query),
    ...(query.get('continue') ? { continueToken: query.get('continue')! } : {}),
    ...(rv === undefined ? {} : { resourceVersion: rv }),
    ...(rvm === undefined ? {} : { resourceVersionMatch: rvm }),
  });
  const meta = {
    resourceVersion: String(result.revision),
    ...(result.continueToken === undefined ? {} : { continue: result.continueToken }),
  };
  if (rendering.kind === 'table') {
    const objs = result.items.map((o) => JSON.parse(o.json) as KObject);
    writeJson(
      res,
      200,
      table(r, objs, {
        version: rendering.version,
        include: parseIncludeObject(query.get('includeObject')),
        resourceVersion: meta.resourceVersion,
        ...(result.continueToken === undefined ? {} : { continueToken: result.continueToken }),
        nowMs,
      }),
    );
    return;
  }
  if (rendering.kind === 'metadata') {
    writeJson(res, 200, {
      kind: 'PartialObjectMetadataList',
      apiVersion: `meta.k8s.io/${rendering.version}`,
      metadata: meta,
      items: result.items.map((o) => partialMetadata(JSON.parse(o.json) as KObject, rendering.version)),
    });
    return;
  }
  if (rendering.kind === 'yaml') {
    writeJson(
      res,
      200,
      {
        kind: r.listKind,
        apiVersion: groupVersion(r),
        metadata: meta,
        items: result.items.map((o) => JSON.parse(o.json) as unknown),
      },
      { yaml: true },
    );
    return;
  }
  await streamList(res, r, meta, result.items);
}

/**
 * A JSON list written item by item from the cached encodings: no re-serialization, bounded chunks.
 * It waits for the socket to drain between chunks, so a big list (100k pods ≈ 330 MB) is never queued
 * whole in memory and never holds the event loop for its whole length. `items` is a snapshot of
 * immutable cached objects, so waiting does not change what the list contains.
 */
async function streamList(
  res: ServerResponse,
  r: ResourceInfo,
  meta: Record<string, string>,
  items: readonly CachedObject[],
): Promise<void> {
  res.writeHead(200, headers({ 'Content-Type': 'application/json' }));
  let drained = res.write(
    `{"kind":"${r.listKind}","apiVersion":"${groupVersion(r)}","metadata":${JSON.stringify(meta)},"items":[`,
  );
  let chunk: string[] = [];
  let size = 0;
  let first = true;
  for (const item of items) {
    chunk.push(item.json);
    size += item.json.length;
    if (size > 256 * 1024) {
      if (!drained && !(await writable(res))) return; // the client went away
      drained = res.write((first ? '' : ',') + chunk.join(','));
      first = false;
      chunk = [];
      size = 0;
    }
  }
  if (!drained && !(await writable(res))) return;
  const rest = chunk.length === 0 ? '' : (first ? '' : ',') + chunk.join(',');
  res.end(`${rest}]}\n`);
}

/** Resolves true on 'drain', false when the response is closed first. */
function writable(res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => (): void => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

// -------------------------------------------------------------------------------------------- watch

async function serveResourceWatch(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  r: ResourceInfo,
  info: ResourceRequestInfo,
  query: URLSearchParams,
): Promise<void> {
  scopeCheck(r, info);
  if (info.name !== '') throw notFoundPath();
  const rendering = renderingFor(req);
  const filter = filterFrom(r, info.namespace, query);
  const rvRaw = query.get('resourceVersion') ?? '';
  const rv = parseResourceVersion(rvRaw);
  const rvm = query.get('resourceVersionMatch') ?? '';
  const sie = query.get('sendInitialEvents');
  const bookmarks = queryTrue(query.get('allowWatchBookmarks'));
  const sendInitial = queryTrue(sie);
  if (sie !== null) {
    if (rvm !== 'NotOlderThan') {
      throw listOptionsInvalid(
        'resourceVersionMatch',
        'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      );
    }
    if (sendInitial && !bookmarks) {
      throw listOptionsInvalid(
        'allowWatchBookmarks',
        'sendInitialEvents requires setting allowWatchBookmarks to true',
      );
    }
  } else if (rvm !== '') {
    throw listOptionsInvalid(
      'resourceVersionMatch',
      'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
    );
  }
  const timeoutRaw = query.get('timeoutSeconds');
  let timeoutMs: number;
  if (timeoutRaw !== null && timeoutRaw !== '') {
    const n = Number(timeoutRaw);
    if (!Number.isInteger(n) || n < 0)
      throw statusErrors.badRequest(`invalid timeoutSeconds ${JSON.stringify(timeoutRaw)}`);
    timeoutMs = n === 0 ? deps.minRequestTimeoutSeconds * 1000 : n * 1000;
  } else {
    timeoutMs = deps.minRequestTimeoutSeconds * 1000 * (1 + Math.random());
  }
  const watchRendering: WatchRendering =
    rendering.kind === 'table'
      ? { kind: 'table', version: rendering.version, include: parseIncludeObject(query.get('includeObject')) }
      : rendering.kind === 'metadata'
        ? { kind: 'metadata', version: rendering.version }
        : { kind: 'json' };
  let start: Parameters<typeof serveWatch>[1]['start'];
  if (sendInitial) {
    const fresh = rv === undefined || rv === 0 ? await deps.registry.store.currentRevision() : rv;
    start = {
      kind: 'initial',
      freshRevision: rv === 0 ? deps.cache.revision : fresh,
      initialEventsEnd: true,
    };
  } else if (rv === undefined) {
    start = {
      kind: 'initial',
      freshRevision: await deps.registry.store.currentRevision(),
      initialEventsEnd: false,
    };
  } else if (rv === 0) {
    start = { kind: 'initial', initialEventsEnd: false };
  } else {
    start = { kind: 'from', revision: rv };
  }
  await serveWatch(
    res,
    { resource: r, filter, rendering: watchRendering, start, bookmarks, timeoutMs },
    {
      cache: deps.cache,
      metrics: deps.metrics,
      bookmarkIntervalMs: deps.bookmarkIntervalMs,
      maxQueuedBytes: deps.maxWatchQueueBytes,
      now: () => deps.registry.now(),
    },
    deps.watches,
  );
}

export { tableRow, writeRawJson };
