// The subresources beyond status: `/scale` (autoscaling/v1 Scale) on Deployments and ReplicaSets,
// `pods/{name}/binding` and the legacy `namespaces/{ns}/bindings` (v1 Binding).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FieldError } from '../../api/field-errors.js';
import { required } from '../../api/field-errors.js';
import { isPlainObject } from '../../api/json.js';
import type { ResourceInfo } from '../../api/resources.js';
import { binding as bindingSchema, scale as scaleSchema } from '../../api/schema/subresources.js';
import { withZeroValues } from '../../api/schema/zero-values.js';
import { statusErrors } from '../../api/status.js';
import { BINDING_KIND, SCALE_KIND, hasBinding, hasScale, hasToken } from '../../api/subresources.js';
import { readBinding } from '../registry/binding.js';
import { checkBodyTypes } from '../registry/decode.js';
import { patchSetsResourceVersion } from '../registry/kind-rules.js';
import { applyPatch, PATCH_CONTENT_TYPES } from '../registry/patch.js';
import type { Scale } from '../registry/scale.js';
import { decodeWriteBody, parseJson, parseYamlDoc, readBody } from './body.js';
import { mediaType, negotiate } from './negotiation.js';
import type { ResourceRequestInfo } from './request-info.js';
import { warningHeaders, writeJson } from './respond.js';
import { writeContext } from './request-options.js';
import { serveTokenRequest } from './token-request.js';
import { notFoundPath, type HandlerDeps, type ResourceHandler } from './types.js';

/** Whether this request is for a subresource served here (scale, binding or token). */
export const isExtraSubresource = (r: ResourceInfo, info: ResourceRequestInfo): boolean =>
  (info.subresource === 'scale' && hasScale(r)) ||
  (info.subresource === 'binding' && hasBinding(r)) ||
  (info.subresource === 'token' && hasToken(r));

const SCALE_PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];

/** Neither JSON nor YAML responses carry anything a Table or metadata rendering could show. */
function rendering(req: IncomingMessage): 'json' | 'yaml' {
  const r = negotiate(req.headers.accept, {});
  return r.kind === 'yaml' ? 'yaml' : 'json';
}

function writeScale(
  res: ServerResponse,
  req: IncomingMessage,
  scale: Scale,
  extra: Record<string, string | string[]> = {},
): void {
  writeJson(res, 200, withZeroValues(scale, scaleSchema), {
    yaml: rendering(req) === 'yaml',
    extraHeaders: extra,
  });
}

