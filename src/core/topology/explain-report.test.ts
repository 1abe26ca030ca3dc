import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { explainReport, type EndpointsRead } from './explain-report.js';
import { ep, node, run, svc, ZONE } from './testing/builders.js';

const nodes = [node('a1', { [ZONE]: 'a' }), node('b1', { [ZONE]: 'b' })];
const { decision } = run({
  service: svc({ topologyKeys: [ZONE] }),
  endpoints: [ep('10.0.0.1', { node: 'a1' })],
  nodes,
  node: 'a1',
});
const obj = (name: string): KObject => ({ apiVersion: 'v1', kind: 'X', metadata: { name } });

describe('explainReport: the one home of what explain prints', () => {
  const cases: [string, EndpointsRead, ReadonlyMap<string, boolean> | undefined, string][] = [
    ['one slice', { kind: 'slices', objects: [obj('s1')] }, undefined, '1 EndpointSlice'],
    ['two slices', { kind: 'slices', objects: [obj('s1'), obj('s2')] }, undefined, '2 EndpointSlices'],
    ['no slice read', { kind: 'slices', objects: [] }, undefined, 'no EndpointSlices or Endpoints'],
    ['the Endpoints', { kind: 'endpoints', object: obj('web') }, undefined, 'Endpoints'],
    ['nothing', { kind: 'none' }, undefined, 'no EndpointSlices or Endpoints'],
    [
      'edge-health, all well',
      { kind: 'endpoints', object: obj('web') },
      new Map([['a1', true]]),
      'Endpoints, edge-health (no node unhealthy)',
    ],
    [
      'edge-health, some not',
      { kind: 'none' },
      new Map([
        ['a1', false],
        ['b1', false],
      ]),
      'no EndpointSlices or Endpoints, edge-health (a1, b1 unhealthy)',
    ],
  ];
  for (const [name, read, health, source] of cases)
    it(`names its source: ${name}`, () => {
      const r = explainReport({
        decision,
        nodeLabels: { [ZONE]: 'a' },
        read,
        ...(health === undefined ? {} : { health }),
        nodes: 2,
      });
      assert.equal(r.json.source, source);
      assert.ok(r.text.endsWith(`\n\nRead from: ${source}, 2 Nodes.`));
    });

  it('spreads the decision, with the node labels (null when unknown) and no conditions', () => {
    const r = explainReport({ decision, nodeLabels: undefined, read: { kind: 'none' }, nodes: 0 });
    assert.deepEqual(r.json, { ...decision, nodeLabels: null, source: r.json.source, conditions: [] });
    assert.match(r.text, /^Service default\/web, seen from node a1 \(not a known Node\)/);
  });

  it('adds the offline condition of marked objects, in both forms', () => {
    const marked: KObject = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'web-abc',
        annotations: {
          'svcplane.io/offline-local-pods': JSON.stringify({ since: '2026-01-01T00:00:00Z', endpoints: 1 }),
        },
      },
    };
    const r = explainReport({
      decision,
      nodeLabels: {},
      read: { kind: 'slices', objects: [marked] },
      nodes: 2,
    });
    assert.equal(r.json.conditions.length, 1);
    assert.match(r.text, /\n\nCondition OfflineLocalPods=True \(RewrittenFromKubelet\): /);
  });
});
