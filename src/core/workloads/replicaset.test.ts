import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  availabilityRecheckMs,
  BURST_REPLICAS,
  computeStatus,
  InvalidSelectorError,
  isPodActive,
  isPodAvailable,
  NoLabelsError,
  planReplicas,
  podFromTemplate,
  selectorOf,
  selects,
  slowStartBatches,
  slowStartOutcome,
  statusDiffers,
  type ReplicaSet,
} from './replicaset.js';
import { at, pod, replicaSet, T0 } from './testing/replicaset-builders.js';

const status = (rs: ReplicaSet, pods: ReturnType<typeof pod>[], nowMs = T0, manageError?: string) =>
  computeStatus({ rs, pods, manageError, nowMs, nowTimestamp: at(nowMs) });

describe('isPodActive()', () => {
  const cases: Array<[string, ReturnType<typeof pod>, boolean]> = [
    ['a Running pod is active', pod({ phase: 'Running' }), true],
    ['a Pending pod is active', pod({ phase: 'Pending' }), true],
    ['an Unknown pod is active', pod({ phase: 'Unknown' }), true],
    ['a Succeeded pod is not', pod({ phase: 'Succeeded' }), false],
    ['a Failed pod is not', pod({ phase: 'Failed' }), false],
    ['a pod with a deletionTimestamp is not', pod({ deleting: true }), false],
  ];
  for (const [name, p, want] of cases) it(name, () => assert.equal(isPodActive(p), want));
});

describe('planReplicas()', () => {
  const cases: Array<[number, number, ReturnType<typeof planReplicas>]> = [
    [3, 3, { kind: 'none' }],
    [0, 3, { kind: 'create', count: 3, batches: [1, 2] }],
    [1, 3, { kind: 'create', count: 2, batches: [1, 1] }],
    [5, 3, { kind: 'delete', count: 2 }],
    [2, 0, { kind: 'delete', count: 2 }],
    [0, 0, { kind: 'none' }],
    [0, 1000, { kind: 'create', count: 500, batches: [1, 2, 4, 8, 16, 32, 64, 128, 245] }],
    [1000, 0, { kind: 'delete', count: 500 }],
  ];
  for (const [active, desired, want] of cases)
    it(`${active} active, ${desired} wanted → ${want.kind} ${'count' in want ? want.count : ''}`, () =>
      assert.deepEqual(planReplicas(active, desired), want));

  it('converges: applying plans repeatedly reaches the desired count in ceil(|diff| / 500) steps', () => {
    fc.assert(
      fc.property(fc.nat(3000), fc.nat(3000), (active, desired) => {
        let n = active;
        let steps = 0;
        for (;;) {
          const plan = planReplicas(n, desired);
          if (plan.kind === 'none') break;
          assert.ok(plan.count > 0 && plan.count <= BURST_REPLICAS);
          n += plan.kind === 'create' ? plan.count : -plan.count;
          // never overshoots
          assert.ok(plan.kind === 'create' ? n <= desired : n >= desired);
          steps++;
        }
        assert.equal(n, desired);
        assert.equal(steps, Math.ceil(Math.abs(active - desired) / BURST_REPLICAS));
      }),
    );
  });
});

describe('slowStartBatches()', () => {
  it('doubles from 1 and ends with the remainder', () => {
    assert.deepEqual(slowStartBatches(500), [1, 2, 4, 8, 16, 32, 64, 128, 245]);
    assert.deepEqual(slowStartBatches(1), [1]);
    assert.deepEqual(slowStartBatches(0), []);
    assert.deepEqual(slowStartBatches(7), [1, 2, 4]);
    assert.deepEqual(slowStartBatches(8), [1, 2, 4, 1]);
  });
  it('sums to the count and each batch is at most twice the previous', () => {
    fc.assert(
      fc.property(fc.nat(5000), (n) => {
        const b = slowStartBatches(n);
        assert.equal(
          b.reduce((a, x) => a + x, 0),
          n,
        );
        b.forEach((x, i) => {
          assert.ok(x >= 1);
          if (i > 0) assert.ok(x <= 2 * b[i - 1]!);
          if (i < b.length - 1) assert.equal(x, 2 ** i);
        });
      }),
    );
  });
  it('slowStartOutcome() counts the failed and the never-tried creations as skipped', () => {
    const b = slowStartBatches(15); // 1, 2, 4, 8
    assert.deepEqual(slowStartOutcome(b, undefined, 0), { succeeded: 15, skipped: 0 });
    assert.deepEqual(slowStartOutcome(b, 0, 1), { succeeded: 0, skipped: 15 });
    assert.deepEqual(slowStartOutcome(b, 2, 1), { succeeded: 6, skipped: 9 });
  });
});

