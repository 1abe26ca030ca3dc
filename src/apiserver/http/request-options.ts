// Reading a resource request: scope checks, selectors, write options (dryRun, fieldManager,
// fieldValidation), DeleteOptions, limit, and which rendering the client accepts.
import type { IncomingMessage } from 'node:http';
import { notSupported, tooLong, type FieldError } from '../../api/field-errors.js';
import { isPlainObject } from '../../api/json.js';
import { selectableFields, type ResourceInfo } from '../../api/resources.js';
import { statusErrors } from '../../api/status.js';
import { hasApproval } from '../../api/subresources.js';
import { checkSupportedFields, parseFieldSelector } from '../../core/selectors/fields.js';
import { parseLabelSelector } from '../../core/selectors/labels.js';
import type { DeleteOptions, FieldValidation, WriteContext } from '../registry/registry.js';
import type { WatchFilter } from '../watch-cache/delivery.js';
import type { UserInfo } from '../auth/types.js';
import { decodeDeleteBody } from './body.js';
import { negotiate, type Rendering } from './negotiation.js';
import { pathSegmentNameError, queryTrue, type ResourceRequestInfo } from './request-info.js';
import { notFoundPath } from './types.js';

export function scopeCheck(r: ResourceInfo, info: ResourceRequestInfo): void {
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
  const approvalOk = sub === 'approval' && hasApproval(r) && ['get', 'update', 'patch'].includes(info.verb);
  if (!statusOk && !finalizeOk && !approvalOk) throw notFoundPath();
}

export function filterFrom(r: ResourceInfo, namespace: string, query: URLSearchParams): WatchFilter {
  const label = parseLabelSelector(query.get('labelSelector') ?? '');
  const field = parseFieldSelector(query.get('fieldSelector') ?? '');
  checkSupportedFields(field, selectableFields(r));
  return { namespace, label, field };
}

/** Who each request in flight is (after impersonation), for the registry's write checks. */
const requestUsers = new WeakMap<IncomingMessage, UserInfo>();

/** Records who `req` is: its WriteContext carries the user. */
export function setRequestUser(req: IncomingMessage, user: UserInfo): void {
  requestUsers.set(req, user);
}

/**
 * The write options of a request, validated as kube's Validate{Create,Update,Patch,Delete}Options do:
 * every problem (plus `extra`, the patch-only ones) in one 422 Invalid for `CreateOptions.meta.k8s.io`
 * (or Update/Patch/DeleteOptions).
 */
export function writeContext(
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
    ...(requestUsers.has(req) ? { user: requestUsers.get(req)! } : {}),
  };
}

export function renderingFor(req: IncomingMessage): Rendering {
  return negotiate(req.headers.accept, { table: true, metadata: true });
}

export function deleteOptions(
  buf: Buffer,
  query: URLSearchParams,
  contentType?: string,
): { options: DeleteOptions; raw: Record<string, unknown> } {
  let raw: Record<string, unknown> = {};
  const parsed = decodeDeleteBody(contentType, buf);
  if (parsed !== undefined) {
    if (!isPlainObject(parsed)) {
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
    if (!isPlainObject(pre)) throw statusErrors.badRequest('preconditions must be an object');
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

const MAX_LIST_LIMIT = 1_000_000;

export function parseLimit(query: URLSearchParams): number {
  const raw = query.get('limit');
  if (raw === null || raw === '') return 0;
  if (!/^-?\d+$/.test(raw))
    throw statusErrors.badRequest(`invalid limit ${JSON.stringify(raw)}: must be an integer`);
  const n = Number(raw);
  return n <= 0 ? 0 : Math.min(n, MAX_LIST_LIMIT);
}
