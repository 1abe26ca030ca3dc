// What authentication.k8s.io/v1 TokenReview asks: would this bearer token authenticate, and as whom?
// Answered by the bearer-token part of this server's chain (authenticator.ts: the token file, then bound
// ServiceAccount tokens; never client certificates), for the audiences the review names, else the
// server's own (--api-audiences), as upstream's pkg/registry/authentication/tokenreview/storage.go does:
// an audience-agnostic authenticator (the token file) is valid for all of them, a ServiceAccount token
// for those its `aud` names.
import { withAuthenticatedGroup } from '../../core/authz/credentials.js';
import { lookupToken, type TokenDigest } from './token-file.js';
import type { UserInfo } from './types.js';

export interface TokenReviewResult {
  /** The user the token authenticates as (with system:authenticated), when it does. */
  readonly user?: UserInfo;
  /** The audiences it is valid for, when it authenticates. */
  readonly audiences: readonly string[];
  /** Why a token of an authenticator's own was refused (an expired or mis-addressed ServiceAccount token). */
  readonly error?: string;
}

/** A TokenReview's spec.token and spec.audiences, answered (HandlerDeps.reviewToken). */
export type TokenReviewer = (token: string, audiences: readonly string[]) => Promise<TokenReviewResult>;

export interface TokenReviewOptions {
  /** From parseTokenFile, as for authenticate(). */
  readonly tokens?: ReadonlyMap<TokenDigest, UserInfo> | undefined;
  /** ServiceAccountTokens.review with the server's object lookup. */
  readonly serviceAccounts?:
    | ((
        token: string,
        audiences: readonly string[],
      ) => Promise<{ user: UserInfo; audiences: string[] } | { error: string } | undefined>)
    | undefined;
  /** --api-audiences (the ServiceAccount issuer's default): used when the review names none. */
  readonly apiAudiences: readonly string[];
}

export async function reviewToken(
  token: string,
  specAudiences: readonly string[],
  opts: TokenReviewOptions,
): Promise<TokenReviewResult> {
  const audiences = specAudiences.length > 0 ? specAudiences : opts.apiAudiences;
  const fromFile = opts.tokens === undefined ? undefined : lookupToken(opts.tokens, token);
  if (fromFile !== undefined) return { user: withAuthenticatedGroup(fromFile), audiences: [...audiences] };
  const sa =
    opts.serviceAccounts === undefined
      ? undefined
      : await opts.serviceAccounts(token, audiences).catch(() => undefined);
  if (sa === undefined) return { audiences: [] };
  if ('error' in sa) return { audiences: [], error: sa.error };
  return { user: withAuthenticatedGroup(sa.user), audiences: sa.audiences };
}
