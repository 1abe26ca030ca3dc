import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import { planDelete, type DeletePlan } from './delete-plan.js';
import type { DeleteOptions } from './types.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const SERVICES = mustFindResource('', 'services');
const DEPLOYMENTS = mustFindResource('apps', 'deployments');
const NAMESPACES = mustFindResource('', 'namespaces');
const PODS = mustFindResource('', 'pods');

const obj = (metadata: KObject['metadata'] = {}, rest: Partial<KObject> = {}): KObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'o', namespace: 'default', uid: 'u1', resourceVersion: '7', ...metadata },
  ...rest,
});

const boundPod = (metadata: KObject['metadata'] = {}, grace = 30): KObject =>
  obj(metadata, { kind: 'Pod', spec: { nodeName: 'n1', terminationGracePeriodSeconds: grace } });

const namespace = (metadata: KObject['metadata'], status?: object): KObject => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'ns', uid: 'u1', resourceVersion: '7', ...metadata },
  spec: { finalizers: ['kubernetes'] },
  ...(status === undefined ? {} : { status }),
});

const update = (object: KObject, thenRemove = false): DeletePlan => ({ kind: 'update', object, thenRemove });

describe('planDelete()', () => {
  const cases: Array<{
    name: string;
    r?: typeof SERVICES;
    old: KObject;
    opts?: DeleteOptions;
    want: DeletePlan;
  }> = [
    { name: 'removes an object nothing holds', old: obj(), want: { kind: 'remove' } },
    {
      name: 'refuses a uid precondition that does not hold',
      old: obj(),
      opts: { preconditions: { uid: 'u2' } },
      want: {
        kind: 'precondition-failed',
        message: 'Precondition failed: UID in precondition: u2, UID in object meta: u1',
      },
    },
    {
      name: 'refuses a resourceVersion precondition that does not hold',
      old: obj(),
      opts: { preconditions: { resourceVersion: '6' } },
      want: {
        kind: 'precondition-failed',
        message: 'Precondition failed: ResourceVersion in precondition: 6, ResourceVersion in object meta: 7',
      },
    },
    {
      name: 'removes when the preconditions hold',
      old: obj(),
      opts: { preconditions: { uid: 'u1', resourceVersion: '7' } },
      want: { kind: 'remove' },
    },
    {
      name: 'marks an object its finalizers hold',
      old: obj({ finalizers: ['example.com/f'] }),
      want: update(
        obj({
          finalizers: ['example.com/f'],
          deletionTimestamp: '2026-01-01T00:00:00Z',
          deletionGracePeriodSeconds: 0,
        }),
      ),
    },
    {
      name: 'leaves an object already marked, with the same finalizers, as it is',
      old: obj({ finalizers: ['example.com/f'], deletionTimestamp: '2025-12-31T00:00:00Z' }),
      want: { kind: 'unchanged' },
    },
    {
      name: 'Foreground: adds the foregroundDeletion finalizer and marks the object',
      old: obj(),
      opts: { propagationPolicy: 'Foreground' },
      want: update(
        obj({
          finalizers: ['foregroundDeletion'],
          deletionTimestamp: '2026-01-01T00:00:00Z',
          deletionGracePeriodSeconds: 0,
        }),
      ),
    },
    {
      name: 'Orphan: replaces foregroundDeletion with orphan',
      old: obj({ finalizers: ['foregroundDeletion', 'example.com/f'] }),
      opts: { propagationPolicy: 'Orphan' },
      want: update(
        obj({
          finalizers: ['example.com/f', 'orphan'],
          deletionTimestamp: '2026-01-01T00:00:00Z',
          deletionGracePeriodSeconds: 0,
        }),
      ),
    },
    {
      name: 'Background: drops the garbage collector finalizers, and then nothing holds the object',
      old: obj({ finalizers: ['orphan'] }),
      opts: { propagationPolicy: 'Background' },
      want: { kind: 'remove' },
    },
    {
      name: 'without a policy, keeps the garbage collector finalizers the object carries',
      old: obj({ finalizers: ['orphan'], deletionTimestamp: '2025-12-31T00:00:00Z' }),
      want: { kind: 'unchanged' },
    },
    {
      name: 'bumps a tracked generation on the first mark only',
      r: DEPLOYMENTS,
      old: obj({ generation: 3 }),
      opts: { propagationPolicy: 'Foreground' },
      want: update(
        obj({
          generation: 4,
          finalizers: ['foregroundDeletion'],
          deletionTimestamp: '2026-01-01T00:00:00Z',
          deletionGracePeriodSeconds: 0,
        }),
      ),
    },
    {
      name: 'marks a namespace its spec.finalizers hold, and sets its phase Terminating',
      r: NAMESPACES,
      old: namespace({}),
      want: update(
        namespace(
          { finalizers: [], deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 0 },
          { phase: 'Terminating' },
        ),
      ),
    },
    {
      name: 'marks a bound pod with its grace period',
      r: PODS,
      old: boundPod(),
      want: update({
        ...boundPod({ deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 }),
      }),
    },
    {
      name: 'marks a bound pod with grace 0, then removes it',
      r: PODS,
      old: boundPod(),
      opts: { gracePeriodSeconds: 0 },
      want: update(
        boundPod({ deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 0 }),
        true,
      ),
    },
    {
      name: 'marks a bound pod with grace 0 but keeps it while a finalizer holds it',
      r: PODS,
      old: boundPod({ finalizers: ['example.com/f'] }),
      opts: { gracePeriodSeconds: 0 },
      want: update(
        boundPod({
          finalizers: ['example.com/f'],
          deletionTimestamp: '2026-01-01T00:00:00Z',
          deletionGracePeriodSeconds: 0,
        }),
      ),
    },
    {
      name: 'leaves a terminating pod as it is when nothing changes',
      r: PODS,
      old: boundPod({ deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 }),
      want: { kind: 'unchanged' },
    },
    {
      name: 'takes a new propagationPolicy on a terminating pod',
      r: PODS,
      old: boundPod({ deletionTimestamp: '2026-01-01T00:00:30Z', deletionGracePeriodSeconds: 30 }),
      opts: { propagationPolicy: 'Orphan' },
      want: update(
        boundPod({
          deletionTimestamp: '2026-01-01T00:00:30Z',
          deletionGracePeriodSeconds: 30,
          finalizers: ['orphan'],
        }),
      ),
    },
    {
      name: 'removes an unscheduled pod at once',
      r: PODS,
      old: obj({}, { kind: 'Pod', spec: {} }),
      want: { kind: 'remove' },
    },
  ];

  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(planDelete(c.r ?? SERVICES, c.old, c.opts ?? {}, NOW), c.want);
    });
  }

  it('does not change the object it reads', () => {
    const old = obj({ finalizers: ['example.com/f'] });
    const before = structuredClone(old);
    planDelete(SERVICES, old, { propagationPolicy: 'Foreground' }, NOW);
    assert.deepEqual(old, before);
  });
});
