// Which topology rules a Service carries, which one decides, and what is wrong with the rest.
//
// Precedence (docs/topology.md has the table), per kind of traffic:
//   1. a traffic policy of Local (internalTrafficPolicy for internal, externalTrafficPolicy for external
//      traffic): node-local endpoints only, as kube-proxy does whatever else the Service says;
//   2. ordered keys: spec.topologyKeys, else the annotation service.svcplane.io/topology-keys;
//   3. SuperEdge's `topologyKeys` annotation;
//   4. OpenYurt's `openyurt.io/topologyKeys` annotation;
//   5. kube-proxy's hints (trafficDistribution, topology-mode), or no rule.
// Explicit rules beat derived ones, and the one API field beats annotations. Every rule that loses is
// reported, so a Service never silently carries a rule that does nothing.
import { FieldPath, fieldErrorString } from '../../api/field-errors.js';
import { validateTopologyKeys } from '../../api/validation/topology-keys.js';
import { list, optStr, rec, stringMap } from '../endpoints/read.js';
import type { Labels, Rule, TopologyProblem, TopologyService } from './types.js';

/** svcplane's spelling of spec.topologyKeys, for clusters whose API dropped the field (1.22+). */
export const ORDERED_KEYS_ANNOTATION = 'service.svcplane.io/topology-keys';
/** SuperEdge's annotation: a JSON array of node label keys, combined by OR. */
export const SUPEREDGE_KEYS_ANNOTATION = 'topologyKeys';
/** OpenYurt's annotation: one value. */
export const OPENYURT_KEYS_ANNOTATION = 'openyurt.io/topologyKeys';
/** The node label naming a node's OpenYurt node pool. */
export const OPENYURT_NODEPOOL_LABEL = 'apps.openyurt.io/nodepool';
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';
export const TOPOLOGY_MODE_ANNOTATION = 'service.kubernetes.io/topology-mode';
export const TOPOLOGY_AWARE_HINTS_ANNOTATION = 'service.kubernetes.io/topology-aware-hints';

/** Every Service annotation a rule reads. */
export const ENGINE_ANNOTATIONS: ReadonlySet<string> = new Set([
  ORDERED_KEYS_ANNOTATION,
  SUPEREDGE_KEYS_ANNOTATION,
  OPENYURT_KEYS_ANNOTATION,
  TOPOLOGY_MODE_ANNOTATION,
  TOPOLOGY_AWARE_HINTS_ANNOTATION,
]);
/** OpenYurt values meaning "the same node pool" (note: kubernetes.io/zone, not topology.kubernetes.io/zone). */
export const OPENYURT_POOL_VALUES: readonly string[] = ['openyurt.io/nodepool', 'kubernetes.io/zone'];

// What most Services carry: an index holds these for every one, shared rather than one each.
const NO_ANNOTATIONS: Labels = Object.freeze({});
const NO_KEYS: readonly string[] = Object.freeze([]);
const orNone = (m: Labels): Labels => (Object.keys(m).length === 0 ? NO_ANNOTATIONS : m);
const orEmpty = (l: readonly string[]): readonly string[] => (l.length === 0 ? NO_KEYS : l);

/** Reads the fields the engine needs from a Service as JSON; fields of the wrong type read as absent. */
export function topologyService(svc: {
  metadata?: unknown;
  spec?: unknown;
  status?: unknown;
}): TopologyService {
  const meta = rec(svc.metadata);
  const spec = rec(svc.spec);
  const ports = list(spec['ports']).map(rec);
  const ingress = list(rec(rec(svc.status)['loadBalancer'])['ingress']);
  const externalIPs = list(spec['externalIPs']);
  return {
    namespace: optStr(meta['namespace']) ?? '',
    name: optStr(meta['name']) ?? '',
    // Only the annotations the engine reads: an index holds this for every Service, and others (kubectl's
    // last-applied configuration) can be kilobytes each.
    annotations: orNone(
      Object.fromEntries(
        Object.entries(stringMap(meta['annotations'])).filter(([k]) => ENGINE_ANNOTATIONS.has(k)),
      ),
    ),
    topologyKeys: orEmpty(list(spec['topologyKeys']).filter((k): k is string => typeof k === 'string')),
    internalTrafficPolicy: optStr(spec['internalTrafficPolicy']),
    externalTrafficPolicy: optStr(spec['externalTrafficPolicy']),
    trafficDistribution: optStr(spec['trafficDistribution']),
    externallyAccessible:
      ports.some((p) => typeof p['nodePort'] === 'number' && p['nodePort'] !== 0) ||
      // load-balancer VIPs: a hostname-only ingress is not one (kube-proxy's ExternallyAccessible)
      // nor is one with ipMode Proxy (the load balancer proxies; it does not deliver to the VIP).
      ingress.some(
        (i) => typeof rec(i)['ip'] === 'string' && rec(i)['ip'] !== '' && rec(i)['ipMode'] !== 'Proxy',
      ) ||
      externalIPs.some((ip) => typeof ip === 'string' && ip !== ''),
  };
}

