// What a request addresses, parsed from its path and method the way kube-apiserver's
// RequestInfoFactory does: /api/v1/namespaces/{ns}/{resource}/{name}/{subresource},
// /apis/{group}/{version}/..., the legacy /watch/ prefix, and namespaces/{name}/{status|finalize}.
import { statusErrors } from '../../api/status.js';
import { parseFieldSelector, type FieldRequirement } from '../../core/selectors/fields.js';

/** A boolean query parameter as Go's strconv.ParseBool reads it (the Python client sends `True`). */
export const queryTrue = (v: string | null): boolean =>
  v === 'true' || v === '1' || v === 't' || v === 'T' || v === 'TRUE' || v === 'True';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface ResourceRequestInfo {
  readonly isResourceRequest: true;
  readonly path: string;
  readonly verb: Verb;
  readonly apiPrefix: 'api' | 'apis';
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
}

export interface NonResourceRequestInfo {
  readonly isResourceRequest: false;
  readonly path: string;
  /** The lower-cased HTTP method: get, post, put, patch, delete, head, options. */
  readonly verb: string;
  /** Set for discovery paths /api, /api/v1, /apis, /apis/g, /apis/g/v. */
  readonly discovery?: { readonly group?: string; readonly version?: string; readonly legacy: boolean };
}

export type RequestInfo = ResourceRequestInfo | NonResourceRequestInfo;

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** kube's path segment rule for names (validation.IsValidPathSegmentName). */
export function pathSegmentNameError(name: string): string | undefined {
  if (name === '.' || name === '..') return `may not be '${name}'`;
  for (const bad of ['/', '%']) if (name.includes(bad)) return `may not contain '${bad}'`;
  return undefined;
}

function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw statusErrors.badRequest(`invalid URL escape in path segment ${JSON.stringify(raw)}`);
  }
}

export function parseRequestInfo(method: string, pathname: string, query: URLSearchParams): RequestInfo {
  const m = method.toUpperCase();
  const rawParts = pathname
    .split('/')
    .filter((p, i, all) => !(p === '' && (i === 0 || i === all.length - 1)));
  const parts = rawParts.map(decodeSegment);
  const nonResource = (discovery?: NonResourceRequestInfo['discovery']): NonResourceRequestInfo => ({
    isResourceRequest: false,
    path: pathname,
    verb: m.toLowerCase(),
    ...(discovery === undefined ? {} : { discovery }),
  });
  const prefix = parts[0];
  if (prefix !== 'api' && prefix !== 'apis') return nonResource();
  let rest: string[];
  let group = '';
  let version: string;
  if (prefix === 'api') {
    if (parts.length === 1) return nonResource({ legacy: true });
    version = parts[1]!;
    if (parts.length === 2) return nonResource({ legacy: true, version });
    rest = parts.slice(2);
  } else {
    if (parts.length === 1) return nonResource({ legacy: false });
    group = parts[1]!;
    if (parts.length === 2) return nonResource({ legacy: false, group });
    version = parts[2]!;
    if (parts.length === 3) return nonResource({ legacy: false, group, version });
    rest = parts.slice(3);
  }
  if (rest.some((p) => p === '')) throw statusErrors.badRequest(`invalid path ${JSON.stringify(pathname)}`);
  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    rest = rest.slice(1);
  }
  let namespace = '';
  if (
    rest[0] === 'namespaces' &&
    rest.length > 1 &&
    !(rest.length > 2 && NAMESPACE_SUBRESOURCES.has(rest[2]!))
  ) {
    if (rest.length > 2) {
      namespace = rest[1]!;
      rest = rest.slice(2);
    }
  }
  // What is left: resource [name [subresource ...]]; `namespaces/{name}[/status]` stays whole.
  const resource = rest[0] ?? '';
  const name = rest[1] ?? '';
  const subresource = rest.slice(2).join('/');
  const watch = legacyWatch || queryTrue(query.get('watch'));
  let verb: Verb;
  switch (m) {
    case 'GET':
    case 'HEAD':
      verb = watch ? 'watch' : name === '' ? 'list' : 'get';
      break;
    case 'POST':
      verb = 'create';
      break;
    case 'PUT':
      verb = 'update';
      break;
    case 'PATCH':
      verb = 'patch';
      break;
    case 'DELETE':
      verb = name === '' ? 'deletecollection' : 'delete';
      break;
    default:
      return nonResource();
  }
  return {
    isResourceRequest: true,
    path: pathname,
    verb,
    apiPrefix: prefix,
    apiGroup: group,
    apiVersion: version,
    namespace,
    resource,
    subresource,
    name,
  };
}

/**
 * What upstream's request info adds for authorization to a list, watch or deletecollection: its
 * fieldSelector, parsed (none when it does not parse: the list answers that with a 400 once allowed),
 * and for a list or watch that requires metadata.name=X, X as the name (`kubectl get node n1 -w`).
 */
export function selectorAttributes(
  info: ResourceRequestInfo,
  query: URLSearchParams,
): { name: string; fieldSelector?: readonly FieldRequirement[] } {
  const collection = info.verb === 'list' || info.verb === 'watch' || info.verb === 'deletecollection';
  const raw = query.get('fieldSelector');
  if (!collection || raw === null) return { name: info.name };
  let requirements: readonly FieldRequirement[];
  try {
    requirements = parseFieldSelector(raw).requirements;
  } catch {
    return { name: info.name };
  }
  if (requirements.length === 0) return { name: info.name };
  const named = requirements.find((r) => r.field === 'metadata.name' && r.operator !== 'NotEquals');
  const byName =
    info.verb !== 'deletecollection' &&
    info.name === '' &&
    named !== undefined &&
    pathSegmentNameError(named.value) === undefined
      ? named.value
      : info.name;
  return { name: byName, fieldSelector: requirements };
}
