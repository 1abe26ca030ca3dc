// kube-apiserver's ABAC authorizer (--authorization-mode=ABAC, --authorization-policy-file), with its file
// format and matching rules.
//
// File: one JSON object per line; blank lines and lines whose first non-space character is "#" are skipped.
//   {"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{…}}
// Lines with neither apiVersion nor kind are the legacy unversioned (v0) format, {"user":…,"resource":…},
// converted as upstream does. Unknown fields are ignored; wrong types or another apiVersion/kind are errors.
//
// A request is allowed when any rule matches it:
//  - subject: a rule names a user and/or a group, and each one it names must match. Neither named: the rule
//    matches nobody. user "*" or group "*" mean every authenticated user (both become
//    group "system:authenticated", exactly as upstream converts them), so they never match anonymous requests;
//  - verb: get, list and watch always pass; anything else needs readonly false;
//  - resource requests: namespace, resource and apiGroup must each be "*" or equal ("" names the core group,
//    and a namespace of "" only cluster-scoped requests). Subresources are not matched separately:
//    "services" covers "services/status";
//  - non-resource requests: nonResourcePath "*", the exact path, or a prefix written "/foo/*" ("/foo/" + anything).
// There is no per-verb control: a rule that is not readonly allows every verb on what it matches.
import type { Authorizer, AuthorizerResult, RequestAttributes, UserInfo } from './types.js';
import { ALL_AUTHENTICATED } from './types.js';
import { errText } from '../../api/err-text.js';
import { isPlainObject as isRecord } from '../../api/json.js';

export type { RequestAttributes, UserInfo } from './types.js';

export const ABAC_API_VERSION = 'abac.authorization.kubernetes.io/v1beta1';
const ABAC_V0 = 'abac.authorization.kubernetes.io/v0';

/** The v1beta1 PolicySpec; omitted fields are "". */
export interface AbacPolicySpec {
  readonly user?: string;
  readonly group?: string;
  readonly readonly?: boolean;
  readonly apiGroup?: string;
  readonly resource?: string;
  readonly namespace?: string;
  readonly nonResourcePath?: string;
}

/** A rule after conversion to the internal form (the one the matcher reads). */
export interface AbacRule {
  readonly user: string;
  readonly group: string;
  readonly readonly: boolean;
  readonly apiGroup: string;
  readonly resource: string;
  readonly namespace: string;
  readonly nonResourcePath: string;
  /** The 1-based line of the policy file it came from. */
  readonly line: number;
}

export interface AbacPolicy {
  readonly rules: readonly AbacRule[];
}

export class AbacPolicyError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
    this.name = 'AbacPolicyError';
  }
}

export interface ParseAbacPolicyOptions {
  /** Receives upstream's warning about unversioned (v0) lines. */
  readonly warn?: (message: string) => void;
}

/** Parses a policy file; throws AbacPolicyError naming the line. */
export function parseAbacPolicy(text: string, opts: ParseAbacPolicyOptions = {}): AbacPolicy {
  const rules: AbacRule[] = [];
  let unversioned = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const lineNo = i + 1;
    const raw = lines[i] ?? '';
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const fail = (what: string): never => {
      throw new AbacPolicyError(`policy file line ${lineNo}: ${what}`, lineNo);
    };
    let obj: unknown;
    try {
      obj = JSON.parse(trimmed);
    } catch (err) {
      fail(`invalid JSON: ${errText(err)}`);
    }
    if (!isRecord(obj)) return fail('expected a JSON object');
    const apiVersion = optionalString(obj, 'apiVersion', fail);
    const kind = optionalString(obj, 'kind', fail);
    if (kind !== '' && kind !== 'Policy') fail(`unsupported kind ${JSON.stringify(kind)}: expected "Policy"`);
    if (apiVersion === ABAC_API_VERSION) {
      const spec = obj['spec'];
      if (spec !== undefined && spec !== null && !isRecord(spec)) fail('spec must be an object');
      rules.push(fromV1beta1(isRecord(spec) ? spec : {}, lineNo, fail));
    } else if (apiVersion === '' || apiVersion === ABAC_V0) {
      unversioned += apiVersion === '' ? 1 : 0;
      rules.push(fromV0(obj, lineNo, fail));
    } else {
      fail(
        `unsupported apiVersion ${JSON.stringify(apiVersion)}: expected ${JSON.stringify(ABAC_API_VERSION)}`,
      );
    }
  }
  if (unversioned > 0) {
    opts.warn?.(
      `policy file contains ${unversioned} unversioned rule(s); write {"apiVersion":"${ABAC_API_VERSION}","kind":"Policy","spec":{…}}`,
    );
  }
  return { rules };
}

type Fail = (what: string) => never;

function fromV1beta1(spec: Record<string, unknown>, line: number, fail: Fail): AbacRule {
  const rule = {
    user: optionalString(spec, 'user', fail, 'spec.'),
    group: optionalString(spec, 'group', fail, 'spec.'),
    readonly: optionalBoolean(spec, 'readonly', fail, 'spec.'),
    apiGroup: optionalString(spec, 'apiGroup', fail, 'spec.'),
    resource: optionalString(spec, 'resource', fail, 'spec.'),
    namespace: optionalString(spec, 'namespace', fail, 'spec.'),
    nonResourcePath: optionalString(spec, 'nonResourcePath', fail, 'spec.'),
    line,
  };
  // In v1beta1, a "*" user or group means every authenticated user.
  if (rule.user === '*' || rule.group === '*') return { ...rule, user: '', group: ALL_AUTHENTICATED };
  return rule;
}

