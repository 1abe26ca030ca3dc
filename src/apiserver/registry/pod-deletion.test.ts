import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { planPodDeletion } from './pod-deletion.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

const pod = (
  o: { nodeName?: string; grace?: number; phase?: string; deletion?: [string, number] } = {},
): KObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'p',
    namespace: 'default',
    ...(o.deletion === undefined
      ? {}
      : { deletionTimestamp: o.deletion[0], deletionGracePeriodSeconds: o.deletion[1] }),
  },
  spec: {
    containers: [{ name: 'c', image: 'i' }],
    ...(o.nodeName === undefined ? {} : { nodeName: o.nodeName }),
    ...(o.grace === undefined ? {} : { terminationGracePeriodSeconds: o.grace }),
  },
  status: { phase: o.phase ?? 'Running' },
});

describe('planPodDeletion()', () => {
  it('removes an unscheduled pod at once, whatever grace is asked for', () => {
    assert.deepEqual(planPodDeletion(pod({ grace: 30 }), 10, NOW), { kind: 'immediate' });
  });

  it('removes a Succeeded or Failed pod at once', () => {
    for (const phase of ['Succeeded', 'Failed'])
      assert.deepEqual(planPodDeletion(pod({ nodeName: 'n', phase }), undefined, NOW), { kind: 'immediate' });
  });

  it("uses the pod's terminationGracePeriodSeconds, then 30, when the request gives none", () => {
    assert.deepEqual(planPodDeletion(pod({ nodeName: 'n', grace: 5 }), undefined, NOW), {
      kind: 'graceful',
      deletionTimestamp: '2026-01-01T00:00:05Z',
      grace: 5,
    });
    assert.deepEqual(planPodDeletion(pod({ nodeName: 'n' }), undefined, NOW), {
      kind: 'graceful',
      deletionTimestamp: '2026-01-01T00:00:30Z',
      grace: 30,
    });
  });

  it('takes the grace period of the request first; a negative one is 1; 0 is graceful with grace 0', () => {
    assert.equal(planPodDeletion(pod({ nodeName: 'n', grace: 5 }), 60, NOW).kind, 'graceful');
    assert.deepEqual(planPodDeletion(pod({ nodeName: 'n', grace: 5 }), -3, NOW), {
      kind: 'graceful',
      deletionTimestamp: '2026-01-01T00:00:01Z',
      grace: 1,
    });
    assert.deepEqual(planPodDeletion(pod({ nodeName: 'n', grace: 5 }), 0, NOW), {
      kind: 'graceful',
      deletionTimestamp: '2026-01-01T00:00:00Z',
      grace: 0,
    });
  });

  it('leaves a terminating pod alone unless the new grace is shorter, then shortens from the old start', () => {
    const terminating = pod({ nodeName: 'n', deletion: ['2026-01-01T00:00:20Z', 30] });
    assert.deepEqual(planPodDeletion(terminating, undefined, NOW), { kind: 'pending' });
    assert.deepEqual(planPodDeletion(terminating, 30, NOW), { kind: 'pending' });
    assert.deepEqual(planPodDeletion(terminating, 45, NOW), { kind: 'pending' });
    // Deletion started at 23:59:50 with 30 s; 10 s from that start is 00:00:00.
    assert.deepEqual(planPodDeletion(terminating, 10, NOW), {
      kind: 'graceful',
      deletionTimestamp: '2026-01-01T00:00:00Z',
      grace: 10,
    });
    assert.deepEqual(planPodDeletion(terminating, 0, NOW), {
      kind: 'graceful',
      deletionTimestamp: '2025-12-31T23:59:50Z',
      grace: 0,
    });
  });

  it('removes a pod already terminating with grace 0 (held by finalizers, or a removal that failed)', () => {
    const held = pod({ nodeName: 'n', deletion: ['2026-01-01T00:00:00Z', 0] });
    assert.deepEqual(planPodDeletion(held, undefined, NOW), { kind: 'immediate' });
  });
});
