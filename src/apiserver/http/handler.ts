// The API server's request handler: authentication, authorization, routing and the REST verbs.
// Everything it answers with on failure is a Kubernetes Status (respond.ts maps errors in one place).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { required, type FieldError } from '../../api/field-errors.js';
import type { KObject } from '../../api/object.js';
import { findResource, groupVersion, type ResourceInfo } from '../../api/resources.js';
import { StatusError, statusErrors } from '../../api/status.js';
import { listObjects, waitForResourceVersion } from '../registry/lister.js';
import { PATCH_CONTENT_TYPES } from '../registry/patch.js';
import type { WriteContext } from '../registry/registry.js';
import { decodeWriteBody, parseJson, parseYamlDoc, readBody } from './body.js';
import { mediaType, type Rendering } from './negotiation.js';
import { metricVerb } from './metric-verb.js';
import { parseRequestInfo, queryTrue, selectorAttributes, type ResourceRequestInfo } from './request-info.js';
import { toStatus, warningHeaders, writeJson, writeStatus } from './respond.js';
import { parseIncludeObject, partialMetadata, table } from './table.js';
import {
  type AuthorizationAttributes,
  type HandlerDeps,
  type Identity,
  notFoundPath,
  methodNotAllowed,
  nonResourceAttributes,
  type ResourceHandler,
} from './types.js';
import { impersonate, isImpersonationHeader } from '../auth/impersonation.js';
import { ALL_AUTHENTICATED, ANONYMOUS_USER } from '../auth/types.js';
import { serveNonResource } from './non-resource.js';
import { closeWithConnection } from './hangup.js';
import {
  scopeCheck,
  filterFrom,
  writeContext,
  renderingFor,
  deleteOptions,
  setRequestUser,
} from './request-options.js';
import { serveList } from './list.js';
import { serveResourceWatch } from './watch-request.js';
import { withZeroValues } from '../../api/schema/zero-values.js';
import { isExtraSubresource, serveBinding, serveSubresource } from './subresources.js';
import { isReviewCreate, isSelfReview, reviewOf, serveReview } from './reviews.js';
import { schemaOf } from '../registry/decode.js';

const PUBLIC_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);
const isPublic = (path: string): boolean =>
  PUBLIC_PATHS.has(path) || [...PUBLIC_PATHS].some((p) => path.startsWith(`${p}/`));

const mountFor = (mounts: HandlerDeps['mounts'], path: string) =>
  mounts?.find((m) => path === m.prefix || path.startsWith(`${m.prefix}/`));

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

export function createHandler(deps: HandlerDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    closeWithConnection(req, res);
    const kind = { request_kind: READ_ONLY.has(req.method ?? '') ? 'readOnly' : 'mutating' };
    deps.metrics.inflight.inc(kind);
    let held = true;
    const release = (): void => {
      if (held) deps.metrics.inflight.dec(kind);
      held = false;
    };
    void handle(deps, req, res, release).finally(release);
  };
}

const READ_ONLY = new Set(['GET', 'HEAD', 'OPTIONS']);

interface MetricLabels {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  scope: string;
}

/** `release`: the request stops counting as in flight (a watch, once it is established as long-running). */
async function handle(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  release: () => void,
): Promise<void> {
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
    const authenticated = await deps.authenticate(req);
    if (authenticated === 'invalid' || (authenticated === 'anonymous' && !isPublic(path))) {
      throw statusErrors.unauthorized();
    }
    const who = impersonation(deps, req, authenticated, path);
    if (who !== 'anonymous') setRequestUser(req, who);
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
            path,
            ...selectorAttributes(info, query),
          }
        : nonResourceAttributes(who, info.verb, path);
      // Every authenticated user may ask who they are and what they may do (kube's system:basic-user), of
      // the API server itself: a server of a subset (the wrapper) leaves them to its policy.
      const selfReview =
        deps.resources === undefined &&
        info.isResourceRequest &&
        isSelfReview(info) &&
        who.groups.includes(ALL_AUTHENTICATED);
      if (!selfReview && !deps.authorize(attrs)) {
        if (deps.forward !== undefined && (await deps.forward(req, res, who, attrs))) return;
        throw forbidden(deps, attrs);
      }
    }
    const mount = info.isResourceRequest ? undefined : mountFor(deps.mounts, path);
    if (mount !== undefined) {
      // It may stream (server-sent events): a long-running request, as a watch is, not one in flight.
      longRunning = true;
      release();
      mount.handler(req, res);
      return;
    }
    if (!info.isResourceRequest) {
      await serveNonResource(deps, req, res, path, query, info.discovery, who);
      return;
    }
    const r = findResource(info.apiGroup, info.apiVersion, info.resource);
    labels.verb = metricVerb(info, req);
    labels.group = info.apiGroup;
    labels.version = info.apiVersion;
    labels.resource = info.resource;
    labels.subresource = info.subresource;
    const review = deps.resources === undefined ? reviewOf(info) : undefined;
    if (review !== undefined) {
      labels.scope = 'cluster';
      if (!isReviewCreate(info) || who === 'anonymous') {
        req.resume();
        throw info.namespace === '' && info.name === '' && info.subresource === '' && who !== 'anonymous'
          ? statusErrors.methodNotSupported(review, info.verb)
          : notFoundPath();
      }
      await serveReview(review, req, res, who, deps.authorize, deps.rulesFor, deps.reviewToken);
      return;
    }
    if (isLegacyBindings(info)) {
      labels.scope = 'namespace';
      await serveBinding(deps, req, res, info.namespace, '', query);
      return;
    }
    if (r === undefined) throw notFoundPath();
    labels.scope = r.namespaced ? (info.namespace === '' ? 'cluster' : 'namespace') : 'cluster';
    if (info.verb === 'watch') {
      longRunning = true;
      release();
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
    await serveResource(deps, req, res, r, info, query, who === 'anonymous' ? undefined : who);
  } catch (err) {
    const status = toStatus(err, deps.log);
    if (longRunning) deps.metrics.requests.inc({ ...labels, code: String(status.code) });
    if (!res.headersSent && !req.complete) req.resume();
    writeStatus(res, status, status.code === 401 ? { 'WWW-Authenticate': 'Bearer realm="svcplane"' } : {});
  }
}