/** The rules a Service carries, before precedence. */
export interface ServiceRules {
  readonly ordered?: Rule;
  readonly superedge?: Rule;
  readonly openyurt?: Rule;
  /** The Service asks for hints (trafficDistribution or topology-mode Auto). */
  readonly hintsRequested?: string;
  readonly internalLocal: boolean;
  readonly externalLocal: boolean;
  readonly problems: readonly TopologyProblem[];
}

const annotationPath = (key: string) => FieldPath.root('metadata', 'annotations').key(key);

/** Parses a JSON array of strings; undefined with a message when it is not one. */
function parseKeyList(raw: string): { keys?: string[]; error?: string } {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return {
      error: 'not valid JSON; want a JSON array of strings, e.g. ["topology.kubernetes.io/zone","*"]',
    };
  }
  if (!Array.isArray(v) || v.some((k) => typeof k !== 'string'))
    return { error: 'must be a JSON array of strings, e.g. ["topology.kubernetes.io/zone","*"]' };
  return { keys: v as string[] };
}

/** Reads every topology rule a Service carries, and reports malformed ones. Pure. */
export function serviceRules(svc: TopologyService): ServiceRules {
  const problems: TopologyProblem[] = [];
  const invalid = (message: string) => problems.push({ reason: 'InvalidTopologyAnnotation', message });
  const a = svc.annotations;

  let ordered: Rule | undefined;
  const annotated = a[ORDERED_KEYS_ANNOTATION];
  let annotatedKeys: string[] | undefined;
  if (annotated !== undefined) {
    const parsed = parseKeyList(annotated);
    if (parsed.keys === undefined) {
      invalid(
        `${annotationPath(ORDERED_KEYS_ANNOTATION).toString()}: ${parsed.error ?? ''}; the annotation is ignored`,
      );
    } else if (parsed.keys.length > 0) {
      annotatedKeys = parsed.keys;
      for (const e of validateTopologyKeys(
        parsed.keys,
        annotationPath(ORDERED_KEYS_ANNOTATION),
        svc.externalTrafficPolicy,
      ))
        invalid(fieldErrorString(e));
    }
  }
  if (svc.topologyKeys.length > 0) {
    ordered = { kind: 'ordered-keys', source: 'spec.topologyKeys', keys: svc.topologyKeys };
    if (annotatedKeys !== undefined && JSON.stringify(annotatedKeys) !== JSON.stringify(svc.topologyKeys))
      problems.push({
        reason: 'TopologyRuleConflict',
        message:
          `spec.topologyKeys ${JSON.stringify(svc.topologyKeys)} and annotation ${ORDERED_KEYS_ANNOTATION} ` +
          `${JSON.stringify(annotatedKeys)} differ; spec.topologyKeys decides`,
      });
  } else if (annotatedKeys !== undefined) {
    ordered = { kind: 'ordered-keys', source: `annotation ${ORDERED_KEYS_ANNOTATION}`, keys: annotatedKeys };
  }

  let superedge: Rule | undefined;
  const se = a[SUPEREDGE_KEYS_ANNOTATION];
  if (se !== undefined) {
    const parsed = parseKeyList(se);
    if (parsed.keys === undefined) {
      invalid(
        `${annotationPath(SUPEREDGE_KEYS_ANNOTATION).toString()}: ${parsed.error ?? ''}; the annotation is ignored`,
      );
    } else if (parsed.keys.length > 0) {
      superedge = { kind: 'superedge', source: 'annotation topologyKeys', keys: parsed.keys };
      if (parsed.keys.includes('*'))
        invalid(
          `${annotationPath(SUPEREDGE_KEYS_ANNOTATION).toString()}: "*" is not a node label; SuperEdge keys ` +
            `are matched by equal values, so "*" matches nothing (use ${ORDERED_KEYS_ANNOTATION} for a fallback)`,
        );
    }
  }

  let openyurt: Rule | undefined;
  const oy = a[OPENYURT_KEYS_ANNOTATION];
  if (oy !== undefined && oy !== '') {
    if (oy === HOSTNAME_LABEL || OPENYURT_POOL_VALUES.includes(oy))
      openyurt = { kind: 'openyurt', source: 'annotation openyurt.io/topologyKeys', keys: [oy] };
    else
      invalid(
        `${annotationPath(OPENYURT_KEYS_ANNOTATION).toString()}: Unsupported value: ${JSON.stringify(oy)}: ` +
          `supported values: "kubernetes.io/hostname", "openyurt.io/nodepool", "kubernetes.io/zone"; ` +
          'as in OpenYurt, every endpoint passes',
      );
  }

  const mode = hintsAnnotation(a);
  const td = svc.trafficDistribution;
  const hintsRequested =
    mode !== undefined
      ? `annotation ${mode.key}=${mode.value}`
      : td !== undefined
        ? `spec.trafficDistribution=${td}`
        : undefined;

  return {
    ...(ordered !== undefined ? { ordered } : {}),
    ...(superedge !== undefined ? { superedge } : {}),
    ...(openyurt !== undefined ? { openyurt } : {}),
    ...(hintsRequested !== undefined ? { hintsRequested } : {}),
    internalLocal: svc.internalTrafficPolicy === 'Local',
    externalLocal: svc.externallyAccessible && svc.externalTrafficPolicy === 'Local',
    problems,
  };
}