export const serveSubresource: ResourceHandler = async (deps, req, res, r, info, query) => {
  if (info.subresource === 'binding') {
    if (info.verb !== 'create') {
      req.resume();
      throw statusErrors.methodNotSupported({ group: '', resource: 'pods/binding' }, info.verb);
    }
    await serveBinding(deps, req, res, info.namespace, info.name, query);
    return;
  }
  if (info.subresource === 'token') {
    await serveTokenRequest(deps, req, res, info, query);
    return;
  }
  const reg = deps.registry;
  const ns = info.namespace;
  switch (info.verb) {
    case 'get':
      rendering(req);
      writeScale(res, req, await reg.getScale(r, ns, info.name));
      return;
    case 'update': {
      rendering(req);
      const buf = await readBody(req);
      const ctx = writeContext(req, query, 'UpdateOptions');
      const body = decodeWriteBody(req.headers['content-type'], buf, {
        ...ctx,
        kind: SCALE_KIND.kind,
        version: SCALE_KIND.version,
      });
      checkScaleBody(body);
      checkBodyTypes(SCALE_KIND, body, scaleSchema, 'body');
      const scale = await reg.updateScale(r, ns, info.name, ctx, () => body);
      writeScale(res, req, scale, warningHeaders(ctx.warnings));
      return;
    }
    case 'patch': {
      rendering(req);
      const type = PATCH_CONTENT_TYPES[mediaType(req.headers['content-type'])];
      if (type === undefined) {
        req.resume();
        throw statusErrors.unsupportedMediaType(SCALE_PATCH_TYPES);
      }
      const buf = await readBody(req);
      const extra: FieldError[] =
        type === 'apply'
          ? (query.get('fieldManager') ?? '') === ''
            ? [required('fieldManager', 'is required for apply patch')]
            : []
          : query.has('force')
            ? [
                {
                  type: 'FieldValueForbidden',
                  field: 'force',
                  detail: 'may not be specified for non-apply patch',
                },
              ]
            : [];
      const ctx = writeContext(req, query, 'PatchOptions', undefined, extra);
      const patch = type === 'apply' ? parseYamlDoc(buf) : parseJson(buf);
      // The patched Scale carries the resourceVersion it was read at; only one the patch itself sets is
      // a precondition (otherwise a conflict re-applies the patch to the newer object, as kube does).
      const pinned = patchSetsResourceVersion(patch);
      const unpinned = (scale: unknown): unknown =>
        pinned || !isPlainObject(scale) || !isPlainObject(scale['metadata'])
          ? scale
          : { ...scale, metadata: { ...scale['metadata'], resourceVersion: undefined } };
      const scale = await reg.updateScale(r, ns, info.name, ctx, (current) => {
        if (type !== 'apply') {
          const patched = applyPatch(type, current as never, patch, scaleSchema);
          checkBodyTypes(SCALE_KIND, patched, scaleSchema, 'patch');
          return unpinned(patched);
        }
        // Server-side apply of a Scale: the fields it sets are merged over the current Scale (field
        // ownership is recorded on the object as for any update; apply conflicts are not detected).
        if (!isPlainObject(patch)) throw statusErrors.badRequest('the apply configuration must be an object');
        checkScaleBody(patch);
        checkBodyTypes(SCALE_KIND, patch, scaleSchema, 'apply');
        return unpinned(applyPatch('merge', current as never, { ...patch, metadata: null }, scaleSchema));
      });
      writeScale(res, req, scale, warningHeaders(ctx.warnings));
      return;
    }
    default:
      req.resume();
      throw statusErrors.methodNotSupported({ group: r.group, resource: `${r.resource}/scale` }, info.verb);
  }
};

function checkScaleBody(body: unknown): void {
  if (!isPlainObject(body))
    throw statusErrors.badRequest('the body of a scale request must be a Scale object');
  const { kind, apiVersion } = body;
  if (
    (kind !== undefined && kind !== 'Scale') ||
    (apiVersion !== undefined && apiVersion !== 'autoscaling/v1')
  ) {
    throw statusErrors.badRequest(
      `the body holds ${String(apiVersion ?? '')} ${String(kind ?? '')}, but this endpoint takes autoscaling/v1 Scale`,
    );
  }
}

/**
 * POST .../pods/{name}/binding (name given) or .../bindings (name from the body). Answers 201 with a
 * Success Status, as kube-apiserver does.
 */
export async function serveBinding(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  namespace: string,
  urlName: string,
  query: URLSearchParams,
): Promise<void> {
  if (namespace === '') throw notFoundPath();
  const buf = await readBody(req);
  const ctx = writeContext(req, query, 'CreateOptions');
  const body = decodeWriteBody(req.headers['content-type'], buf, {
    ...ctx,
    kind: BINDING_KIND.kind,
    version: BINDING_KIND.version,
  });
  checkBodyTypes(BINDING_KIND, body, bindingSchema, 'body');
  const binding = readBinding(body);
  if (urlName !== '' && binding.name !== urlName) {
    throw statusErrors.badRequest('name in URL does not match name in Binding object');
  }
  if (binding.namespace !== undefined && binding.namespace !== '' && binding.namespace !== namespace) {
    throw statusErrors.badRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  if (binding.name === '') throw statusErrors.badRequest('name is required in the Binding object');
  await deps.registry.bind(namespace, binding, ctx);
  writeJson(
    res,
    201,
    { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 },
    { extraHeaders: warningHeaders(ctx.warnings) },
  );
}