describe('selectorOf()', () => {
  it('a missing selector matches nothing; {} everything', () => {
    assert.equal(selects(selectorOf(undefined), pod()), false);
    assert.equal(selects(selectorOf({}), pod()), true);
  });
  it('matchLabels and every operator', () => {
    const sel = selectorOf({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['a', 'b'] },
        { key: 'env', operator: 'NotIn', values: ['prod'] },
        { key: 'x', operator: 'Exists' },
        { key: 'y', operator: 'DoesNotExist' },
      ],
    });
    const l = (labels: Record<string, string>) => selects(sel, pod({ labels }));
    assert.equal(l({ app: 'web', tier: 'a', x: '' }), true);
    assert.equal(l({ app: 'web', tier: 'c', x: '' }), false);
    assert.equal(l({ app: 'web', tier: 'a', x: '', env: 'prod' }), false);
    assert.equal(l({ app: 'web', tier: 'a' }), false);
    assert.equal(l({ app: 'web', tier: 'a', x: '', y: '1' }), false);
    assert.equal(l({ app: 'db', tier: 'a', x: '' }), false);
  });
  it('refuses unknown operators and empty In sets', () => {
    assert.throws(
      () => selectorOf({ matchExpressions: [{ key: 'a', operator: 'Gt' }] }),
      InvalidSelectorError,
    );
    assert.throws(
      () => selectorOf({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }),
      InvalidSelectorError,
    );
  });
});

describe('podFromTemplate()', () => {
  it('copies labels, annotations, finalizers and spec; generateName and a controller ownerReference', () => {
    const rs = replicaSet();
    rs.spec!.template!.metadata = { labels: { app: 'web' }, annotations: { a: 'b' }, finalizers: ['f'] };
    const p = podFromTemplate(rs);
    assert.deepEqual(p.metadata, {
      generateName: 'web-',
      namespace: 'default',
      labels: { app: 'web' },
      annotations: { a: 'b' },
      finalizers: ['f'],
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web',
          uid: 'rs-uid',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    });
    assert.deepEqual(p.spec, rs.spec!.template!.spec);
    // nothing is shared with the ReplicaSet
    assert.notEqual(p.spec, rs.spec!.template!.spec);
    const labels: Record<string, string> = p.metadata.labels!;
    labels['x'] = 'y';
    assert.deepEqual(rs.spec!.template!.metadata?.labels, { app: 'web' });
  });
  it('refuses a template without labels', () => {
    assert.throws(() => podFromTemplate(replicaSet({ labels: {} })), NoLabelsError);
    assert.throws(() => podFromTemplate(replicaSet({ labels: {} })), /unable to create pods, no labels/);
  });
});

