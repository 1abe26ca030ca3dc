import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodeRules } from '../core/demo/node-rules.js';
import {
  answersFit,
  expectedForOrderedKeys,
  expectedForUnitKey,
  rulesCell,
  rulesFit,
  table,
  tally,
} from './expect.js';

const ZONE = 'topology.kubernetes.io/zone';
const labels = new Map<string, Record<string, string>>([
  ['node0', { zone1: 'nodeunit1', [ZONE]: 'zone-a' }],
  ['node1', { zone1: 'nodeunit2', [ZONE]: 'zone-b' }],
  ['node2', { zone1: 'nodeunit2' }],
]);
const eps = [
  { ip: '10.244.0.2', node: 'node0' },
  { ip: '10.244.1.2', node: 'node1' },
  { ip: '10.244.2.2', node: 'node2' },
];
const set = (...xs: string[]) => new Set(xs);

describe('demo expectations', () => {
  it('a unit key keeps the pods on the nodes of the client’s unit; no unit label: refused', () => {
    assert.deepEqual(expectedForUnitKey('node0', 'zone1', eps, labels), set('node0'));
    assert.deepEqual(expectedForUnitKey('node1', 'zone1', eps, labels), set('node1', 'node2'));
    assert.deepEqual(expectedForUnitKey('nodeX', 'zone1', eps, labels), set());
  });

  it('ordered keys: the first key with a match wins; no label and no "*": refused; "*": everything', () => {
    assert.deepEqual(expectedForOrderedKeys('node0', [ZONE], eps, labels), set('node0'));
    assert.deepEqual(expectedForOrderedKeys('node2', [ZONE], eps, labels), set(), 'node2 has no zone');
    assert.deepEqual(
      expectedForOrderedKeys('node2', [ZONE, '*'], eps, labels),
      set('node0', 'node1', 'node2'),
    );
    assert.deepEqual(expectedForOrderedKeys('node0', [ZONE, '*'], eps, labels), set('node0'), 'zone first');
    const noZoneA = eps.filter((e) => e.node !== 'node0');
    assert.deepEqual(expectedForOrderedKeys('node0', [ZONE], noZoneA, labels), set(), 'empty zone');
    assert.deepEqual(
      expectedForOrderedKeys('node0', [ZONE, 'zone1', '*'], noZoneA, labels),
      set('node1', 'node2'),
      'zone-a and nodeunit1 are empty: "*"',
    );
    assert.deepEqual(expectedForOrderedKeys('node1', ['zone1', ZONE], eps, labels), set('node1', 'node2'));
  });

  it('answers fit when all come from expected nodes and each of those answered, or all are refused when nothing is expected', () => {
    assert.equal(answersFit(['node1', 'node2'], set('node1', 'node2')), true);
    assert.equal(answersFit(['node1', 'node1'], set('node1', 'node2')), false, 'node2 never answered');
    assert.equal(answersFit(['node1', 'node0'], set('node1', 'node2')), false);
    assert.equal(answersFit(['refused', 'refused'], set()), true);
    assert.equal(answersFit(['refused', 'node1'], set()), false);
    assert.equal(answersFit(['timeout'], set('node1')), false);
    assert.equal(answersFit([], set('node1')), false);
  });

  it('tally and table render what the demo prints', () => {
    assert.equal(tally(['node2', 'node1', 'node2']), 'node1 ×1, node2 ×2');
    assert.equal(table(['A', 'BB'], [['xyz', 'q']]), 'A    BB\nxyz  q');
  });

  it("a node's rules fit when they DNAT to exactly the expected nodes' endpoints, or refuse when none is expected", () => {
    const dnat = (...targets: string[]): NodeRules => ({ kind: 'dnat', chain: 'service-X', targets });
    const table: Array<[NodeRules, Set<string>, boolean, string]> = [
      [dnat('10.244.1.2:8080', '10.244.2.2:8080'), set('node1', 'node2'), true, 'dnat node1,node2'],
      [dnat('10.244.1.2:8080'), set('node1', 'node2'), false, 'dnat node1'],
      [dnat('10.244.0.2:8080', '10.244.1.2:8080'), set('node1'), false, 'dnat node0,node1'],
      [dnat('10.244.9.9:8080'), set('node1'), false, 'dnat 10.244.9.9:8080'],
      [dnat(), set('node1'), false, 'dnat nowhere'],
      [{ kind: 'reject' }, set(), true, 'reject'],
      [{ kind: 'drop' }, set(), false, 'drop'],
      [{ kind: 'none' }, set(), false, 'none'],
      [{ kind: 'reject' }, set('node1'), false, 'reject'],
    ];
    for (const [rules, expected, fits, cell] of table) {
      assert.equal(rulesFit(rules, eps, expected), fits, JSON.stringify([rules, [...expected]]));
      assert.equal(rulesCell(rules, eps), cell);
    }
  });
});
