// --authorization-mode: an ordered, comma-separated list of kube-apiserver's modes, checked as upstream
// checks it (at least one mode, each known, none twice; --authorization-policy-file with ABAC and only
// then). The chain asks system:masters first, then each mode in the order given; the first allow or deny
// decides (authorizer.ts). Modes that answer from the server's own objects (RBAC, Node) are built once
// the watch cache has loaded, from the context the server hands them.
//
// AUTHORIZATION_MODES is the one table of modes: another mode plugs in by adding its factory here.
import type { Logger } from '../../runtime/logger.js';
import type { Registry } from '../registry/registry.js';
import type { RegistryHooks } from '../registry/types.js';
import { applyBootstrapPolicy } from './rbac-bootstrap.js';
import type { WatchCache } from '../watch-cache/watch-cache.js';
import { abacAuthorizer, type AbacPolicy } from './abac.js';
import { alwaysAllow, alwaysDeny, buildAuthorizer } from './authorizer.js';
import { rbacAuthorizer, followRbacPolicy } from './rbac-authorizer.js';
import { rbacEscalationHooks } from './rbac-escalation.js';
import { abacRules, allowAllRules, buildRules, rbacRules, type RuleResolver } from './rules.js';
import type { Authorizer } from './types.js';
import { cacheNodeLookups, nodeAuthorizer, nodeRules } from './node.js';
import { aggregate } from '../../api/field-errors.js';
import { goQuoteList } from '../../api/go-quote.js';

/** What the server hands a mode when it builds it. */
export interface ModeContext {
  /** The server's watch cache, loaded: its objects, read synchronously or followed (watch-cache/follow.ts). */
  readonly cache: WatchCache;
  /** --authorization-policy-file, parsed (ABAC's policy). */
  readonly abacPolicy: AbacPolicy | undefined;
}

/** One mode, built. */
export interface AuthorizationMode {
  readonly authorizer: Authorizer;
  /** What a user may do in a namespace, by this mode (SelfSubjectRulesReview). */
  readonly rules: RuleResolver;
  /** Checks of the registry's writes this mode adds, given the whole chain (RBAC's escalation check). */
  readonly registryHooks?: (chain: Authorizer) => RegistryHooks;
  /** Run once the server's registry is up, before it serves (RBAC reconciles its bootstrap policy). */
  readonly onStart?: (registry: Registry, log: Logger) => Promise<void>;
}

export type ModeFactory = (ctx: ModeContext) => AuthorizationMode;

const NO_RULES: RuleResolver = () => ({ resourceRules: [], nonResourceRules: [], incomplete: false });

export const AUTHORIZATION_MODES: Readonly<Record<string, ModeFactory>> = {
  AlwaysAllow: () => ({ authorizer: alwaysAllow, rules: allowAllRules }),
  AlwaysDeny: () => ({ authorizer: alwaysDeny, rules: NO_RULES }),
  ABAC: ({ abacPolicy }) => {
    if (abacPolicy === undefined)
      throw new Error("authorization-mode ABAC's authorization policy file not passed");
    return { authorizer: abacAuthorizer(abacPolicy), rules: abacRules(abacPolicy) };
  },
  Node: ({ cache }) => ({ authorizer: nodeAuthorizer(cacheNodeLookups(cache)), rules: nodeRules }),
  RBAC: ({ cache }) => {
    const index = followRbacPolicy(cache);
    return {
      authorizer: rbacAuthorizer(index),
      rules: rbacRules(index),
      registryHooks: (chain) => rbacEscalationHooks(index, chain),
      onStart: async (registry, log) => void (await applyBootstrapPolicy(registry, log)),
    };
  },
};

/**
 * The modes of a --authorization-mode value, in order; throws an Error with upstream's message(s)
 * ("authorization-mode \"X\" is not a valid mode", "... has mode specified more than once").
 */
export function parseAuthorizationModes(raw: string, policyFile: boolean): string[] {
  const modes = raw
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m !== '');
  const errors: string[] = [];
  if (modes.length === 0) errors.push('at least one authorization-mode must be passed');
  for (const m of modes)
    if (!Object.hasOwn(AUTHORIZATION_MODES, m))
      errors.push(`authorization-mode ${JSON.stringify(m)} is not a valid mode`);
  if (modes.includes('ABAC') && !policyFile)
    errors.push("authorization-mode ABAC's authorization policy file not passed");
  if (policyFile && !modes.includes('ABAC'))
    errors.push('cannot specify --authorization-policy-file without mode ABAC');
  if (new Set(modes).size !== modes.length)
    errors.push(`authorization-mode ${goQuoteList(modes)} has mode specified more than once`);
  if (errors.length > 0) throw new Error(aggregate(errors));
  return modes;
}

/** The server's authorization: the chain, its rules, and the write checks of its modes. */
export interface ServerAuthorization {
  readonly authorizer: Authorizer;
  readonly rules: RuleResolver;
  readonly registryHooks: readonly RegistryHooks[];
  /** The modes' start steps, in order. */
  readonly onStart: (registry: Registry, log: Logger) => Promise<void>;
}

/** Builds `modes` (parsed) into kube-apiserver's chain: system:masters first, then each mode in order. */
export function buildAuthorization(modes: readonly string[], ctx: ModeContext): ServerAuthorization {
  const built = modes.map((m) => AUTHORIZATION_MODES[m]!(ctx));
  const authorizer = buildAuthorizer(built.map((b) => b.authorizer));
  return {
    authorizer,
    rules: buildRules(built.map((b) => b.rules)),
    registryHooks: built.flatMap((b) => (b.registryHooks === undefined ? [] : [b.registryHooks(authorizer)])),
    onStart: async (registry, log) => {
      for (const b of built) await b.onStart?.(registry, log);
    },
  };
}
