// The escalation relation: table tests from upstream's ConfirmNoEscalation, and its algebra as properties.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compactString, covers, escalationMessage, ruleCovers } from './covers.js';
import { ruleAllows } from './rule-match.js';
import { request, rules } from './testing/arbitraries.js';
import type { PolicyRule } from './types.js';

describe('covers', () => {
  const cases: [string, PolicyRule[], PolicyRule[], string[]][] = [
    [
      'a superset of verbs',
      [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods'] }],
      [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }],
      [],
    ],
    [
      'stars cover everything',
      [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      [{ verbs: ['delete'], apiGroups: ['apps'], resources: ['deployments/scale'], resourceNames: ['x'] }],
      [],
    ],
    [
      'missing verbs are compacted per group and resource',
      [{ verbs: ['watch'], apiGroups: [''], resources: ['secrets'] }],
      [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['secrets'] }],
      ['{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}'],
    ],
    [
      '*/scale covers deployments/scale, not deployments',
      [{ verbs: ['get'], apiGroups: ['apps'], resources: ['*/scale'] }],
      [{ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale', 'deployments'] }],
      ['{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}'],
    ],
    [
      'names held do not cover all names',
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }],
      [
        { verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] },
        { verbs: ['get'], apiGroups: [''], resources: ['pods'] },
      ],
      ['{APIGroups:[""], Resources:["pods"], Verbs:["get"]}'],
    ],
    [
      'one name missing is named',
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }],
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a', 'b'] }],
      ['{APIGroups:[""], Resources:["pods"], ResourceNames:["b"], Verbs:["get"]}'],
    ],
    [
      'URL prefixes',
      [{ verbs: ['get'], nonResourceURLs: ['/api/*'] }],
      [{ verbs: ['get', 'post'], nonResourceURLs: ['/api/v1', '/healthz'] }],
      [
        '{NonResourceURLs:["/api/v1"], Verbs:["post"]}',
        '{NonResourceURLs:["/healthz"], Verbs:["get"]}',
        '{NonResourceURLs:["/healthz"], Verbs:["post"]}',
      ],
    ],
  ];
  for (const [name, held, wanted, missing] of cases) {
    it(name, () => {
      const got = covers(held, wanted);
      assert.deepEqual(got.missing.map(compactString), missing);
      assert.equal(got.covered, missing.length === 0);
    });
  }

  it("formats upstream's message", () => {
    const { missing } = covers([], [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['secrets'] }]);
    assert.equal(
      escalationMessage({ name: 'alice', groups: ['system:authenticated'] }, missing),
      'user "alice" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}',
    );
  });
});

describe('covers, properties', () => {
  it('a rule set covers itself', () => {
    fc.assert(fc.property(rules, (rs) => covers(rs, rs).covered));
  });

  it('covering is transitive', () => {
    fc.assert(
      fc.property(rules, rules, rules, (a, b, c) => {
        fc.pre(covers(a, b).covered && covers(b, c).covered);
        return covers(a, c).covered;
      }),
      { numRuns: 2000 },
    );
  });

  it('what a covered rule set allows, the covering one allows', () => {
    fc.assert(
      fc.property(rules, rules, request, (held, wanted, req) => {
        fc.pre(covers(held, wanted).covered);
        if (!wanted.some((r) => ruleAllows(r, req))) return true;
        return held.some((r) => ruleAllows(r, req));
      }),
      { numRuns: 2000 },
    );
  });

  it('the empty set covers only empty rules', () => {
    fc.assert(
      fc.property(
        rules,
        (rs) => covers([], rs).covered === rs.every((r) => !rs.length || ruleCoversNothing(r)),
      ),
    );
  });
});

/** A rule with no group, resource or URL grants nothing, so anyone covers it. */
const ruleCoversNothing = (r: PolicyRule): boolean => ruleCovers({ verbs: [] }, r);