describe('computeStatus()', () => {
  it('counts replicas, fully labelled, ready and available pods; observedGeneration is the generation', () => {
    const rs = replicaSet({ generation: 4, labels: { app: 'web', tier: 'fe' } });
    const pods = [
      pod({ name: 'a', labels: { app: 'web', tier: 'fe' }, ready: T0 - 1000 }),
      pod({ name: 'b', labels: { app: 'web' }, ready: T0 - 1000 }),
      pod({ name: 'c', labels: { app: 'web', tier: 'fe', extra: '1' } }),
    ];
    assert.deepEqual(status(rs, pods), {
      replicas: 3,
      fullyLabeledReplicas: 2,
      readyReplicas: 2,
      availableReplicas: 2,
      observedGeneration: 4,
    });
  });
  it('no pods: only replicas 0 (omitempty)', () => {
    assert.deepEqual(status(replicaSet({ generation: 1 }), []), { replicas: 0, observedGeneration: 1 });
  });
  it('honours minReadySeconds: available only strictly after readiness + minReadySeconds', () => {
    const rs = replicaSet({ minReadySeconds: 10 });
    const pods = [
      pod({ name: 'a', ready: T0 - 10_000 }),
      pod({ name: 'b', ready: T0 - 10_001 }),
      pod({ name: 'c', ready: true }),
    ];
    const s = status(rs, pods);
    assert.equal(s.readyReplicas, 3);
    assert.equal(s.availableReplicas, 1);
    assert.equal(isPodAvailable(pods[0]!, 10, T0 + 1), true);
    assert.equal(isPodAvailable(pods[2]!, 10, T0 + 1e9), false);
    assert.equal(isPodAvailable(pods[2]!, 0, T0), true);
  });
  it('adds ReplicaFailure FailedCreate/FailedDelete once, and removes it after a successful manage', () => {
    const rs = replicaSet({ replicas: 3 });
    const s1 = status(rs, [pod()], T0, 'pods "x" is forbidden: quota');
    assert.deepEqual(s1.conditions, [
      {
        type: 'ReplicaFailure',
        status: 'True',
        lastTransitionTime: at(T0),
        reason: 'FailedCreate',
        message: 'pods "x" is forbidden: quota',
      },
    ]);
    const failing = { ...rs, status: s1 };
    // A second failure keeps the first condition as it is.
    assert.deepEqual(status(failing, [pod()], T0 + 5000, 'other').conditions, s1.conditions);
    assert.equal(status(failing, [pod()], T0 + 5000).conditions, undefined);
    const many = [1, 2, 3, 4].map((i) => pod({ name: `p${i}` }));
    assert.equal(status(rs, many, T0, 'boom').conditions?.[0]?.reason, 'FailedDelete');
  });
  it('keeps conditions other than ReplicaFailure', () => {
    const other = { type: 'Custom', status: 'True' };
    const rs = replicaSet({ status: { replicas: 0, conditions: [other] } });
    assert.deepEqual(status(rs, []).conditions, [other]);
  });
});

describe('statusDiffers()', () => {
  it('is false for the status computeStatus gave, true when a count or the generation moves', () => {
    const rs = replicaSet({ generation: 2 });
    const s = status(rs, [pod({ ready: T0 - 1 })]);
    assert.equal(statusDiffers({ ...rs, status: s }, s), false);
    assert.equal(statusDiffers({ ...rs, status: { ...s, readyReplicas: 0 } }, s), true);
    assert.equal(statusDiffers({ ...rs, metadata: { ...rs.metadata, generation: 3 }, status: s }, s), true);
    assert.equal(statusDiffers(rs, { replicas: 0 }), true); // observedGeneration missing
  });
});

describe('availabilityRecheckMs()', () => {
  it('is the time until the first Ready pod becomes available', () => {
    const rs = replicaSet({ minReadySeconds: 10 });
    assert.equal(availabilityRecheckMs(rs, [pod({ ready: T0 - 4000 }), pod({ ready: T0 - 2000 })], T0), 6001);
    assert.equal(availabilityRecheckMs(rs, [pod({ ready: T0 - 20_000 })], T0), undefined);
    assert.equal(availabilityRecheckMs(rs, [pod()], T0), undefined);
    assert.equal(availabilityRecheckMs(replicaSet(), [pod({ ready: T0 })], T0), undefined);
  });
  it('after waiting that long the pod is available', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 600 }), fc.integer({ min: 0, max: 600_000 }), (minReady, age) => {
        const p = pod({ ready: T0 - age });
        const wait = availabilityRecheckMs(replicaSet({ minReadySeconds: minReady }), [p], T0);
        if (wait === undefined) assert.ok(isPodAvailable(p, minReady, T0));
        else {
          assert.equal(isPodAvailable(p, minReady, T0 + wait - 1), false);
          assert.ok(isPodAvailable(p, minReady, T0 + wait));
        }
      }),
    );
  });
});
