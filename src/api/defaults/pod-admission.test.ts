// kube's Priority and DefaultTolerationSeconds admission on a new Pod (plugin/pkg/admission/priority and
// plugin/pkg/admission/defaulttolerationseconds upstream).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admitPodCreate } from './pod-admission.js';

const NOT_READY = {
  key: 'node.kubernetes.io/not-ready',
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: 300,
};
const UNREACHABLE = {
  key: 'node.kubernetes.io/unreachable',
  operator: 'Exists',
  effect: 'NoExecute',
  tolerationSeconds: 300,
};

const admit = (spec: Record<string, unknown>): { why: string | undefined; spec: Record<string, unknown> } => {
  const pod = { spec: { containers: [{ name: 'c', image: 'x' }], ...spec } };
  const why = admitPodCreate(pod);
  return { why, spec: pod.spec };
};

describe('Priority admission', () => {
  it('no class: priority 0 and PreemptLowerPriority; a policy sent is kept', () => {
    const { why, spec } = admit({});
    assert.equal(why, undefined);
    assert.equal(spec['priority'], 0);
    assert.equal(spec['preemptionPolicy'], 'PreemptLowerPriority');
    assert.equal(admit({ preemptionPolicy: 'Never' }).spec['preemptionPolicy'], 'Never');
  });

  it('the built-in classes get their values', () => {
    assert.equal(admit({ priorityClassName: 'system-node-critical' }).spec['priority'], 2000001000);
    assert.equal(admit({ priorityClassName: 'system-cluster-critical' }).spec['priority'], 2000000000);
  });

  it('refuses a class it cannot find, and a priority that differs from the computed one', () => {
    assert.equal(admit({ priorityClassName: 'gold' }).why, 'no PriorityClass with name gold was found');
    assert.equal(
      admit({ priority: 7 }).why,
      'the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 0 from the given PriorityClass name',
    );
    assert.equal(admit({ priority: 0 }).why, undefined);
  });
});

describe('DefaultTolerationSeconds admission', () => {
  it('adds not-ready and unreachable NoExecute tolerations for 300 s after the pod’s own', () => {
    const own = { key: 'dedicated', operator: 'Equal', value: 'edge', effect: 'NoSchedule' };
    assert.deepEqual(admit({ tolerations: [own] }).spec['tolerations'], [own, NOT_READY, UNREACHABLE]);
    assert.deepEqual(admit({}).spec['tolerations'], [NOT_READY, UNREACHABLE]);
  });

  it('adds none that a toleration covers: the same key or an empty key, with NoExecute or no effect', () => {
    const mine = {
      key: 'node.kubernetes.io/not-ready',
      operator: 'Exists',
      effect: 'NoExecute',
      tolerationSeconds: 5,
    };
    assert.deepEqual(admit({ tolerations: [mine] }).spec['tolerations'], [mine, UNREACHABLE]);
    const anyEffect = { key: 'node.kubernetes.io/unreachable', operator: 'Exists' };
    assert.deepEqual(admit({ tolerations: [anyEffect] }).spec['tolerations'], [anyEffect, NOT_READY]);
    const everything = { operator: 'Exists' };
    assert.deepEqual(admit({ tolerations: [everything] }).spec['tolerations'], [everything]);
    // NoSchedule does not cover a NoExecute taint.
    const noSchedule = { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' };
    assert.deepEqual(admit({ tolerations: [noSchedule] }).spec['tolerations'], [
      noSchedule,
      NOT_READY,
      UNREACHABLE,
    ]);
  });

  it('leaves a tolerations value that is not a list for validation to report', () => {
    assert.equal(admit({ tolerations: 'all' }).spec['tolerations'], 'all');
  });
});
