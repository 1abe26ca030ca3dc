// The kubelet's read API for one simulated node (pkg/kubelet/server/server.go), on the node's
// InternalIP and --kubelet-port, over TLS:
//
//   GET /pods     200, a v1 PodList of the pods the node runs, as it sees them now (offline too)
//   GET /healthz  200 "ok"
//   other paths 404, other methods 405 (as go-restful answers them, before authentication)
//
// Every request is authenticated and authorized as the kubelet's auth filter does
// (pkg/kubelet/server/auth.go, with --authentication-token-webhook and --authorization-mode Webhook):
//   - a client certificate verified against --client-ca-file is the user CN with groups O (plus
//     system:authenticated); else a bearer token is reviewed with a TokenReview (cached 2 min); else 401;
//   - the request is authorized with a SubjectAccessReview for verb get on nodes/proxy name NODE
//     (cached 5 min when allowed, 30 s when not); denied → 403 naming user, verb, resource, subresource.
// Offline (the reviews cannot be sent), where the kubelet would answer 401/500: a certificate still
// authenticates (it is checked here); a token whose review is not cached is 401 saying why; access is
// granted by the last ALLOWED decision for the same user, groups and attributes, kept on disk, if it is
// at most 24 h old, and is otherwise 403 saying why.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { recordOf as rec } from '../api/json.js';
import type { KObject } from '../api/object.js';
import { statusErrors, type StatusError } from '../api/status.js';
import type { AccessRequest } from '../core/authz/access-request.js';
import { bearerToken, certificateUser, withAuthenticatedGroup } from '../core/authz/credentials.js';
import type { OfflineDecisions } from '../core/nodes/kubelet-auth.js';
import {
  AUTHORIZED_TTL_MS,
  decisionKey,
  kubeletAttributes,
  kubeletForbiddenMessage,
  TOKEN_REVIEW_TTL_MS,
  TtlCache,
  UNAUTHORIZED_TTL_MS,
} from '../core/nodes/kubelet-auth.js';
import { ApiError, type Client } from '../runtime/client.js';
import { listen } from '../runtime/http-endpoint.js';
import type { Logger } from '../runtime/logger.js';

export type KubeletAuthorizationMode = 'Webhook' | 'AlwaysAllow';

/** A user as a review names it. */
export interface ReviewedUser {
  readonly name: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** The review could not be sent: the API server is unreachable (or answered 5xx). */
export class ReviewUnavailable extends Error {
  override readonly name = 'ReviewUnavailable';
}

/** What the kubelet asks the API server (its authentication and authorization webhooks). */
export interface KubeletReviews {
  /** The user a token authenticates as; undefined when the API server says it does not. */
  tokenReview(token: string): Promise<ReviewedUser | undefined>;
  /** Whether `a.user` may do `a`, and the reason the API server gave. */
  accessReview(
    a: AccessRequest & { readonly user: ReviewedUser },
  ): Promise<{ allowed: boolean; reason: string }>;
}

/** A failure that means the API server cannot be asked (no answer, or a 5xx), as ReviewUnavailable. */
function unavailable(err: unknown): unknown {
  if (err instanceof ApiError && err.code < 500) return err;
  return new ReviewUnavailable(err instanceof Error ? err.message : String(err), { cause: err });
}

/** POSTs a review and hands back its status; failing to reach the API server is ReviewUnavailable. */
async function review(client: Client, path: string, body: object): Promise<Record<string, unknown>> {
  try {
    return rec(rec(await client.post(path, body))['status']);
  } catch (err) {
    throw unavailable(err);
  }
}

/** The reviews through `client` (authentication.k8s.io/v1 TokenReview, authorization.k8s.io/v1 SubjectAccessReview). */
export function apiReviews(client: Client): KubeletReviews {
  return {
    async tokenReview(token) {
      const status = await review(client, '/apis/authentication.k8s.io/v1/tokenreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        spec: { token },
      });
      const user = rec(status['user']);
      if (status['authenticated'] !== true || typeof user['username'] !== 'string') return undefined;
      return {
        name: user['username'],
        ...(typeof user['uid'] === 'string' ? { uid: user['uid'] } : {}),
        groups: Array.isArray(user['groups']) ? user['groups'].map(String) : [],
        ...(user['extra'] !== undefined ? { extra: user['extra'] as Record<string, string[]> } : {}),
      };
    },
    async accessReview(a) {
      const status = await review(client, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: a.user.name,
          ...(a.user.uid === undefined || a.user.uid === '' ? {} : { uid: a.user.uid }),
          groups: [...a.user.groups],
          ...(a.user.extra === undefined ? {} : { extra: a.user.extra }),
          resourceAttributes: {
            verb: a.verb,
            group: a.apiGroup,
            version: 'v1',
            resource: a.resource,
            subresource: a.subresource,
            name: a.name,
          },
        },
      });
      return {
        allowed: status['allowed'] === true && status['denied'] !== true,
        reason: typeof status['reason'] === 'string' ? status['reason'] : '',
      };
    },
  };
}

export interface KubeletServerOptions {
  readonly node: string;
  /** The node's InternalIP. */
  readonly host: string;
  /** --kubelet-port (0: any free port, for tests). */
  readonly port: number;
  readonly certPem: string;
  readonly keyPem: string;
  /** --client-ca-file's PEM; without it client certificates are not asked for. */
  readonly clientCAPem?: string;
  readonly authorization: KubeletAuthorizationMode;
  readonly reviews: KubeletReviews;
  /** The pods the node runs, as it sees them now. */
  readonly pods: () => readonly KObject[];
  /** The allowed decisions kept for offline use (shared with the file they are saved to). */
  readonly decisions: OfflineDecisions;
  /** Saves `decisions` (called when they changed). */
  readonly saveDecisions: () => void;
  readonly log: Logger;
  readonly now?: () => number;
}

