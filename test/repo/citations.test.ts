// The citation matcher as a table: lines it must flag (with the rule) and lines it must let through.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { citationsIn, citationsInText, type Citation } from './citations.js';

// The fixtures spell the forbidden words through placeholders, so that this file is clean under the
// rules it tests: {S} is the notes folder's name, {D} the design file's word, {I} "issue", {H} the hash
// sign and {P} the section sign.
const spell = (line: string): string =>
  line
    .replaceAll('{S}', 'sha' + 'red')
    .replaceAll('{D}', 'DES' + 'IGN')
    .replaceAll('{I}', 'iss' + 'ue')
    .replaceAll('{H}', '#')
    .replaceAll('{P}', '\u00a7');

const flagged: ReadonlyArray<readonly [string, Citation['rule']]> = (
  [
    ['// never sent it (../{S}/reference/notes.md).', 'outside-path'],
    ['see /work/{S}/{D}.md', 'outside-path'],
    ['Behaviour to match: `{S}/reference/notes.md`.', 'outside-path'],
    ['// src/core is pure ({D} {P}2).', 'design-notes'],
    ['the layout of {D}.md', 'design-notes'],
    ["it('the allocation texts of {I} 4 come out exactly'", 'issue-number'],
    ['// Workloads end to end ({I} 13, "Tests")', 'issue-number'],
    ['{I} {H}4 asked for it', 'issue-number'],
    ['{I}s 5 and 6', 'issue-number'],
    ['P5 of {I} 15', 'issue-number'],
    ['({I}s: 7)', 'issue-number'],
    ['the proposed fix ({H}139525).', 'bare-number'],
    ['fixed in {H}15', 'bare-number'],
    ['// Costs (the notes {P}7): every byte', 'section'],
    ["describe('initIPFamilyFields on create ({P}1.5 table)'", 'section'],
    ['// {P}8.1 step 2 looks at the last key only.', 'section'],
  ] as const
).map(([line, rule]) => [spell(line), rule] as const);

const allowed: readonly string[] = [
  '// kube answers 500 here (kubernetes/kubernetes#101350, kubernetes/kubernetes#139485).',
  'a per-slice filter cannot know (openyurt#1020); openyurt#2809 too',
  'fabric8io/kubernetes-client#734',
  'superedge#424 and k8s#90259',
  'A PEM private key (PKCS#8, "PRIVATE KEY"); RSA ones as PKCS#1 v1.5.',
  '/** keyUsage bits (RFC 5280 {P}4.2.1.3), numbered from the first octet. */',
  'Headers that describe one connection (RFC 9110 {P}7.6.1)',
  'KEP-3866 {P}Design Details',
  'keps/sig-network/3866-nftables-proxy/README.md',
  'see [docs/design/grids.md](docs/design/grids.md)',
  "import { withZeroValues } from '../../api/schema/zero-values.js';",
  "const fill = '#333'; color: {H}000;",
  'border: 2px solid {H}7a0010; outline: 3px solid {H}2f5bd3;',
  'issueServingCert(ca, { commonName: "x" })',
  'svcplane issues no service-account tokens',
  'a shared informer factory; shared/ memory',
  'the reference can never resolve',
  'design notes live in docs/design/',
  'P5: a node relabel that changes 102 served slices',
  'kube-proxy 1.17–1.21 `FilterTopologyEndpoint` (KEP-536)',
].map(spell);

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
    assert.deepEqual(citationsIn(spell('{I}s 5 and 6, see {H}7')), [
      { rule: 'issue-number', text: spell('{I}s 5') },
      { rule: 'bare-number', text: '#7' },
    ]);
  });
});

describe('citationsInText', () => {
  it('numbers lines from 1', () => {
    assert.deepEqual(citationsInText(spell('clean\n// ({D} {P}4)\nclean\n{I} 2\n')), [
      { rule: 'design-notes', text: spell('{D}'), line: 2 },
      { rule: 'section', text: spell('{P}'), line: 2 },
      { rule: 'issue-number', text: spell('{I} 2'), line: 4 },
    ]);
  });
});
