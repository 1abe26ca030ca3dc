import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { assessNode, overdue, unknownConditions, type NodeHealth } from './health.js';
import { rfc3339, type Lease, type Node, type NodeCondition } from './types.js';

const T0 = Date.parse('2024-01-01T00:00:00Z');
const timing = { gracePeriodMs: 40_000, startupGracePeriodMs: 60_000 };

const ready = (status: string, heartbeat: number, transition = T0): NodeCondition => ({
  type: 'Ready',
  status,
  reason: status === 'True' ? 'KubeletReady' : 'KubeletNotReady',
  message: 'kubelet is posting ready status',
  lastHeartbeatTime: rfc3339(heartbeat),
  lastTransitionTime: rfc3339(transition),
});

const node = (conditions?: NodeCondition[], created = T0): Node => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name: 'n1', creationTimestamp: rfc3339(created) },
  ...(conditions === undefined ? {} : { status: { conditions } }),
});

const lease = (renew: number): Lease => ({
  metadata: { name: 'n1', namespace: 'kube-node-lease' },
  spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: new Date(renew).toISOString() },
});

describe('assessNode', () => {
  it('a Ready node first seen gets a probe timestamp of now and stays Ready for the grace period', () => {
    const n = node([ready('True', T0)]);
    const a = assessNode(undefined, n, undefined, T0 + 5_000, timing);
    assert.equal(a.health.probeTimestamp, T0 + 5_000);
    assert.equal(a.conditions, undefined);
    assert.equal(a.gracePeriodMs, 40_000);
    const b = assessNode(a.health, n, undefined, T0 + 45_000, timing);
    assert.equal(b.conditions, undefined, 'exactly at probe + grace is not yet overdue');
    const c = assessNode(b.health, n, undefined, T0 + 45_001, timing);
    assert.equal(c.observedReady, 'True');
    assert.equal(c.currentReady, 'Unknown');
    const r = c.conditions!.find((x) => x.type === 'Ready')!;
    assert.equal(r.status, 'Unknown');
    assert.equal(r.reason, 'NodeStatusUnknown');
    assert.equal(r.message, 'Kubelet stopped posting node status.');
    assert.equal(r.lastHeartbeatTime, rfc3339(T0), 'the heartbeat time is kept');
    assert.equal(r.lastTransitionTime, rfc3339(T0 + 45_001));
  });

  it('a renewed Lease is a heartbeat even when the Ready condition never changes', () => {
    const n = node([ready('True', T0)]);
    let h = assessNode(undefined, n, lease(T0), T0, timing).health;
    for (let t = 10_000; t <= 120_000; t += 10_000) {
      const a = assessNode(h, n, lease(T0 + t), T0 + t, timing);
      assert.equal(a.conditions, undefined, `at ${t}`);
      h = a.health;
    }
    // The kubelet stops: the same Lease is seen again and again.
    const late = assessNode(h, n, lease(T0 + 120_000), T0 + 160_001, timing);
    assert.equal(late.currentReady, 'Unknown');
  });

  it('a changing Ready heartbeat without any Lease keeps the node Ready', () => {
    let h: NodeHealth | undefined;
    for (let t = 0; t <= 200_000; t += 30_000) {
      const a = assessNode(h, node([ready('True', T0 + t)]), undefined, T0 + t, timing);
      assert.equal(a.conditions, undefined);
      h = a.health;
    }
  });

  it('an older Lease than the one seen is not a heartbeat', () => {
    const n = node([ready('True', T0)]);
    const h = assessNode(undefined, n, lease(T0 + 10_000), T0 + 10_000, timing).health;
    const a = assessNode(h, n, lease(T0 + 5_000), T0 + 50_001, timing);
    assert.equal(a.currentReady, 'Unknown');
  });

  it('a node that never posted Ready is measured from its creation with the startup grace period', () => {
    const n = node(undefined, T0);
    const early = assessNode(undefined, n, undefined, T0 + 60_000, timing);
    assert.equal(early.gracePeriodMs, 60_000);
    assert.equal(early.conditions, undefined);
    const late = assessNode(early.health, n, undefined, T0 + 60_001, timing);
    assert.deepEqual(
      late.conditions!.map((c) => [c.type, c.status, c.reason, c.message, c.lastHeartbeatTime]),
      ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((t) => [
        t,
        'Unknown',
        'NodeStatusNeverUpdated',
        'Kubelet never posted node status.',
        rfc3339(T0),
      ]),
    );
    assert.equal(late.observedReady, 'Unknown');
    assert.equal(late.currentReady, 'Unknown');
  });

  it('a node without Ready but with a renewing Lease is not marked', () => {
    const n = node(undefined, T0);
    let h: NodeHealth | undefined;
    for (let t = 0; t <= 300_000; t += 10_000) {
      const a = assessNode(h, n, lease(T0 + t), T0 + t, timing);
      assert.equal(a.conditions, undefined, `at ${t}`);
      h = a.health;
    }
  });

  it('a node whose monitored conditions are all Unknown already is not written again', () => {
    const n = node(
      ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => ({
        ...ready('Unknown', T0),
        type,
        reason: 'NodeStatusUnknown',
      })),
    );
    const h = assessNode(undefined, n, undefined, T0, timing).health;
    const a = assessNode(h, n, undefined, T0 + 100_000, timing);
    assert.equal(a.conditions, undefined);
    assert.equal(a.currentReady, 'Unknown');
  });

  it('a Ready=False node going silent becomes Unknown too', () => {
    const n = node([ready('False', T0)]);
    const h = assessNode(undefined, n, undefined, T0, timing).health;
    const a = assessNode(h, n, undefined, T0 + 40_001, timing);
    assert.equal(a.observedReady, 'False');
    assert.equal(a.currentReady, 'Unknown');
  });

  it('property: a node is marked Unknown iff both heartbeats are older than the grace period', () => {
    // Events at increasing times; each either changes the Ready heartbeat, renews the Lease, or neither.
    // The controller passes at every event and once more at `end`; the last heartbeat it observed is
    // the last event that changed what it reads (or the first pass). lastHeartbeatTime is serialized to
    // the second (metav1.Time), so a Ready heartbeat in the same second as the previous one reads the
    // same and is not a new heartbeat, as in Kubernetes; a Lease's renewTime keeps microseconds.
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            dt: fc.integer({ min: 1, max: 30_000 }),
            kind: fc.constantFrom('hb', 'lease', 'none'),
          }),
          {
            maxLength: 30,
          },
        ),
        fc.integer({ min: 0, max: 100_000 }),
        (events, tail) => {
          let t = T0;
          let hb = T0;
          let renew = T0;
          let lastBeat = T0;
          let h: NodeHealth | undefined = assessNode(
            undefined,
            node([ready('True', hb)]),
            lease(renew),
            t,
            timing,
          ).health;
          let unknownAt: number | undefined;
          for (const e of events) {
            t += e.dt;
            if (e.kind === 'hb') {
              if (rfc3339(t) !== rfc3339(hb)) lastBeat = t;
              hb = t;
            }
            if (e.kind === 'lease') {
              renew = t;
              lastBeat = t;
            }
            const a = assessNode(h, node([ready('True', hb)]), lease(renew), t, timing);
            h = a.health;
            const expectUnknown = t - lastBeat > timing.gracePeriodMs;
            assert.equal(a.conditions !== undefined, expectUnknown);
            if (expectUnknown) {
              unknownAt = t;
              break;
            }
          }
          if (unknownAt !== undefined) return;
          const end = t + tail;
          const a = assessNode(h, node([ready('True', hb)]), lease(renew), end, timing);
          assert.equal(a.conditions !== undefined, end - lastBeat > timing.gracePeriodMs);
          assert.equal(overdue(a.health, timing.gracePeriodMs, end), end - lastBeat > timing.gracePeriodMs);
        },
      ),
      // A heartbeat 48 ms after the first, in the same second: the pass 40,001 ms after the first is late.
      { examples: [[[{ dt: 48, kind: 'hb' }], 39_953]] },
    );
  });
});

describe('unknownConditions', () => {
  it('keeps other conditions and their order, and adds the missing monitored ones', () => {
    const out = unknownConditions(
      [
        { type: 'NetworkUnavailable', status: 'False' },
        { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: 'x', lastTransitionTime: 'y' },
      ],
      rfc3339(T0),
      T0 + 1000,
    )!;
    assert.deepEqual(
      out.map((c) => [c.type, c.status]),
      [
        ['NetworkUnavailable', 'False'],
        ['MemoryPressure', 'Unknown'],
        ['Ready', 'Unknown'],
        ['DiskPressure', 'Unknown'],
        ['PIDPressure', 'Unknown'],
      ],
    );
    assert.equal(out[1]!.lastHeartbeatTime, 'x');
    assert.equal(out[1]!.lastTransitionTime, rfc3339(T0 + 1000));
  });

  it('is undefined when every monitored condition is Unknown already', () => {
    const all = ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => ({
      type,
      status: 'Unknown',
    }));
    assert.equal(unknownConditions(all, rfc3339(T0), T0), undefined);
  });
});
