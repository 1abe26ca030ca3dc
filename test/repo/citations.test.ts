// The citation matcher as a table: lines it must flag (with the rule) and lines it must let through.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { citationsIn, citationsInText, type Citation } from './citations.js';

const flagged: ReadonlyArray<readonly [string, Citation['rule']]> = [
  ['// never sent it (../shared/reference/zero-values.md §1).', 'outside-path'],
  ['see /work/shared/DESIGN.md', 'outside-path'],
  ['Behaviour to match: `shared/reference/workloads.md`.', 'outside-path'],
  ['// tables taken from kubernetes-semantics.md', 'notes-file'],
  ['// Costs (performance-anchors §7): every byte', 'notes-file'],
  ['// (reference: client-compatibility §1.2; JSON is refused)', 'notes-file'],
  ['// B4 in edge-topology.md', 'notes-file'],
  ['what rbac-and-identity says', 'notes-file'],
  ['as nftables-proxy.md lists', 'notes-file'],
  ['// a new Pod (zero-values.md §3.3)', 'notes-file'],
  ['// Deployment status (reference workloads.md §1.9)', 'notes-file'],
  ['// src/core is pure (DESIGN §2).', 'design-notes'],
  ['the layout of DESIGN.md', 'design-notes'],
  ["it('the allocation texts of issue 4 come out exactly'", 'issue-number'],
  ['// Workloads end to end (issue 13, "Tests")', 'issue-number'],
  ['Issue #4 asked for it', 'issue-number'],
  ['issues 5 and 6', 'issue-number'],
  ['P5 of issue 15', 'issue-number'],
  ['(issues: 7)', 'issue-number'],
  ['the proposed fix (#139525).', 'bare-number'],
  ['fixed in #15', 'bare-number'],
  ["describe('initIPFamilyFields on create (§1.5 table)'", 'section'],
  ['// §8.1 step 2 looks at the last key only.', 'section'],
];

const allowed: readonly string[] = [
  '// kube answers 500 here (kubernetes/kubernetes#101350, kubernetes/kubernetes#139485).',
  'a per-slice filter cannot know (openyurt#1020); openyurt#2809 too',
  'fabric8io/kubernetes-client#734',
  'superedge#424 and k8s#90259',
  'A PEM private key (PKCS#8, "PRIVATE KEY"); RSA ones as PKCS#1 v1.5.',
  '/** keyUsage bits (RFC 5280 §4.2.1.3), numbered from the first octet. */',
  'Headers that describe one connection (RFC 9110 §7.6.1)',
  'KEP-3866 §Design Details',
  'keps/sig-network/3866-nftables-proxy/README.md',
  'see [docs/design/workloads.md](docs/design/workloads.md)',
  "import { withZeroValues } from '../../api/schema/zero-values.js';",
  'test/e2e/zero-values.test.ts and src/core/workloads/rolling.ts',
  "const fill = '#333'; color: #000;",
  'issueServingCert(ca, { commonName: "x" })',
  'svcplane issues no service-account tokens',
  'the reference can never resolve',
  'design notes live in docs/design/',
  'P5: a node relabel that changes 102 served slices',
  'kube-proxy 1.17–1.21 `FilterTopologyEndpoint` (KEP-536)',
];

describe('citationsIn', () => {
  for (const [line, rule] of flagged) {
    it(`flags ${rule}: ${line}`, () => {
      const rules = citationsIn(line).map((c) => c.rule);
      assert.ok(rules.includes(rule), `expected ${rule} in ${JSON.stringify(rules)}`);
    });
  }
  for (const line of allowed) {
    it(`allows: ${line}`, () => {
      assert.deepEqual(citationsIn(line), []);
    });
  }
  it('reports each match with the text that matched', () => {
    assert.deepEqual(citationsIn('issues 5 and 6, see #7'), [
      { rule: 'issue-number', text: 'issues 5' },
      { rule: 'bare-number', text: '#7' },
    ]);
  });
});

describe('citationsInText', () => {
  it('numbers lines from 1', () => {
    assert.deepEqual(citationsInText('clean\n// (DESIGN §4)\nclean\nissue 2\n'), [
      { rule: 'design-notes', text: 'DESIGN', line: 2 },
      { rule: 'section', text: '§', line: 2 },
      { rule: 'issue-number', text: 'issue 2', line: 4 },
    ]);
  });
});