export interface KubeletServer {
  readonly port: number;
  close(): Promise<void>;
}

type Authenticated = { readonly user: ReviewedUser } | { readonly error: StatusError };

const tokenCacheKey = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Starts the node's kubelet API; resolves once it listens (rejects with the listen error). */
export async function startKubeletServer(o: KubeletServerOptions): Promise<KubeletServer> {
  const now = o.now ?? Date.now;
  const tokens = new TtlCache<ReviewedUser | null>();
  const decisions = new TtlCache<{ allowed: boolean; reason: string }>();
  let offlineLogged = false;
  const offline = (what: string, err: unknown): void => {
    if (offlineLogged) return;
    offlineLogged = true;
    o.log.warn(`kubelet API: the API server cannot be reached for ${what}; answering from what is kept`, {
      node: o.node,
      err: err instanceof Error ? err.message : String(err),
    });
  };

  const authenticate = async (req: IncomingMessage): Promise<Authenticated> => {
    const socket = req.socket as TLSSocket;
    if (o.clientCAPem !== undefined && socket.authorized) {
      const user = certificateUser(socket.getPeerCertificate().subject ?? {});
      if (user !== undefined) return { user: withAuthenticatedGroup(user) };
    }
    const token = bearerToken(req.headers.authorization);
    if (token === undefined) return { error: statusErrors.unauthorized() };
    const key = tokenCacheKey(token);
    const cached = tokens.get(key, now());
    if (cached !== undefined)
      return cached === null ? { error: statusErrors.unauthorized() } : { user: cached };
    try {
      const user = await o.reviews.tokenReview(token);
      tokens.set(key, user ?? null, now(), TOKEN_REVIEW_TTL_MS);
      return user === undefined ? { error: statusErrors.unauthorized() } : { user };
    } catch (err) {
      if (!(err instanceof ReviewUnavailable)) {
        o.log.warn('kubelet API: token review failed', { node: o.node, err: String(err) });
        return { error: statusErrors.unauthorized() };
      }
      offline('token reviews', err);
      return {
        error: statusErrors.unauthorized(
          'Unauthorized: the API server cannot be reached to review the bearer token and no review of it is cached; use a client certificate while the node is offline',
        ),
      };
    }
  };

  const forbidden = (a: AccessRequest, why = ''): StatusError =>
    statusErrors.forbidden(
      { group: '', resource: 'nodes' },
      o.node,
      why === '' ? kubeletForbiddenMessage(a) : `${kubeletForbiddenMessage(a)}: ${why}`,
    );

  const authorize = async (
    a: AccessRequest & { readonly user: ReviewedUser },
  ): Promise<StatusError | undefined> => {
    if (o.authorization === 'AlwaysAllow') return undefined;
    const key = decisionKey(a);
    const t = now();
    let d = decisions.get(key, t);
    if (d === undefined) {
      try {
        d = await o.reviews.accessReview(a);
      } catch (err) {
        if (!(err instanceof ReviewUnavailable)) {
          o.log.warn('kubelet API: access review failed', { node: o.node, err: String(err) });
          return forbidden(a, 'the access review failed');
        }
        offline('access reviews', err);
        if (o.decisions.allowedAt(key, t) !== undefined) return undefined;
        return forbidden(
          a,
          'the API server cannot be reached to review access, and no allowed decision of the last 24h is kept for this user and request',
        );
      }
      decisions.set(key, d, t, d.allowed ? AUTHORIZED_TTL_MS : UNAUTHORIZED_TTL_MS);
      offlineLogged = false;
      const changed = d.allowed ? o.decisions.allow(key, t) : o.decisions.deny(key);
      if (changed) {
        try {
          o.saveDecisions();
        } catch (err) {
          o.log.warn('kubelet API: cannot save the allowed decisions', { node: o.node, err: String(err) });
        }
      }
    }
    return d.allowed ? undefined : forbidden(a, d.reason);
  };

  const send = (res: ServerResponse, code: number, type: string, body: string): void => {
    res.writeHead(code, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body);
  };
  const fail = (res: ServerResponse, err: StatusError): void =>
    send(res, err.code, 'application/json', `${JSON.stringify(err.status)}\n`);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path !== '/pods' && path !== '/healthz') return send(res, 404, 'text/plain', '404 page not found\n');
    if (req.method !== 'GET') return send(res, 405, 'text/plain', '405: Method Not Allowed');
    const who = await authenticate(req);
    if ('error' in who) return fail(res, who.error);
    const attrs = { ...kubeletAttributes(who.user, req.method, path, o.node), user: who.user };
    const denied = await authorize(attrs);
    if (denied !== undefined) return fail(res, denied);
    if (path === '/healthz') return send(res, 200, 'text/plain', 'ok');
    const list = { kind: 'PodList', apiVersion: 'v1', metadata: {}, items: o.pods() };
    return send(res, 200, 'application/json', `${JSON.stringify(list)}\n`);
  };

  const server: Server = createServer(
    {
      cert: o.certPem,
      key: o.keyPem,
      ...(o.clientCAPem === undefined ? {} : { ca: o.clientCAPem, requestCert: true }),
      rejectUnauthorized: false,
    },
    (req, res) => {
      handle(req, res).catch((err: unknown) => {
        o.log.warn('kubelet API: request failed', { node: o.node, err: String(err) });
        if (!res.headersSent) fail(res, statusErrors.serviceUnavailable('the request could not be answered'));
        else res.destroy();
      });
    },
  );
  await listen(server, { host: o.host, port: o.port });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
