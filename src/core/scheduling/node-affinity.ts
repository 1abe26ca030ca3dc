// Node selector and required node affinity, as component-helpers' nodeaffinity matches them:
// nodeSelectorTerms are ORed (a term with neither expressions nor fields is dropped, so terms that are
// all empty match nothing); inside a term, matchExpressions (on labels) and matchFields (only
// `metadata.name`) are ANDed. A requirement that validation would refuse fails to match.
import type {
  NodeSelectorRequirement,
  NodeSelectorTerm,
  PreferredSchedulingTerm,
  SchedPod,
} from './types.js';

/** A node as the matchers see it. */
export interface NodeLabels {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** A compiled requirement: true when the node satisfies it. */
type Matcher = (node: NodeLabels) => boolean;

const NEVER: Matcher = () => false;
const INTEGER = /^[+-]?\d+$/;

const own = (labels: Readonly<Record<string, string>>, key: string): string | undefined =>
  Object.hasOwn(labels, key) ? labels[key] : undefined;

function compileExpression(r: NodeSelectorRequirement): Matcher {
  const values = r.values ?? [];
  const key = r.key;
  switch (r.operator) {
    case 'In': {
      if (values.length === 0) return NEVER;
      const set = new Set(values);
      return (n) => {
        const v = own(n.labels, key);
        return v !== undefined && set.has(v);
      };
    }
    case 'NotIn': {
      if (values.length === 0) return NEVER;
      const set = new Set(values);
      return (n) => {
        const v = own(n.labels, key);
        return v === undefined || !set.has(v);
      };
    }
    case 'Exists':
      return values.length !== 0 ? NEVER : (n) => own(n.labels, key) !== undefined;
    case 'DoesNotExist':
      return values.length !== 0 ? NEVER : (n) => own(n.labels, key) === undefined;
    case 'Gt':
    case 'Lt': {
      if (values.length !== 1 || !INTEGER.test(values[0]!)) return NEVER;
      const bound = BigInt(values[0]!);
      const gt = r.operator === 'Gt';
      return (n) => {
        const v = own(n.labels, key);
        if (v === undefined || !INTEGER.test(v)) return false;
        const x = BigInt(v);
        return gt ? x > bound : x < bound;
      };
    }
    default:
      return NEVER;
  }
}

function compileField(r: NodeSelectorRequirement): Matcher {
  const values = r.values ?? [];
  if (r.key !== 'metadata.name' || values.length !== 1) return NEVER;
  const want = values[0]!;
  if (r.operator === 'In') return (n) => n.name === want;
  if (r.operator === 'NotIn') return (n) => n.name !== want;
  return NEVER;
}

/** A term compiled to one matcher, or undefined for an empty term (which is dropped). */
function compileTerm(t: NodeSelectorTerm): Matcher | undefined {
  const exprs = t.matchExpressions ?? [];
  const fields = t.matchFields ?? [];
  if (exprs.length === 0 && fields.length === 0) return undefined;
  const all = [...exprs.map(compileExpression), ...fields.map(compileField)];
  if (all.length === 1) return all[0];
  return (n) => {
    for (const m of all) if (!m(n)) return false;
    return true;
  };
}

/** nodeSelectorTerms compiled: ORed terms; matches nothing when every term is empty. */
export function compileNodeSelectorTerms(terms: readonly NodeSelectorTerm[]): Matcher {
  const compiled = terms.map(compileTerm).filter((m): m is Matcher => m !== undefined);
  if (compiled.length === 0) return NEVER;
  if (compiled.length === 1) return compiled[0]!;
  return (n) => {
    for (const m of compiled) if (m(n)) return true;
    return false;
  };
}

/**
 * The pod's nodeSelector and required node affinity as one matcher (nodeaffinity's
 * GetRequiredNodeAffinity): the selector's pairs must all equal the node's labels, and the required
 * terms, when given, must match. Undefined when the pod constrains nothing.
 */
export function requiredNodeMatcher(pod: SchedPod): Matcher | undefined {
  const selector = Object.entries(pod.spec?.nodeSelector ?? {});
  const required = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  const terms = required === undefined || required === null ? undefined : (required.nodeSelectorTerms ?? []);
  if (selector.length === 0 && terms === undefined) return undefined;
  const affinity = terms === undefined ? undefined : compileNodeSelectorTerms(terms);
  return (n) => {
    for (const [k, v] of selector) if (own(n.labels, k) !== v) return false;
    return affinity === undefined || affinity(n);
  };
}

/** Preferred terms compiled with their weights; empty and zero-weight terms are dropped. */
export function compilePreferredTerms(
  terms: readonly PreferredSchedulingTerm[] | null | undefined,
): { readonly weight: number; readonly matches: Matcher }[] {
  const out: { weight: number; matches: Matcher }[] = [];
  for (const t of terms ?? []) {
    if (!(t.weight > 0)) continue;
    const m = compileTerm(t.preference ?? {});
    if (m !== undefined) out.push({ weight: t.weight, matches: m });
  }
  return out;
}
