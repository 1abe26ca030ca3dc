// kube-apiserver's ServiceAccount token flags, checked as it checks them, into a ServiceAccountTokens:
//   --service-account-issuer URI (repeatable; the first signs, every one is accepted)
//   --service-account-key-file FILE (repeatable; PEM public or private keys, certificates)
//   --service-account-signing-key-file FILE (needs an issuer)
//   --api-audiences A[,B] (default: the issuers)
//   --service-account-max-token-expiration DURATION (1h .. 2^32 s; needs the signing key)
// `svcplane up` passes defaults: its issuer and the key it keeps in DIR/pki/sa.key.
import {
  parsePublicKeys,
  parseSigningKey,
  type PublicKey,
  type SigningKey,
} from '../apiserver/auth/service-account-keys.js';
import { ServiceAccountTokens } from '../apiserver/auth/service-account-tokens.js';
import { errText } from '../api/err-text.js';
import { UsageError, durationFlag } from './flags.js';

export const SERVICE_ACCOUNT_FLAGS = {
  'service-account-issuer': { type: 'string', multiple: true },
  'service-account-key-file': { type: 'string', multiple: true },
  'service-account-signing-key-file': { type: 'string' },
  'api-audiences': { type: 'string', multiple: true },
  'service-account-max-token-expiration': { type: 'string' },
} as const;

export const SERVICE_ACCOUNT_FLAGS_HELP = `  --service-account-issuer URI             issuer of ServiceAccount tokens (repeatable: the first signs,
                                          all are accepted)
  --service-account-key-file FILE         PEM keys that verify ServiceAccount tokens (repeatable)
  --service-account-signing-key-file FILE private key that signs TokenRequests (RSA or ECDSA)
  --api-audiences A[,B]                   audiences a token must name one of (default: the issuers)
  --service-account-max-token-expiration DURATION
                                          longest token a TokenRequest gets (1h or more)`;

/** What `up` supplies when the flags name no issuer or signing key. */
export interface ServiceAccountDefaults {
  readonly issuer?: string;
  readonly signingKeyPem?: string;
}

const list = (v: unknown): string[] =>
  (Array.isArray(v) ? v : typeof v === 'string' ? [v] : []).filter(
    (s): s is string => typeof s === 'string' && s !== '',
  );

const one = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A file's keys, as a usage error naming the flag when it cannot be read or holds none. */
function keysOf<T>(flag: string, file: string, read: (f: string) => string, parse: (pem: string) => T): T {
  let pem: string;
  try {
    pem = read(file);
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--${flag}: cannot read ${file}: ${errText(err)}`);
  }
  try {
    return parse(pem);
  } catch (err) {
    throw new UsageError(`--${flag}: ${file}: ${errText(err)}`);
  }
}

function checkIssuers(issuers: readonly string[]): void {
  const seen = new Set<string>();
  for (const iss of issuers) {
    if (seen.has(iss))
      throw new UsageError(`service-account-issuer ${JSON.stringify(iss)} is already specified`);
    seen.add(iss);
    if (iss.includes(':')) {
      if (!URL.canParse(iss))
        throw new UsageError(
          `service-account-issuer ${JSON.stringify(iss)} contained a ':' but was not a valid URL`,
        );
    }
  }
}

/**
 * The ServiceAccount token configuration the flags give, or undefined when they name no issuer (tokens
 * are then neither issued nor accepted). `read` reads a flag's file (usage error when it cannot).
 */
export function serviceAccountTokensFromFlags(
  values: Record<string, unknown>,
  read: (flag: string, file: string) => string,
  defaults: ServiceAccountDefaults = {},
): ServiceAccountTokens | undefined {
  const given = list(values['service-account-issuer']);
  const issuers = given.length > 0 ? given : defaults.issuer === undefined ? [] : [defaults.issuer];
  const signingFile = one(values['service-account-signing-key-file']);
  const keyFiles = list(values['service-account-key-file']);
  const audiencesFlag = list(values['api-audiences'])
    .flatMap((a) => a.split(','))
    .map((a) => a.trim());
  const maxMs = durationFlag(
    'service-account-max-token-expiration',
    one(values['service-account-max-token-expiration']),
  );
  if (issuers.length === 0) {
    if (signingFile !== undefined) {
      throw new UsageError('service-account-signing-key-file and service-account-issuer are required flags');
    }
    if (keyFiles.length > 0)
      throw new UsageError('--service-account-key-file needs --service-account-issuer');
    if (maxMs !== undefined) {
      throw new UsageError('--service-account-max-token-expiration needs --service-account-issuer');
    }
    return undefined;
  }
  checkIssuers(issuers);
  let signingKey: SigningKey | undefined;
  if (signingFile !== undefined) {
    signingKey = keysOf(
      'service-account-signing-key-file',
      signingFile,
      (f) => read('service-account-signing-key-file', f),
      parseSigningKey,
    );
  } else if (defaults.signingKeyPem !== undefined) {
    try {
      signingKey = parseSigningKey(defaults.signingKeyPem);
    } catch (err) {
      throw new UsageError(`the ServiceAccount signing key of --data-dir (pki/sa.key): ${errText(err)}`);
    }
  }
  const verifyKeys: PublicKey[] = keyFiles.flatMap((f) =>
    keysOf('service-account-key-file', f, (x) => read('service-account-key-file', x), parsePublicKeys),
  );
  if (signingKey !== undefined) verifyKeys.push(signingKey);
  if (verifyKeys.length === 0) {
    throw new UsageError(
      '--service-account-issuer needs --service-account-key-file or --service-account-signing-key-file',
    );
  }
  let maxExpirationSeconds: number | undefined;
  if (maxMs !== undefined) {
    if (signingKey === undefined) {
      throw new UsageError('--service-account-max-token-expiration needs --service-account-signing-key-file');
    }
    maxExpirationSeconds = Math.floor(maxMs / 1000);
    if (maxExpirationSeconds < 3600 || maxExpirationSeconds > 2 ** 32) {
      throw new UsageError(
        'the service-account-max-token-expiration must be between 1 hour and 2^32 seconds',
      );
    }
  }
  const audiences = audiencesFlag.filter((a) => a !== '');
  return new ServiceAccountTokens({
    issuers,
    audiences: audiences.length > 0 ? audiences : issuers,
    verifyKeys,
    signingKey,
    maxExpirationSeconds,
  });
}
