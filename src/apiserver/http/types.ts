// What the HTTP layer is given (HandlerDeps) and the Statuses every route shares.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ResourceInfo } from '../../api/resources.js';
import type { RuleResolver } from '../auth/rules.js';
import type { ServiceAccountTokens } from '../auth/service-account-tokens.js';
import type { TokenReviewer } from '../auth/token-review.js';
import type { RequestAttributes, UserInfo } from '../auth/types.js';
import { StatusError, statusErrors } from '../../api/status.js';
import type { Logger } from '../../runtime/logger.js';
import type { ApiMetrics } from '../metrics.js';
import type { Registry } from '../registry/registry.js';
import type { ListWarnings } from '../undecodable-scan.js';
import type { WatchCache } from '../watch-cache/watch-cache.js';
import { type WatchRegistry } from './watch.js';
import type { ResourceRequestInfo } from './request-info.js';

/** Who a request is (kube-apiserver's user.Info). */
export type Identity = UserInfo;

/** What a request asks to do (kube-apiserver's authorizer.Attributes). */
export type AuthorizationAttributes = RequestAttributes;

/** What a request for a path (not a resource) asks the authorizer. */
export const nonResourceAttributes = (
  user: Identity,
  verb: string,
  path: string,
): AuthorizationAttributes => ({
  user,
  verb,
  resourceRequest: false,
  apiGroup: '',
  namespace: '',
  resource: '',
  subresource: '',
  name: '',
  path,
});

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
  readonly authenticate: (
    req: IncomingMessage,
  ) => Identity | 'anonymous' | 'invalid' | Promise<Identity | 'anonymous' | 'invalid'>;
  readonly authorize: (attrs: AuthorizationAttributes) => boolean;
  /** ServiceAccount tokens: serviceaccounts/NAME/token and the issuer discovery documents (absent: 404). */
  readonly serviceAccountTokens?: ServiceAccountTokens;
  /** Answers TokenReviews (auth/token-review.ts); without it a TokenReview is answered as it came. */
  readonly reviewToken?: TokenReviewer;
  /** What a user may do in a namespace (SelfSubjectRulesReview); without it the answer is incomplete. */
  readonly rulesFor?: RuleResolver;
  readonly forbiddenMessage: (attrs: AuthorizationAttributes) => string;
  readonly openapi: OpenApiProvider;
  /** Warnings for the undecodable stored objects a LIST serves (undecodable-scan.ts); absent: none. */
  readonly listWarnings?: ListWarnings;
  readonly version: Record<string, string>;
  readonly serverAddress: () => string;
  readonly watches: WatchRegistry;
  readonly bookmarkIntervalMs: number;
  readonly maxWatchQueueBytes: number;
  /**
   * A LIST response's bytes in flight before it waits, and the chunks it is encoded into (default 4 MiB
   * and 256 KiB: list throughput). A server that must stay small (the wrapper) takes less. `stallMs`: how
   * long a LIST waits for its client to take any bytes before it gives up and drops the connection
   * (default 60 s, kube's --request-timeout).
   */
  readonly listWindow?: { readonly bytes: number; readonly chunkBytes: number; readonly stallMs?: number };
  /** kube's --min-request-timeout: watches without timeoutSeconds last 1–2× this. */
  readonly minRequestTimeoutSeconds: number;
  readonly ready: () => boolean;
  /** More /readyz checks, each listed by name in `?verbose` (e.g. the in-process controllers of `up`). */
  readonly readyChecks?: readonly ReadyCheck[];
  /** More Prometheus text for /metrics (e.g. the controllers' own registry, kept on another thread). */
  readonly extraMetrics?: () => Promise<string>;
  /** The allocation state as upstream's RangeAllocation objects (GET /debug/svcplane/rangeallocations). */
  readonly rangeAllocations?: () => Promise<unknown>;
  /**
   * Non-resource paths served by another handler, each under its prefix (the prefix itself and below
   * it): asked after authentication and authorization, as a non-resource request (`get` on the path),
   * e.g. `svcplane up`'s dashboard at /dashboard. Anonymous requests get 401 there as anywhere but the
   * public health and version paths.
   */
  readonly mounts?: readonly NonResourceMount[];
  /** The resources this server serves and lists in discovery (default: the whole table). */
  readonly resources?: readonly ResourceInfo[];
  /**
   * Asked when authorization refuses an authenticated request: true when it has answered the request
   * itself (e.g. the wrapper passing it upstream as the client), false for the usual 403.
   */
  readonly forward?: (
    req: IncomingMessage,
    res: ServerResponse,
    identity: Identity,
    attrs: AuthorizationAttributes,
  ) => boolean | Promise<boolean>;
  /**
   * Asked first for an authenticated GET of discovery (/api, /apis and below) or OpenAPI: true when it
   * has answered (the wrapper passing it upstream as the client), false to serve this server's own.
   */
  readonly forwardDiscovery?: (
    req: IncomingMessage,
    res: ServerResponse,
    identity: Identity,
  ) => Promise<boolean>;
}

/** Serves one request for a resource (`/api/v1/namespaces/NS/pods/NAME[/SUB]`) once it is routed. */
export type ResourceHandler = (
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  r: ResourceInfo,
  info: ResourceRequestInfo,
  query: URLSearchParams,
) => Promise<void>;

export interface ReadyCheck {
  readonly name: string;
  readonly ok: () => boolean;
}

/** A handler for the non-resource paths under a prefix (HandlerDeps.mounts). */
export interface NonResourceMount {
  /** Such as `/dashboard`: no trailing slash. */
  readonly prefix: string;
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
}

export const notFoundPath = (): StatusError => statusErrors.pathNotFound();

/** What go-restful answers (through kube's error handler) for a method a path has no route for. */
export const methodNotAllowed = (): StatusError =>
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