/**
 * The identity a request goes on as: the authenticated one, or the one its Impersonate-* headers name
 * when the requester may impersonate it (400 for malformed headers, 403 when it may not).
 */
function impersonation(
  deps: HandlerDeps,
  req: IncomingMessage,
  who: Identity | 'anonymous',
  path: string,
): Identity | 'anonymous' {
  if (!Object.keys(req.headers).some(isImpersonationHeader)) return who;
  const result = impersonate(
    who === 'anonymous' ? ANONYMOUS_USER : who,
    req.headersDistinct,
    path,
    deps.authorize,
  );
  switch (result.kind) {
    case 'none':
      return who;
    case 'bad-request':
      throw statusErrors.badRequest(result.message);
    case 'forbidden':
      throw forbidden(deps, result.attrs);
    case 'user':
      // As upstream, the headers are gone once applied: nothing after this step sees them.
      for (const h of Object.keys(req.headers)) if (isImpersonationHeader(h)) delete req.headers[h];
      return result.user;
  }
}

/** POST /api/v1/namespaces/{ns}/bindings: the legacy way to bind a pod, named in the body. */
const isLegacyBindings = (info: ResourceRequestInfo): boolean =>
  info.apiGroup === '' &&
  info.apiVersion === 'v1' &&
  info.resource === 'bindings' &&
  info.name === '' &&
  info.subresource === '' &&
  info.verb === 'create' &&
  info.namespace !== '';

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
      writeJson(res, code, withZeroValues(obj, schemaOf(r)), { yaml: true, extraHeaders: extra });
      return;
    default:
      writeJson(res, code, withZeroValues(obj, schemaOf(r)), { extraHeaders: extra });
  }
}

/** A POST or PUT body decoded as an object of `r` (JSON, YAML or protobuf). */
const decodeBodyFor = (r: ResourceInfo, req: IncomingMessage, buf: Buffer, ctx: WriteContext): unknown =>
  decodeWriteBody(
    req.headers['content-type'],
    buf,
    { ...ctx, kind: r.kind, version: r.version },
    { group: r.group, version: r.version, kind: r.kind },
  );

const serveResource = async (
  ...[deps, req, res, r, info, query, user]: [...Parameters<ResourceHandler>, Identity | undefined]
): Promise<void> => {
  if (isExtraSubresource(r, info)) {
    scopeCheck(r, { ...info, subresource: '' });
    await serveSubresource(deps, req, res, r, info, query);
    return;
  }
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
      await waitForResourceVersion(deps.cache, query.get('resourceVersion') ?? undefined);
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
      const ctx = { ...writeContext(req, query, 'CreateOptions'), ...(user === undefined ? {} : { user }) };
      const body = decodeBodyFor(r, req, buf, ctx);
      if (info.subresource !== '') throw notFoundPath();
      const obj = await reg.create(r, ns, body, ctx);
      writeObject(res, r, 201, obj, rendering, query, now, warningHeaders(ctx.warnings));
      return;
    }
    case 'update': {
      const rendering = renderingFor(req);
      const buf = await readBody(req);
      const ctx = writeContext(req, query, 'UpdateOptions');
      const body = decodeBodyFor(r, req, buf, ctx);
      const sub =
        info.subresource === 'status' || info.subresource === 'finalize' || info.subresource === 'approval'
          ? info.subresource
          : '';
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
        subresource: info.subresource === 'status' || info.subresource === 'approval' ? info.subresource : '',
        force,
      });
      writeObject(res, r, created ? 201 : 200, object, rendering, query, now, warningHeaders(ctx.warnings));
      return;
    }
    case 'delete': {
      const rendering = renderingFor(req);
      const buf = await readBody(req);
      const opts = deleteOptions(buf, query, req.headers['content-type']);
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
      const opts = deleteOptions(buf, query, req.headers['content-type']);
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
};
