// How authorizers combine, as kube-apiserver combines them: a union asks each in order and the first
// 'allow' or 'deny' decides; when all have no opinion the request is forbidden, with their reasons joined.
// kube-apiserver always puts a privileged-group authorizer for "system:masters" first, whatever
// --authorization-mode says, so members of that group can do anything; buildAuthorizer does the same.
import type { Authorizer, AuthorizerResult, RequestAttributes } from './types.js';
import { SYSTEM_MASTERS } from './types.js';

export type { Authorizer, RequestAttributes } from './types.js';

const ALLOW: AuthorizerResult = Object.freeze({ decision: 'allow', reason: '' });
const NO_OPINION: AuthorizerResult = Object.freeze({ decision: 'no-opinion', reason: '' });

/** --authorization-mode=AlwaysAllow. */
export const alwaysAllow: Authorizer = () => ALLOW;

/** --authorization-mode=AlwaysDeny: upstream answers no opinion, with this reason. */
export const alwaysDeny: Authorizer = () => ({ decision: 'no-opinion', reason: 'Everything is forbidden.' });

/** Allows any user in one of `groups`; no opinion otherwise. */
export function privilegedGroups(...groups: string[]): Authorizer {
  const privileged = new Set(groups);
  return (attrs) => (attrs.user.groups.some((g) => privileged.has(g)) ? ALLOW : NO_OPINION);
}

/** The first authorizer that allows or denies decides; otherwise no opinion, with the reasons joined by "\n". */
export function unionAuthorizer(authorizers: readonly Authorizer[]): Authorizer {
  return (attrs) => {
    const reasons: string[] = [];
    for (const authorizer of authorizers) {
      const result = authorizer(attrs);
      if (result.decision !== 'no-opinion') return result;
      if (result.reason !== '') reasons.push(result.reason);
    }
    return { decision: 'no-opinion', reason: reasons.join('\n') };
  };
}

/** kube-apiserver's chain for the given modes, in order: system:masters first, then each mode. */
export function buildAuthorizer(modes: readonly Authorizer[]): Authorizer {
  if (modes.length === 0) throw new Error('at least one authorization mode must be passed');
  return unionAuthorizer([privilegedGroups(SYSTEM_MASTERS), ...modes]);
}

/** Only 'allow' lets a request through. */
export function isAllowed(authorizer: Authorizer, attrs: RequestAttributes): boolean {
  return authorizer(attrs).decision === 'allow';
}
