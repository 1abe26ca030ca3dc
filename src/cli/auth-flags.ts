// Authentication and authorization from the API server's flags (kube-apiserver's names): the static
// token file, ServiceAccount token keys and issuers, the client CA, and the --authorization-mode chain.
// `svcplane up` and `svcplane apiserver` both load them here; `up` passes its own defaults (Node,RBAC and
// its generated ServiceAccount signing key).
import { parseAbacPolicy, type AbacPolicy } from '../apiserver/auth/abac.js';
import {
  buildAuthorization,
  parseAuthorizationModes,
  type ServerAuthorization,
} from '../apiserver/auth/modes.js';
import type { ServiceAccountTokens } from '../apiserver/auth/service-account-tokens.js';
import { parseTokenFile, type TokenTable } from '../apiserver/auth/token-file.js';
import type { WatchCache } from '../apiserver/watch-cache/watch-cache.js';
import { UsageError, readFlagFile, type Flags } from './flags.js';
import { serviceAccountTokensFromFlags, type ServiceAccountDefaults } from './service-account-flags.js';

const str = (v: string | boolean | undefined): string | undefined =>
  typeof v === 'string' && v !== '' ? v : undefined;

export interface LoadedAuth {
  readonly tokens: TokenTable | undefined;
  /** ServiceAccount tokens (issued and accepted), when an issuer is configured. */
  readonly serviceAccountTokens: ServiceAccountTokens | undefined;
  /** --authorization-mode, in order. */
  readonly modes: readonly string[];
  /** The chain of those modes, built by the server once its watch cache has loaded. */
  readonly authorization: (cache: WatchCache) => ServerAuthorization;
  readonly clientCA: string | undefined;
}

export function loadAuth(
  values: Flags,
  defaults: {
    readonly authorizationMode?: string;
    readonly serviceAccount?: ServiceAccountDefaults;
  } = {},
): LoadedAuth {
  const tokenFile = str(values['token-auth-file']);
  let tokens: TokenTable | undefined;
  if (tokenFile !== undefined) {
    try {
      tokens = parseTokenFile(readFlagFile('token-auth-file', tokenFile));
    } catch (err) {
      if (err instanceof UsageError) throw err;
      throw new UsageError(`--token-auth-file: ${(err as Error).message}`);
    }
  }
  const raw = values['authorization-mode'];
  const policyFile = str(values['authorization-policy-file']);
  let modes: string[];
  try {
    modes = parseAuthorizationModes(
      typeof raw === 'string' ? raw : (defaults.authorizationMode ?? 'AlwaysAllow'),
      policyFile !== undefined,
    );
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  let abacPolicy: AbacPolicy | undefined;
  if (policyFile !== undefined) {
    try {
      abacPolicy = parseAbacPolicy(readFlagFile('authorization-policy-file', policyFile));
    } catch (err) {
      if (err instanceof UsageError) throw err;
      throw new UsageError(`--authorization-policy-file: ${(err as Error).message}`);
    }
  }
  const caFile = str(values['client-ca-file']);
  const serviceAccountTokens = serviceAccountTokensFromFlags(values, readFlagFile, defaults.serviceAccount);
  return {
    tokens,
    serviceAccountTokens,
    modes,
    authorization: (cache) => buildAuthorization(modes, { cache, abacPolicy }),
    clientCA: caFile === undefined ? undefined : readFlagFile('client-ca-file', caFile),
  };
}