/** Upstream's v0 → internal conversion: empty fields widen, and every v0 rule covers all API groups. */
function fromV0(obj: Record<string, unknown>, line: number, fail: Fail): AbacRule {
  const user = optionalString(obj, 'user', fail);
  const group = optionalString(obj, 'group', fail);
  const namespace = optionalString(obj, 'namespace', fail);
  const resource = optionalString(obj, 'resource', fail);
  // No subject, or a "*" one, means every authenticated user.
  const everyone = (user === '' && group === '') || user === '*' || group === '*';
  return {
    user: everyone ? '' : user,
    group: everyone ? ALL_AUTHENTICATED : group,
    readonly: optionalBoolean(obj, 'readonly', fail),
    apiGroup: '*',
    resource: resource === '' ? '*' : resource,
    namespace: namespace === '' ? '*' : namespace,
    nonResourcePath: namespace === '' && resource === '' ? '*' : '',
    line,
  };
}

/** Whether `policy` allows the request. */
export function authorize(policy: AbacPolicy, attrs: RequestAttributes): boolean {
  return policy.rules.some((rule) => ruleMatches(rule, attrs));
}

/** The ABAC authorizer for a union: allow, or no opinion with upstream's reason "No policy matched.". */
export function abacAuthorizer(policy: AbacPolicy): Authorizer {
  return (attrs): AuthorizerResult =>
    authorize(policy, attrs)
      ? { decision: 'allow', reason: '' }
      : { decision: 'no-opinion', reason: 'No policy matched.' };
}

const READ_ONLY_VERBS: ReadonlySet<string> = new Set(['get', 'list', 'watch']);

export function ruleMatches(rule: AbacRule, attrs: RequestAttributes): boolean {
  if (!subjectMatches(rule, attrs)) return false;
  if (rule.readonly && !READ_ONLY_VERBS.has(attrs.verb)) return false;
  if (attrs.resourceRequest) {
    return (
      (rule.namespace === '*' || rule.namespace === attrs.namespace) &&
      (rule.resource === '*' || rule.resource === attrs.resource) &&
      (rule.apiGroup === '*' || rule.apiGroup === attrs.apiGroup)
    );
  }
  const p = rule.nonResourcePath;
  if (p === '*' || p === attrs.path) return true;
  return p.endsWith('*') && attrs.path.startsWith(p.replace(/\*+$/, ''));
}

const subjectMatches = (rule: AbacRule, attrs: RequestAttributes): boolean =>
  ruleMatchesSubject(rule, attrs.user);

/** Whether a rule's user and group (each one it names) match the user. */
export function ruleMatchesSubject(rule: AbacRule, user: UserInfo): boolean {
  let matched = false;
  if (rule.user !== '') {
    if (rule.user !== '*' && rule.user !== user.name) return false;
    matched = true;
  }
  if (rule.group !== '') {
    if (rule.group !== '*' && !user.groups.includes(rule.group)) return false;
    matched = true;
  }
  return matched;
}

/** One v1beta1 policy line for `spec` (keys in the documented order). */
export function policyLine(spec: AbacPolicySpec): string {
  return JSON.stringify({ apiVersion: ABAC_API_VERSION, kind: 'Policy', spec });
}

/** Discovery and version paths, read-only: what any client needs before it can talk to the API. */
const DISCOVERY_PATHS = ['/api', '/api/*', '/apis', '/apis/*', '/version'];

/**
 * A node agent's policy: read services, EndpointSlices and nodes everywhere, write events, read discovery;
 * nothing else. (ABAC has no verb list, so "events" allows every verb on events, not only create.)
 */
export function nodeAgentPolicy(user: string): string {
  const specs: AbacPolicySpec[] = [
    { user, readonly: true, apiGroup: '', namespace: '*', resource: 'services' },
    { user, readonly: true, apiGroup: 'discovery.k8s.io', namespace: '*', resource: 'endpointslices' },
    { user, readonly: true, apiGroup: '', namespace: '*', resource: 'nodes' },
    { user, apiGroup: '', namespace: '*', resource: 'events' },
    { user, apiGroup: 'events.k8s.io', namespace: '*', resource: 'events' },
    ...DISCOVERY_PATHS.map((nonResourcePath) => ({ user, readonly: true, nonResourcePath })),
  ];
  return specs.map(policyLine).join('\n') + '\n';
}

/** A read-only user: get, list and watch on everything (resources and non-resource paths), nothing else. */
export function readOnlyPolicy(user: string): string {
  return (
    policyLine({ user, readonly: true, apiGroup: '*', namespace: '*', resource: '*', nonResourcePath: '*' }) +
    '\n'
  );
}

/** A string field; absent or null reads as "" (as Go's decoder leaves the zero value). */
function optionalString(obj: Record<string, unknown>, key: string, fail: Fail, prefix = ''): string {
  const v = obj[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') return fail(`${prefix}${key} must be a string`);
  return v;
}

function optionalBoolean(obj: Record<string, unknown>, key: string, fail: Fail, prefix = ''): boolean {
  const v = obj[key];
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') return fail(`${prefix}${key} must be a boolean`);
  return v;
}
