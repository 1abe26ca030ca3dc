// POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token: an authentication/v1 TokenRequest, answered
// as kube-apiserver's TokenREST does: the body's name and namespace must match the URL (422), the
// ServiceAccount must exist (404), audiences default to the server's, expirationSeconds (default 3600)
// is at least 600 (422) and is cut to --service-account-max-token-expiration (with a warning), and a
// boundObjectRef names an existing Pod (running as this ServiceAccount) or Node, whose UID, when given,
// must match (409). svcplane serves no Secrets: a Secret reference is not found (404), as upstream
// answers for a missing Secret. The answer is 201 with status.token and status.expirationTimestamp.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isPlainObject } from '../../api/json.js';
import { formatTimestamp } from '../../api/printers/index.js';
import { mustFindResource } from '../../api/resources.js';
import { statusErrors } from '../../api/status.js';
import { tokenRequest as tokenRequestSchema } from '../../api/schema/subresources.js';
import { TOKEN_REQUEST_KIND } from '../../api/subresources.js';
import { checkBodyTypes } from '../registry/decode.js';
import {
  DEFAULT_TOKEN_SECONDS,
  validateTokenRequestSpec,
  validateTokenRequestTarget,
} from '../../api/validation/token-request.js';
import type { BoundKind, NamedUid } from '../../core/serviceaccount/token-claims.js';
import { decodeWriteBody, readBody } from './body.js';
import type { ResourceRequestInfo } from './request-info.js';
import { writeContext } from './request-options.js';
import { warningHeaders, writeJson } from './respond.js';
import { methodNotAllowed, notFoundPath, type HandlerDeps } from './types.js';

const SERVICE_ACCOUNTS = mustFindResource('', 'serviceaccounts');
const PODS = mustFindResource('', 'pods');
const NODES = mustFindResource('', 'nodes');
const TOKEN_GK = { group: TOKEN_REQUEST_KIND.group, kind: TOKEN_REQUEST_KIND.kind };

type Json = Record<string, unknown>;
const record = (v: unknown): Json => (isPlainObject(v) ? v : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export async function serveTokenRequest(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  info: ResourceRequestInfo,
  query: URLSearchParams,
): Promise<void> {
  const tokens = deps.serviceAccountTokens;
  if (tokens === undefined || !tokens.canIssue) {
    req.resume();
    throw notFoundPath();
  }
  if (info.verb !== 'create') {
    req.resume();
    throw methodNotAllowed();
  }
  const ns = info.namespace;
  const name = info.name;
  const buf = await readBody(req);
  const ctx = writeContext(req, query, 'CreateOptions');
  const body = decodeWriteBody(
    req.headers['content-type'],
    buf,
    { ...ctx, kind: TOKEN_REQUEST_KIND.kind, version: TOKEN_REQUEST_KIND.version },
    TOKEN_REQUEST_KIND,
  );
  if (!isPlainObject(body))
    throw statusErrors.badRequest('the body of a token request must be a TokenRequest object');
  const { kind, apiVersion } = body;
  if (
    (kind !== undefined && kind !== TOKEN_REQUEST_KIND.kind) ||
    (apiVersion !== undefined && apiVersion !== 'authentication.k8s.io/v1')
  ) {
    throw statusErrors.badRequest(
      `the body holds ${str(apiVersion)} ${str(kind)}, but this endpoint takes authentication.k8s.io/v1 TokenRequest`,
    );
  }
  checkBodyTypes(TOKEN_REQUEST_KIND, body, tokenRequestSchema, 'body');
  const meta = record(body['metadata']);
  const targetErrs = validateTokenRequestTarget(meta, name, ns);
  if (targetErrs.length > 0) throw statusErrors.invalid(TOKEN_GK, name, targetErrs);

  const sa = await deps.registry.get(SERVICE_ACCOUNTS, ns, name);
  const spec = record(body['spec']);
  const given = Array.isArray(spec['audiences'])
    ? spec['audiences'].filter((a): a is string => typeof a === 'string')
    : [];
  const audiences = given.length > 0 ? given : [...tokens.config.audiences];
  const rawExp = spec['expirationSeconds'];
  const requested = typeof rawExp === 'number' && rawExp !== 0 ? Math.trunc(rawExp) : DEFAULT_TOKEN_SECONDS;
  const specErrs = validateTokenRequestSpec(requested);
  if (specErrs.length > 0) throw statusErrors.invalid(TOKEN_GK, '', specErrs);

  const ref = isPlainObject(spec['boundObjectRef']) ? spec['boundObjectRef'] : undefined;
  const bound = ref === undefined ? undefined : await boundObject(deps, ns, name, ref);

  const expirationSeconds = tokens.capExpiration(requested);
  const warnings =
    expirationSeconds < requested
      ? [`requested expiration of ${requested} seconds shortened to ${expirationSeconds} seconds`]
      : [];
  const serviceAccount: NamedUid = { name, uid: sa.metadata.uid ?? '' };
  const nowMs = deps.registry.now();
  const issued = await tokens.issue({ namespace: ns, serviceAccount, audiences, expirationSeconds, bound });
  writeJson(
    res,
    201,
    {
      kind: TOKEN_REQUEST_KIND.kind,
      apiVersion: 'authentication.k8s.io/v1',
      metadata: {
        name: str(meta['name']) || name,
        namespace: str(meta['namespace']) || ns,
        creationTimestamp: formatTimestamp(nowMs),
      },
      spec: {
        audiences,
        expirationSeconds,
        boundObjectRef:
          ref === undefined ? null : { ...ref, ...(bound === undefined ? {} : { uid: bound.ref.uid }) },
      },
      status: { token: issued.token, expirationTimestamp: formatTimestamp(issued.expiresAt * 1000) },
    },
    { extraHeaders: warningHeaders([...ctx.warnings, ...warnings]) },
  );
}

/** The object a token is bound to, checked as TokenREST checks it. */
async function boundObject(
  deps: HandlerDeps,
  ns: string,
  saName: string,
  ref: Json,
): Promise<{ kind: BoundKind; ref: NamedUid }> {
  const kind = str(ref['kind']);
  const apiVersion = str(ref['apiVersion']);
  const refName = str(ref['name']);
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  let uid: string;
  let boundKind: BoundKind;
  if (group === '' && kind === 'Pod') {
    const pod = await deps.registry.get(PODS, ns, refName);
    if (str(record(pod['spec'])['serviceAccountName']) !== saName) {
      throw statusErrors.badRequest(
        `cannot bind token for serviceaccount ${JSON.stringify(saName)} to pod running with different serviceaccount name.`,
      );
    }
    uid = pod.metadata.uid ?? '';
    boundKind = 'Pod';
  } else if (group === '' && kind === 'Node') {
    const node = await deps.registry.get(NODES, '', refName);
    uid = node.metadata.uid ?? '';
    boundKind = 'Node';
  } else if (group === '' && kind === 'Secret') {
    throw statusErrors.notFound({ group: '', resource: 'secrets' }, refName);
  } else {
    const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
    throw statusErrors.badRequest(
      `cannot bind token for serviceaccount ${JSON.stringify(saName)} to object of type ${group === '' ? '' : `${group}/`}${version}, Kind=${kind}`,
    );
  }
  const wanted = str(ref['uid']);
  if (wanted !== '' && wanted !== uid) {
    throw statusErrors.conflict(
      { group, resource: kind },
      refName,
      `the UID in the bound object reference (${wanted}) does not match the UID in record. The object might have been deleted and then recreated`,
    );
  }
  return { kind: boundKind, ref: { name: refName, uid } };
}
