// The node checkpoint: what it keeps of a pod, that it round-trips, and that anything it cannot trust
// is refused with one line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { KObject } from '../../api/object.js';
import {
  checkpointPod,
  CheckpointError,
  decodeCheckpoint,
  encodeCheckpoint,
  type NodeCheckpoint,
} from './checkpoint.js';

const pod = (name: string, ip = '127.10.0.1', node = 'n1'): KObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      labels: { app: 'web' },
      resourceVersion: '42',
      managedFields: [{ manager: 'kubectl' }],
      creationTimestamp: '2026-01-01T00:00:00Z',
    },
    spec: { nodeName: node, containers: [{ name: 'c', ports: [{ containerPort: 8080 }] }] },
    status: { phase: 'Running', podIP: ip, podIPs: [{ ip }], hostIP: '127.0.1.1' },
  }) as unknown as KObject;

const base: NodeCheckpoint = {
  node: 'n1',
  nodeUID: 'node-uid-1',
  podCIDRs: ['127.10.0.0/24'],
  internalIP: '127.0.1.1',
  poolCursors: [3],
  pods: [pod('b', '127.10.0.2'), pod('a')],
};

describe('checkpointPod', () => {
  it('keeps metadata that identifies the pod, its spec and status; drops resourceVersion and managedFields', () => {
    const p = checkpointPod(pod('a')) as unknown as {
      metadata: Record<string, unknown>;
      spec: unknown;
      status: unknown;
    };
    assert.deepEqual(Object.keys(p.metadata).sort(), [
      'creationTimestamp',
      'labels',
      'name',
      'namespace',
      'uid',
    ]);
    assert.deepEqual(p.status, (pod('a') as unknown as { status: unknown }).status);
    assert.deepEqual(p.spec, (pod('a') as unknown as { spec: unknown }).spec);
  });

  it('keeps deletionTimestamp (a pod being deleted stays terminating after a restart)', () => {
    const p = pod('a');
    p.metadata.deletionTimestamp = '2026-01-01T00:00:05Z';
    assert.equal(checkpointPod(p).metadata.deletionTimestamp, '2026-01-01T00:00:05Z');
  });
});

describe('encodeCheckpoint / decodeCheckpoint', () => {
  it('round-trips, pods sorted by key', () => {
    const got = decodeCheckpoint(encodeCheckpoint(base), 'n1');
    assert.deepEqual(
      got.pods.map((p) => p.metadata.name),
      ['a', 'b'],
    );
    assert.deepEqual(got.poolCursors, [3]);
    assert.deepEqual(got.podCIDRs, ['127.10.0.0/24']);
    assert.equal(got.internalIP, '127.0.1.1');
    assert.equal(got.nodeUID, 'node-uid-1');
  });

  const refused: Array<[string, (doc: Record<string, unknown>) => unknown, RegExp]> = [
    ['a torn file', () => '{"kind":"NodeCheckpoint","api', /^not JSON/],
    ['another kind', (d) => ({ ...d, kind: 'Pod' }), /is not NodeCheckpoint\/svcplane.io\/v1/],
    ["another node's", (d) => ({ ...d, node: 'n2' }), /node "n2"'s, not "n1"'s/],
    ['no nodeUID', (d) => ({ ...d, nodeUID: undefined }), /nodeUID undefined/],
    ['three pod CIDRs', (d) => ({ ...d, podCIDRs: ['10.0.0.0/24', '10.0.1.0/24', 'fd00::/64'] }), /podCIDRs/],
    ['a bad CIDR', (d) => ({ ...d, podCIDRs: ['10.0.0.0/33'] }), /podCIDRs/],
    ['a bad internal IP', (d) => ({ ...d, internalIP: 'x' }), /internalIP "x"/],
    ['cursors not one per CIDR', (d) => ({ ...d, poolCursors: [1, 2] }), /poolCursors/],
    ['a negative cursor', (d) => ({ ...d, poolCursors: [-1] }), /poolCursors/],
    ['pods not a list', (d) => ({ ...d, pods: {} }), /pods is not a list/],
    [
      'a pod without uid',
      (d) => ({ ...d, pods: [{ metadata: { name: 'a', namespace: 'x' } }] }),
      /pods\[0\] has no/,
    ],
    ['a pod twice', (d) => ({ ...d, pods: [pod('a'), pod('a')] }), /listed twice/],
    ['a pod of another node', (d) => ({ ...d, pods: [pod('a', '127.10.0.1', 'n2')] }), /bound to "n2"/],
    ['a bad pod IP', (d) => ({ ...d, pods: [pod('a', '300.1.1.1')] }), /pod IP "300.1.1.1"/],
  ];
  for (const [name, edit, want] of refused) {
    it(`refuses ${name} with one line`, () => {
      const doc = JSON.parse(encodeCheckpoint(base)) as Record<string, unknown>;
      const changed = edit(doc);
      const text = typeof changed === 'string' ? changed : JSON.stringify(changed);
      assert.throws(
        () => decodeCheckpoint(text, 'n1'),
        (e: unknown) => e instanceof CheckpointError && want.test(e.message) && !e.message.includes('\n'),
      );
    });
  }

  it('property: any checkpoint round-trips, and encoding ignores the pods order', () => {
    const podArb = fc.record({
      name: fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/),
      ns: fc.constantFrom('default', 'kube-system', 'edge'),
      ip: fc.integer({ min: 1, max: 254 }),
      phase: fc.constantFrom('Pending', 'Running', 'Succeeded'),
      ready: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(podArb, { selector: (p) => `${p.ns}/${p.name}`, maxLength: 20 }),
        fc.nat(300),
        (specs, cursor) => {
          const pods = specs.map((s) => {
            const p = pod(s.name, `127.10.0.${s.ip}`);
            p.metadata.namespace = s.ns;
            (p as unknown as { status: Record<string, unknown> }).status['phase'] = s.phase;
            (p as unknown as { status: Record<string, unknown> }).status['conditions'] = [
              { type: 'Ready', status: s.ready ? 'True' : 'False' },
            ];
            return p;
          });
          const cp: NodeCheckpoint = { ...base, poolCursors: [cursor], pods };
          const text = encodeCheckpoint(cp);
          assert.equal(encodeCheckpoint({ ...cp, pods: [...pods].reverse() }), text);
          const back = decodeCheckpoint(text, 'n1');
          assert.equal(encodeCheckpoint(back), text);
          assert.deepEqual(
            new Set(back.pods.map((p) => `${p.metadata.namespace}/${p.metadata.name}`)),
            new Set(specs.map((s) => `${s.ns}/${s.name}`)),
          );
        },
      ),
    );
  });
});
