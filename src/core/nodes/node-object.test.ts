import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  leaseObject,
  microTime,
  nodeConditions,
  nodeConditionsChanged,
  nodeLiveness,
  nodeObject,
  staggerOffsetMs,
} from './node-object.js';

const T0 = Date.parse('2026-03-01T10:00:00Z');

describe('nodeObject', () => {
  it('registers the kubelet labels, podCIDRs, capacity with 110 pods, addresses and the four conditions', () => {
    const n = nodeObject({
      name: 'node0',
      labels: { zone: 'z1', 'kubernetes.io/hostname': 'ignored' },
      podCIDRs: ['10.244.0.0/24', 'fd00::/64'],
      internalIP: '127.0.1.1',
      version: 'v1.33.0-svcplane',
      nowMs: T0,
    }) as {
      metadata: { labels: Record<string, string> };
      spec: Record<string, unknown>;
      status: Record<string, unknown>;
    };
    assert.equal(n.metadata.labels['zone'], 'z1');
    assert.equal(n.metadata.labels['kubernetes.io/hostname'], 'node0');
    assert.equal(n.metadata.labels['kubernetes.io/os'], 'linux');
    assert.equal(n.spec['podCIDR'], '10.244.0.0/24');
    assert.deepEqual(n.spec['podCIDRs'], ['10.244.0.0/24', 'fd00::/64']);
    assert.equal((n.status['allocatable'] as Record<string, string>)['pods'], '110');
    assert.deepEqual(n.status['addresses'], [
      { type: 'InternalIP', address: '127.0.1.1' },
      { type: 'Hostname', address: 'node0' },
    ]);
    const conds = n.status['conditions'] as { type: string; status: string; reason: string }[];
    assert.deepEqual(
      conds.map((c) => `${c.type}=${c.status}/${c.reason}`),
      [
        'MemoryPressure=False/KubeletHasSufficientMemory',
        'DiskPressure=False/KubeletHasNoDiskPressure',
        'PIDPressure=False/KubeletHasSufficientPID',
        'Ready=True/KubeletReady',
      ],
    );
  });
});

describe('nodeConditions', () => {
  it('keeps lastTransitionTime of an unchanged condition, moves the heartbeat, keeps foreign conditions', () => {
    const first = nodeConditions(T0);
    const later = nodeConditions(T0 + 60_000, [
      ...first,
      { type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated' },
    ]);
    const ready = later.find((c) => c.type === 'Ready')!;
    assert.equal(ready.lastTransitionTime, '2026-03-01T10:00:00Z');
    assert.equal(ready.lastHeartbeatTime, '2026-03-01T10:01:00Z');
    assert.equal(later.at(-1)?.type, 'NetworkUnavailable');
  });

  it('sees a Ready condition the node lifecycle controller set to Unknown as a change to report', () => {
    const conds = nodeConditions(T0).map((c) => (c.type === 'Ready' ? { ...c, status: 'Unknown' } : c));
    assert.equal(nodeConditionsChanged(conds), true);
    assert.equal(nodeConditionsChanged(nodeConditions(T0)), false);
    const back = nodeConditions(T0 + 1000, conds).find((c) => c.type === 'Ready')!;
    assert.equal(back.lastTransitionTime, '2026-03-01T10:00:01Z');
  });
});

describe('leaseObject / nodeLiveness', () => {
  it('writes a 40 s lease held by the node, owned by the Node once its UID is known', () => {
    const l = leaseObject('node0', T0 + 123, 'u-1') as {
      metadata: Record<string, unknown>;
      spec: Record<string, unknown>;
    };
    assert.equal(l.metadata['namespace'], 'kube-node-lease');
    assert.deepEqual(l.spec, {
      holderIdentity: 'node0',
      leaseDurationSeconds: 40,
      renewTime: '2026-03-01T10:00:00.123000Z',
    });
    assert.deepEqual(l.metadata['ownerReferences'], [
      { apiVersion: 'v1', kind: 'Node', name: 'node0', uid: 'u-1' },
    ]);
    assert.equal(microTime(T0), '2026-03-01T10:00:00.000000Z');
  });

  it('calls a node live only when Ready and its lease is fresh', () => {
    const node = { status: { conditions: nodeConditions(T0) } };
    const lease = leaseObject('n', T0);
    assert.equal(nodeLiveness(node, lease, T0 + 30_000).live, true);
    assert.equal(nodeLiveness(node, lease, T0 + 41_000).live, false);
    assert.match(nodeLiveness(node, lease, T0 + 100_000).why, /expired 60s ago/);
    const unknown = { status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } };
    assert.equal(nodeLiveness(unknown, lease, T0).live, false);
    assert.equal(nodeLiveness(node, undefined, T0 + 10_000).live, true);
    assert.equal(nodeLiveness(node, undefined, T0 + 60_000).live, false);
    assert.equal(nodeLiveness({}, undefined, T0).live, false);
  });

  it('staggers renewals evenly over one interval', () => {
    assert.deepEqual(
      [0, 1, 2, 3].map((i) => staggerOffsetMs(i, 4)),
      [0, 2500, 5000, 7500],
    );
    assert.equal(staggerOffsetMs(0, 1), 0);
  });
});
