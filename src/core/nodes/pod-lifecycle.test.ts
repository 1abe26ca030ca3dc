import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { planPod, readinessDelayMs, statusPodIPs, type PodLike, type PodPlan } from './pod-lifecycle.js';

const T0 = Date.parse('2026-03-01T10:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

interface PodOpts {
  delays?: number[];
  status?: unknown;
  deletionTimestamp?: string;
}

const pod = (o: PodOpts = {}): PodLike => ({
  metadata: {
    uid: 'u1',
    ...(o.deletionTimestamp === undefined ? {} : { deletionTimestamp: o.deletionTimestamp }),
  },
  spec: {
    containers: (o.delays ?? [undefined as unknown as number]).map((d, i) => ({
      name: `c${i}`,
      image: 'echo',
      ...(d === undefined ? {} : { readinessProbe: { initialDelaySeconds: d } }),
    })),
  },
  status: o.status ?? { phase: 'Pending', qosClass: 'BestEffort' },
});

const step = (p: PodLike, nowMs: number, ips = ['10.244.0.5']): PodPlan =>
  planPod({ pod: p, ips, hostIPs: ['127.0.1.1'], nowMs, now: iso(nowMs) });

/** Applies a status plan to the pod (what the API would then show). */
const apply = (p: PodLike, plan: PodPlan): PodLike => {
  assert.equal(plan.kind, 'status');
  return { ...p, status: plan.kind === 'status' ? plan.status : p.status };
};

const ready = (p: PodLike): string | undefined =>
  ((p.status as { conditions?: { type: string; status: string }[] }).conditions ?? []).find(
    (c) => c.type === 'Ready',
  )?.status;

describe('readinessDelayMs', () => {
  it('is the largest initialDelaySeconds among the containers, 0 without probes', () => {
    assert.equal(readinessDelayMs(pod({ delays: [3, 7] })), 7000);
    assert.equal(readinessDelayMs(pod()), 0);
  });
});

describe('planPod', () => {
  it('reports Pending/ContainerCreating with the IPs first, then Running and Ready at once', () => {
    let p = pod();
    const first = step(p, T0);
    p = apply(p, first);
    const s = p.status as {
      phase: string;
      podIP: string;
      hostIP: string;
      containerStatuses: { state: unknown }[];
    };
    assert.equal(s.phase, 'Pending');
    assert.equal(s.podIP, '10.244.0.5');
    assert.equal(s.hostIP, '127.0.1.1');
    assert.deepEqual(s.containerStatuses[0]!.state, { waiting: { reason: 'ContainerCreating' } });
    p = apply(p, step(p, T0 + 10));
    assert.equal((p.status as { phase: string }).phase, 'Running');
    assert.equal(ready(p), 'True');
    assert.deepEqual(step(p, T0 + 20), { kind: 'wait' });
    assert.deepEqual(statusPodIPs(p), ['10.244.0.5']);
  });

  it('becomes Ready only after the largest readinessProbe.initialDelaySeconds', () => {
    let p = pod({ delays: [2, 5] });
    p = apply(p, step(p, T0));
    p = apply(p, step(p, T0));
    assert.equal(ready(p), 'False');
    const waiting = step(p, T0 + 1000);
    assert.deepEqual(waiting, { kind: 'wait', requeueAfterMs: 4000 });
    p = apply(p, step(p, T0 + 5000));
    assert.equal(ready(p), 'True');
  });

  it('re-reports Ready when someone else marked the pod not ready', () => {
    let p = pod();
    p = apply(p, step(p, T0));
    p = apply(p, step(p, T0));
    const s = p.status as { conditions: { type: string; status: string }[] };
    const flipped = {
      ...p,
      status: {
        ...s,
        conditions: s.conditions.map((c) => (c.type === 'Ready' ? { ...c, status: 'False' } : c)),
      },
    };
    const again = apply(flipped, step(flipped, T0 + 60_000));
    assert.equal(ready(again), 'True');
  });

  it('on deletion reports the containers terminated and Succeeded, then asks for the grace-0 delete', () => {
    let p = pod();
    p = apply(p, step(p, T0));
    p = apply(p, step(p, T0));
    p = { ...p, metadata: { ...p.metadata, deletionTimestamp: iso(T0 + 30_000) } };
    p = apply(p, step(p, T0 + 1000));
    const s = p.status as {
      phase: string;
      containerStatuses: { state: { terminated?: { exitCode: number; reason: string } } }[];
    };
    assert.equal(s.phase, 'Succeeded');
    assert.deepEqual(
      {
        exitCode: s.containerStatuses[0]!.state.terminated?.exitCode,
        reason: s.containerStatuses[0]!.state.terminated?.reason,
      },
      { exitCode: 0, reason: 'Completed' },
    );
    assert.equal(ready(p), 'False');
    assert.deepEqual(step(p, T0 + 2000), { kind: 'delete' });
  });

  it('reports a pod deleted before its containers started as Failed', () => {
    const p = pod({ deletionTimestamp: iso(T0) });
    const plan = step(p, T0);
    assert.equal(plan.kind === 'status' && plan.status.phase, 'Failed');
  });

  it('leaves a finished pod alone', () => {
    assert.deepEqual(step(pod({ status: { phase: 'Succeeded' } }), T0), { kind: 'wait' });
  });
});
