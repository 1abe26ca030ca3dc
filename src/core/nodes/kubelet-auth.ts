// How the kubelet's API authorizes a request (pkg/kubelet/server/auth.go), and the caches it keeps, as
// pure functions over a clock:
//
//   - the attributes: verb from the HTTP method, resource `nodes`, name the node, subresource from the
//     path (/stats → stats, /metrics → metrics, /logs → log, /checkpoint → checkpoint, anything else,
//     /pods and /healthz included, → proxy);
//   - the 403 text: `Forbidden (user=U, verb=V, resource=R, subresource=S)`;
//   - TTL caches: token reviews 2 min (--authentication-token-webhook-cache-ttl, successes and
//     failures alike), access reviews 5 min when allowed and 30 s when not
//     (--authorization-webhook-cache-authorized-ttl / -unauthorized-ttl);
//   - svcplane's offline fallback, which the kubelet does not have: the last ALLOWED decision per user,
//     groups and attributes, kept on disk (ROOT_DIR/NAME/authorizations.json) and used only when the
//     SubjectAccessReview cannot be sent, for at most OFFLINE_DECISION_MAX_AGE_MS (24 h).
import { isPlainObject } from '../../api/json.js';
import type { AccessRequest, AccessUser } from '../authz/access-request.js';

export const TOKEN_REVIEW_TTL_MS = 2 * 60_000;
export const AUTHORIZED_TTL_MS = 5 * 60_000;
export const UNAUTHORIZED_TTL_MS = 30_000;
/** How old an allowed decision may be and still answer while the API server cannot be asked. */
export const OFFLINE_DECISION_MAX_AGE_MS = 24 * 60 * 60_000;

const VERBS: Readonly<Record<string, string>> = {
  GET: 'get',
  HEAD: 'get',
  POST: 'create',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

const SUBRESOURCES: ReadonlyArray<readonly [string, string]> = [
  ['/stats', 'stats'],
  ['/metrics', 'metrics'],
  ['/logs', 'log'],
  ['/checkpoint', 'checkpoint'],
];

const underPath = (path: string, prefix: string): boolean => path === prefix || path.startsWith(`${prefix}/`);

/** What a request to node `node`'s kubelet API asks (the kubelet's GetRequestAttributes). */
export function kubeletAttributes(
  user: AccessUser,
  method: string,
  path: string,
  node: string,
): AccessRequest {
  const sub = SUBRESOURCES.find(([prefix]) => underPath(path, prefix))?.[1] ?? 'proxy';
  return {
    user,
    verb: VERBS[method.toUpperCase()] ?? '',
    resourceRequest: true,
    apiGroup: '',
    namespace: '',
    resource: 'nodes',
    subresource: sub,
    name: node,
    path,
  };
}

/** The kubelet's 403 text. */
export const kubeletForbiddenMessage = (a: AccessRequest): string =>
  `Forbidden (user=${a.user.name}, verb=${a.verb}, resource=${a.resource}, subresource=${a.subresource})`;

/** The cache key of an access review: who (name and sorted groups) asks what. */
export const decisionKey = (a: AccessRequest): string =>
  JSON.stringify([
    a.user.name,
    [...a.user.groups].sort(),
    a.verb,
    a.apiGroup,
    a.resource,
    a.subresource,
    a.namespace,
    a.name,
  ]);

/** A map whose entries expire: the webhook caches. */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresMs: number }>();

  constructor(private readonly maxEntries = 4096) {}

  get(key: string, nowMs: number): V | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.expiresMs <= nowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, nowMs: number, ttlMs: number): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      // The oldest entry goes first (insertion order).
      const first = this.entries.keys().next();
      if (first.done !== true) this.entries.delete(first.value);
    }
    this.entries.set(key, { value, expiresMs: nowMs + ttlMs });
  }
}

/** The allowed decisions kept for offline use: decision key → when the API server last allowed it. */
export class OfflineDecisions {
  private readonly allowed = new Map<string, number>();

  /** Records an allowed decision; returns whether what is kept changed enough to be written again. */
  allow(key: string, nowMs: number): boolean {
    const before = this.allowed.get(key);
    this.allowed.set(key, nowMs);
    // Refreshing an entry is worth a write once it is older than the cache that would ask again.
    return before === undefined || nowMs - before >= AUTHORIZED_TTL_MS;
  }

  /** Forgets a decision the API server now denies; returns whether one was kept. */
  deny(key: string): boolean {
    return this.allowed.delete(key);
  }

  /** When `key` was last allowed, if that is at most OFFLINE_DECISION_MAX_AGE_MS ago. */
  allowedAt(key: string, nowMs: number): number | undefined {
    const at = this.allowed.get(key);
    return at !== undefined && nowMs - at <= OFFLINE_DECISION_MAX_AGE_MS && at <= nowMs ? at : undefined;
  }

  /** The JSON document (expired entries dropped). */
  encode(nowMs: number): string {
    const entries = [...this.allowed]
      .filter(([, at]) => nowMs - at <= OFFLINE_DECISION_MAX_AGE_MS)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([key, allowedAtMs]) => ({ key, allowedAtMs }));
    return `${JSON.stringify({ kind: 'KubeletAuthorizations', entries })}\n`;
  }

  /** Reads what encode wrote; a document that does not parse is a one-line problem string. */
  static decode(text: string): OfflineDecisions | string {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      return 'not JSON';
    }
    if (!isPlainObject(doc) || doc['kind'] !== 'KubeletAuthorizations' || !Array.isArray(doc['entries'])) {
      return 'not a KubeletAuthorizations document';
    }
    const out = new OfflineDecisions();
    for (const e of doc['entries']) {
      if (!isPlainObject(e) || typeof e['key'] !== 'string' || !Number.isSafeInteger(e['allowedAtMs'])) {
        return `entry ${JSON.stringify(e)} is not {key, allowedAtMs}`;
      }
      out.allowed.set(e['key'], e['allowedAtMs'] as number);
    }
    return out;
  }
}
