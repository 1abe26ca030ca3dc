// ClusterRole aggregation: a table of upstream's cases, and properties of the union over random roles.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { labelSelectorMatches, type LabelSelectorObject } from '../../api/label-match.js';
import type { PolicyRule, RoleObject } from '../../api/rbac.js';
import { aggregatedRules, sameRules } from './aggregate.js';

const clusterRole = (
  name: string,
  labels: Record<string, string>,
  rules: PolicyRule[],
  selectors?: LabelSelectorObject[],
): RoleObject => ({
  metadata: { name, labels },
  rules,
  ...(selectors === undefined ? {} : { aggregationRule: { clusterRoleSelectors: selectors } }),
});

const get = (resources: string[]): PolicyRule => ({ verbs: ['get'], apiGroups: [''], resources });
const TO_VIEW = { matchLabels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' } };
const VIEW_LABEL = { 'rbac.authorization.k8s.io/aggregate-to-view': 'true' };

describe('aggregatedRules', () => {
  it('takes the union of the picked roles, by selector then by name, each rule once', () => {
    const view = clusterRole('view', {}, [get(['stale'])], [TO_VIEW, { matchLabels: { extra: 'yes' } }]);
    const all = [
      view,
      clusterRole('b-pods', VIEW_LABEL, [get(['pods']), get(['services'])]),
      clusterRole('a-svc', VIEW_LABEL, [get(['services'])]),
      clusterRole('c-extra', { extra: 'yes' }, [get(['pods']), { verbs: ['get'], nonResourceURLs: ['/x'] }]),
      clusterRole('unpicked', { other: 'true' }, [get(['secrets'])]),
    ];
    assert.deepEqual(aggregatedRules(view, all), [
      get(['services']),
      get(['pods']),
      { verbs: ['get'], nonResourceURLs: ['/x'] },
    ]);
  });

  it('never picks the aggregating role itself, even when its labels match', () => {
    const self = clusterRole('self', VIEW_LABEL, [get(['own'])], [TO_VIEW]);
    assert.deepEqual(aggregatedRules(self, [self]), []);
  });

  it('treats an absent list as an empty one, and drops empty lists from what it writes', () => {
    const agg = clusterRole('agg', {}, [], [TO_VIEW]);
    const a = clusterRole('a', VIEW_LABEL, [
      { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: [] },
    ]);
    const b = clusterRole('b', VIEW_LABEL, [get(['pods'])]);
    assert.deepEqual(aggregatedRules(agg, [agg, a, b]), [get(['pods'])]);
  });

  it('an empty selector picks every other ClusterRole; an unknown operator picks none', () => {
    const roles = [clusterRole('x', {}, [get(['x'])]), clusterRole('y', { k: 'v' }, [get(['y'])])];
    const all = clusterRole('all', {}, [], [{}]);
    assert.deepEqual(aggregatedRules(all, [all, ...roles]), [get(['x']), get(['y'])]);
    const bad = clusterRole('bad', {}, [], [{ matchExpressions: [{ key: 'k', operator: 'Like' }] }]);
    assert.deepEqual(aggregatedRules(bad, roles), []);
  });
});

describe('sameRules', () => {
  it('is order-sensitive and treats absent lists as empty', () => {
    assert.ok(sameRules(undefined, []));
    assert.ok(sameRules([{ verbs: ['get'], resources: [] }], [{ verbs: ['get'] }]));
    assert.ok(!sameRules([get(['a']), get(['b'])], [get(['b']), get(['a'])]));
    assert.ok(!sameRules([get(['a'])], [get(['a']), get(['a'])]));
  });
});

// ---- properties -------------------------------------------------------------------------------

const word = fc.constantFrom('a', 'b', 'c');
const small = fc.array(word, { maxLength: 2 });
const ruleArb: fc.Arbitrary<PolicyRule> = fc.record(
  { verbs: small, apiGroups: small, resources: small, resourceNames: small },
  { requiredKeys: ['verbs'] },
);
const labelsArb = fc.dictionary(word, word, { maxKeys: 2 });
const selectorArb: fc.Arbitrary<LabelSelectorObject> = fc.oneof(
  fc.record({ matchLabels: labelsArb }),
  fc.record({
    matchExpressions: fc.array(
      fc
        .record({
          key: word,
          operator: fc.constantFrom('Exists', 'DoesNotExist', 'In'),
          values: fc.array(word, { minLength: 1, maxLength: 2 }),
        })
        .map((e) => (e.operator === 'In' ? e : { key: e.key, operator: e.operator })),
      { maxLength: 2 },
    ),
  }),
);
const worldArb = fc
  .tuple(
    fc.uniqueArray(
      word.chain((w) => fc.constantFrom(`${w}1`, `${w}2`, `${w}3`)),
      { minLength: 1, maxLength: 6 },
    ),
    fc.array(fc.tuple(labelsArb, fc.array(ruleArb, { maxLength: 3 })), { minLength: 6, maxLength: 6 }),
    fc.array(selectorArb, { minLength: 1, maxLength: 3 }),
  )
  .map(([names, bodies, selectors]) => {
    const roles = names.map((n, i) => clusterRole(n, bodies[i]![0], bodies[i]![1]));
    const target = { ...roles[0]!, aggregationRule: { clusterRoleSelectors: selectors } };
    return { target, all: [target, ...roles.slice(1)] };
  });

/** An independent oracle: a rule's identity with absent lists read as empty. */
const key = (r: PolicyRule): string =>
  JSON.stringify(
    (['verbs', 'apiGroups', 'resources', 'resourceNames', 'nonResourceURLs'] as const).map((k) => r[k] ?? []),
  );
const picked = (target: RoleObject, all: readonly RoleObject[]): RoleObject[] =>
  all.filter(
    (c) =>
      c.metadata.name !== target.metadata.name &&
      (target.aggregationRule?.clusterRoleSelectors ?? []).some((s) =>
        labelSelectorMatches(s, c.metadata.labels),
      ),
  );

describe('aggregatedRules properties', () => {
  it('holds each rule once, and sameRules agrees with itself', () => {
    fc.assert(
      fc.property(worldArb, ({ target, all }) => {
        const out = aggregatedRules(target, all);
        const keys = out.map(key);
        assert.equal(new Set(keys).size, keys.length);
        assert.ok(sameRules(out, aggregatedRules(target, all)));
      }),
    );
  });

  it('does not depend on the order the roles are listed in, nor on the target own rules', () => {
    fc.assert(
      fc.property(worldArb, fc.array(ruleArb, { maxLength: 3 }), ({ target, all }, own) => {
        const out = aggregatedRules(target, all);
        const reordered = [...all].reverse();
        assert.deepEqual(aggregatedRules(target, reordered), out);
        const rewritten = { ...target, rules: own };
        assert.deepEqual(aggregatedRules(rewritten, [rewritten, ...all.slice(1)]), out);
      }),
    );
  });

  it('is exactly the union of the rules of the other roles some selector picks', () => {
    fc.assert(
      fc.property(worldArb, ({ target, all }) => {
        const out = new Set(aggregatedRules(target, all).map(key));
        const union = new Set(picked(target, all).flatMap((c) => (c.rules ?? []).map(key)));
        assert.deepEqual(out, union);
      }),
    );
  });
});
