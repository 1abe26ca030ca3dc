import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderExplanation } from './explain.js';
import { ep, node, NODEPOOL, run, svc, ZONE, type NodeSpec } from './testing/builders.js';
import type { TopologyEndpoint } from './types.js';
import type { SvcOptions } from './testing/builders.js';

const explain = (o: SvcOptions, endpoints: TopologyEndpoint[], nodes: NodeSpec[], client: string) => {
  const { decision } = run({ service: svc(o), endpoints, nodes, node: client });
  return renderExplanation(decision, { nodeLabels: nodes.find((n) => n.name === client)?.labels });
};
const line = (text: string, prefix: string) => text.split('\n').find((l) => l.startsWith(prefix)) ?? '';

const zoned = [node('a1', { [ZONE]: 'a' }), node('b1', { [ZONE]: 'b' }), node('bare')];

describe('renderExplanation: the one sentence that says why', () => {
  it('names the key that matched and counts (singular and plural)', () => {
    const t = explain({ topologyKeys: [ZONE] }, [ep('10.0.0.1', { node: 'a1' })], zoned, 'a1');
    assert.equal(line(t, 'Service'), `Service default/web, seen from node a1 (${ZONE}=a)`);
    assert.equal(line(t, 'Internal'), `Internal traffic (cluster IP): 1 of 1 endpoint through ${ZONE}=a`);
    const two = explain(
      { topologyKeys: [ZONE, '*'] },
      [ep('10.0.0.1', { node: 'a1' }), ep('10.0.0.2', { node: 'b1' })],
      zoned,
      'bare',
    );
    assert.equal(line(two, 'Internal'), 'Internal traffic (cluster IP): 2 of 2 endpoints through "*"');
  });

  it('says connections are refused when no ordered key matches', () => {
    const t = explain(
      { topologyKeys: [ZONE] },
      [ep('10.0.0.1', { node: 'b1' })],
      [...zoned, node('c1', { [ZONE]: 'c' })],
      'c1',
    );
    assert.match(
      line(t, 'Internal'),
      /nothing: no key of \["topology\.kubernetes\.io\/zone"\] matched a ready endpoint, so connections are refused$/,
    );
    assert.match(
      t,
      /10\.0\.0\.1 .* dropped +no key matched any endpoint; this one has \(topology\.kubernetes\.io\/zone=b\)/,
    );
  });

  it('tells how to label a node that lacks the SuperEdge key, and says so for an unknown node', () => {
    const t = explain({ superedge: ['unit'] }, [ep('10.0.0.1', { node: 'a1' })], zoned, 'bare');
    assert.equal(line(t, 'Service'), 'Service default/web, seen from node bare (unit=(none))');
    assert.match(
      line(t, 'Internal'),
      /nothing: node bare has no label unit; label it \(kubectl label node bare unit=VALUE\)$/,
    );
    const ghost = explain({ superedge: ['unit'] }, [ep('10.0.0.1', { node: 'a1' })], zoned, 'ghost');
    assert.match(line(ghost, 'Service'), /\(not a known Node\)$/);
    assert.match(
      line(ghost, 'Internal'),
      /nothing: node ghost is not a known Node, so it has no labels to match/,
    );
  });

  it('explains a SuperEdge "*" instead of asking for a label named *', () => {
    const t = explain({ superedge: ['*'] }, [ep('10.0.0.1', { node: 'a1' })], zoned, 'a1');
    assert.match(line(t, 'Internal'), /"\*" is not a label/);
    assert.match(t, /Problems .*\n {2}InvalidTopologyAnnotation: .*"\*" is not a node label/);
  });

  it('shows the OpenYurt pool label, and says when the node is in no pool', () => {
    const pools = [node('p1a', { [NODEPOOL]: 'p1' }), node('p2a', { [NODEPOOL]: 'p2' }), node('nopool')];
    const eps = [ep('10.0.0.1', { node: 'p2a' }), ep('10.0.0.2', { node: 'nopool' })];
    const inPool = explain({ openyurt: 'openyurt.io/nodepool' }, eps, pools, 'p1a');
    assert.equal(line(inPool, 'Service'), `Service default/web, seen from node p1a (${NODEPOOL}=p1)`);
    assert.match(
      line(inPool, 'Internal'),
      new RegExp(`no ready endpoint runs in this node's unit \\(${NODEPOOL}=p1\\)`),
    );
    const noPool = explain({ openyurt: 'openyurt.io/nodepool' }, eps, pools, 'nopool');
    assert.match(line(noPool, '  Rule:'), /this node is in no pool .* only this node's own endpoints/);
    assert.equal(line(noPool, 'Internal'), 'Internal traffic (cluster IP): 1 of 2 endpoints');
  });

  it('says a Service without endpoints has none, and lists one row per endpoint otherwise', () => {
    const none = explain({ superedge: ['unit'] }, [], zoned, 'a1');
    assert.match(line(none, 'Internal'), /the Service has no endpoints/);
    const t = explain({}, [ep('10.0.0.1', { node: 'a1' }), ep('10.0.0.2', { ready: false })], zoned, 'a1');
    const rows = t.split('\n').filter((l) => /^ {2}10\./.test(l));
    assert.deepEqual(
      rows.map((r) => r.trim().split(/\s{3,}/)),
      [
        ['10.0.0.1', '<none>', 'a1', 'kept', 'no topology rule'],
        ['10.0.0.2', '<none>', '<none>', 'dropped', 'not serving'],
      ],
    );
    assert.match(t, /External traffic: none/);
  });
});