/** The topology-mode annotation if it asks for hints ("Auto"/"auto"; the deprecated key wins, as upstream). */
function hintsAnnotation(a: Labels): { key: string; value: string } | undefined {
  for (const key of [TOPOLOGY_AWARE_HINTS_ANNOTATION, TOPOLOGY_MODE_ANNOTATION]) {
    const v = a[key];
    if (v !== undefined) return v === 'Auto' || v === 'auto' ? { key, value: v } : undefined;
  }
  return undefined;
}

/** The rules that decide internal and external traffic, and the conflicts between what the Service carries. */
export interface ChosenRules {
  readonly internal: Rule;
  readonly external?: Rule;
  readonly problems: readonly TopologyProblem[];
}

// The rules every Service without an edge rule shares (most do): a topology index holds one per view.
const NO_RULE: Rule = Object.freeze({ kind: 'none', source: 'none', keys: Object.freeze([]) });
const HINTS_RULE: Rule = Object.freeze({ kind: 'hints', source: 'endpoint hints', keys: Object.freeze([]) });
const INTERNAL_LOCAL: Rule = Object.freeze({
  kind: 'local',
  source: 'spec.internalTrafficPolicy',
  keys: Object.freeze(['Local']),
});
const EXTERNAL_LOCAL: Rule = Object.freeze({
  kind: 'local',
  source: 'spec.externalTrafficPolicy',
  keys: Object.freeze(['Local']),
});

const describe = (r: Rule): string => (r.kind === 'local' ? `${r.source}=Local` : r.source);

/** Applies the precedence; `hinted` says whether the Service's ready endpoints carry hints. Pure. */
export function chooseRules(svc: TopologyService, rules: ServiceRules, hinted = false): ChosenRules {
  const problems = [...rules.problems];
  const edge = [rules.ordered, rules.superedge, rules.openyurt].filter((r): r is Rule => r !== undefined);
  const hints: Rule | undefined = rules.hintsRequested !== undefined || hinted ? HINTS_RULE : undefined;
  const base: Rule = edge[0] ?? hints ?? NO_RULE;

  const losers = [
    ...edge.slice(1).map(describe),
    ...(edge.length > 0 && rules.hintsRequested !== undefined ? [rules.hintsRequested] : []),
  ];
  if (losers.length > 0)
    problems.push({
      reason: 'TopologyRuleConflict',
      message: `${describe(base)} decides which endpoints each node uses; ${losers.join(', ')} ${losers.length === 1 ? 'is' : 'are'} ignored`,
    });

  const internal: Rule = rules.internalLocal ? INTERNAL_LOCAL : base;
  const external: Rule | undefined = !svc.externallyAccessible
    ? undefined
    : rules.externalLocal
      ? EXTERNAL_LOCAL
      : base;

  if (base.kind !== 'none' && base.kind !== 'hints' && internal.kind === 'local') {
    problems.push({
      reason: 'TopologyRuleConflict',
      message:
        `internalTrafficPolicy=Local decides internal traffic, so ${describe(base)} ` +
        (external !== undefined && external.kind !== 'local'
          ? 'applies to external traffic only'
          : 'is ignored'),
    });
  } else if (
    base.kind !== 'none' &&
    base.kind !== 'hints' &&
    external?.kind === 'local' &&
    base.source !== 'spec.topologyKeys'
  ) {
    // spec.topologyKeys with externalTrafficPolicy=Local is rejected by validation; annotations cannot be.
    problems.push({
      reason: 'TopologyRuleConflict',
      message: `externalTrafficPolicy=Local decides external traffic, so ${describe(base)} applies to internal traffic only`,
    });
  }
  return { internal, ...(external !== undefined ? { external } : {}), problems };
}

/** Convenience for callers holding a Service as JSON: every problem with its topology settings. */
export function topologyProblems(svc: {
  metadata?: unknown;
  spec?: unknown;
  status?: unknown;
}): TopologyProblem[] {
  const ts = topologyService(svc);
  return [...chooseRules(ts, serviceRules(ts)).problems];
}
