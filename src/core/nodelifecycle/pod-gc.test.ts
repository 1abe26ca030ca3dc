import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  failedStatusPatch,
  isTerminated,
  orphanPass,
  outOfServiceTerminating,
  podsOnNodes,
  terminatedExcess,
  unscheduledTerminating,
} from './pod-gc.js';
import { notReadyPatch } from './pods.js';
import type { Node, Pod } from './types.js';

const pod = (
  name: string,
  o: {
    node?: string;
    phase?: string;
    reason?: string;
    created?: string;
    deleting?: boolean;
    ready?: string;
  } = {},
): Pod => ({
  metadata: {
    name,
    namespace: 'default',
    creationTimestamp: o.created ?? '2024-01-01T00:00:00Z',
    ...(o.deleting === true ? { deletionTimestamp: '2024-01-01T00:01:00Z' } : {}),
  },
  spec: o.node === undefined ? {} : { nodeName: o.node },
  status: {
    ...(o.phase === undefined ? {} : { phase: o.phase }),
    ...(o.reason === undefined ? {} : { reason: o.reason }),
    ...(o.ready === undefined ? {} : { conditions: [{ type: 'Ready', status: o.ready, reason: 'r' }] }),
  },
});
const names = (ps: Pod[]): string[] => ps.map((p) => p.metadata.name ?? '');

describe('terminated-pod GC', () => {
  it('isTerminated: Succeeded and Failed, not Pending/Running/Unknown/empty', () => {
    assert.deepEqual(
      ['Succeeded', 'Failed', 'Pending', 'Running', 'Unknown', undefined].map((phase) =>
        isTerminated(pod('p', phase === undefined ? {} : { phase })),
      ),
      [true, true, false, false, false, false],
    );
  });

  it('deletes the excess over the threshold: evicted first, then oldest, ties by name', () => {
    const pods = [
      pod('b', { phase: 'Succeeded', created: '2024-01-01T00:00:01Z' }),
      pod('a', { phase: 'Succeeded', created: '2024-01-01T00:00:01Z' }),
      pod('old', { phase: 'Failed', created: '2023-01-01T00:00:00Z' }),
      pod('evicted', { phase: 'Failed', reason: 'Evicted', created: '2025-01-01T00:00:00Z' }),
      pod('running', { phase: 'Running', created: '2020-01-01T00:00:00Z' }),
    ];
    assert.deepEqual(names(terminatedExcess(pods, 1)), ['evicted', 'old', 'a']);
    assert.deepEqual(names(terminatedExcess(pods, 4)), []);
    assert.deepEqual(names(terminatedExcess(pods, 0)), [], 'a threshold ≤ 0 disables it');
  });
});

describe('orphans', () => {
  it('quarantines a missing node, then asks for a live check once the quarantine is over', () => {
    const pods = [
      pod('p1', { node: 'gone' }),
      pod('p2', { node: 'gone' }),
      pod('p3', { node: 'here' }),
      pod('p4'),
    ];
    const known = (n: string): boolean => n === 'here';
    const first = orphanPass(pods, known, new Map(), 40_000, 1000);
    assert.deepEqual([...first.missingSince], [['gone', 1000]]);
    assert.deepEqual(first.toCheck, []);
    const second = orphanPass(pods, known, first.missingSince, 40_000, 40_999);
    assert.deepEqual(second.toCheck, []);
    const third = orphanPass(pods, known, second.missingSince, 40_000, 41_000);
    assert.deepEqual(third.toCheck, ['gone']);
    assert.deepEqual(names(podsOnNodes(pods, new Set(third.toCheck))), ['p1', 'p2']);
  });

  it('a node the cache knows again leaves the quarantine', () => {
    const pods = [pod('p1', { node: 'n' })];
    const a = orphanPass(pods, () => false, new Map(), 40_000, 0);
    const b = orphanPass(pods, () => true, a.missingSince, 40_000, 50_000);
    assert.equal(b.missingSince.size, 0);
    const c = orphanPass(pods, () => false, b.missingSince, 40_000, 60_000);
    assert.deepEqual(c.toCheck, [], 'the quarantine starts over');
  });

  it('marks a running orphan Failed with DisruptionTarget; a terminal one gets no status patch', () => {
    const c = { reason: 'DeletionByPodGC', message: 'PodGC: node no longer exists' };
    assert.deepEqual(failedStatusPatch(pod('p', { phase: 'Running' }), c, 'T'), {
      status: {
        phase: 'Failed',
        conditions: [{ type: 'DisruptionTarget', status: 'True', ...c, lastTransitionTime: 'T' }],
      },
    });
    assert.equal(failedStatusPatch(pod('p', { phase: 'Succeeded' }), c, 'T'), undefined);
    assert.deepEqual(failedStatusPatch(pod('p'), undefined, 'T'), { status: { phase: 'Failed' } });
  });
});

describe('terminating pods', () => {
  it('unscheduled terminating pods are collected', () => {
    const pods = [pod('a', { deleting: true }), pod('b', { deleting: true, node: 'n' }), pod('c')];
    assert.deepEqual(names(unscheduledTerminating(pods)), ['a']);
  });

  it('terminating pods on a NotReady out-of-service node are collected', () => {
    const oos = (ready: string): Node => ({
      metadata: { name: 'n' },
      spec: { taints: [{ key: 'node.kubernetes.io/out-of-service', effect: 'NoExecute' }] },
      status: { conditions: [{ type: 'Ready', status: ready }] },
    });
    const pods = [pod('a', { deleting: true, node: 'n' }), pod('b', { node: 'n' })];
    assert.deepEqual(names(outOfServiceTerminating(pods, new Map([['n', oos('False')]]))), ['a']);
    assert.deepEqual(names(outOfServiceTerminating(pods, new Map([['n', oos('True')]]))), []);
  });
});

describe('notReadyPatch', () => {
  it('flips Ready to False keeping reason; nothing for pods already not ready, finished or without Ready', () => {
    assert.deepEqual(notReadyPatch(pod('p', { phase: 'Running', ready: 'True' }), 'T'), {
      status: { conditions: [{ type: 'Ready', status: 'False', reason: 'r', lastTransitionTime: 'T' }] },
    });
    assert.equal(notReadyPatch(pod('p', { phase: 'Running', ready: 'False' }), 'T'), undefined);
    assert.equal(notReadyPatch(pod('p', { phase: 'Succeeded', ready: 'True' }), 'T'), undefined);
    assert.equal(notReadyPatch(pod('p', { phase: 'Pending' }), 'T'), undefined);
  });
});
