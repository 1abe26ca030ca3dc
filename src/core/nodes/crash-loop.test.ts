// A simulated container whose port cannot be served: the kubelet's back-off sequence, the restart
// count from a fresh pod and from one that was running, which containers crash, and the status planPod
// reports through a crash and after the start that works.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  backingOff,
  containersOfPorts,
  crashBackoffMs,
  goSeconds,
  restartsOf,
  startFailed,
  startWorked,
  type CrashLoop,
} from './crash-loop.js';
import { planPod, type PodPlan } from './pod-lifecycle.js';

const T0 = Date.parse('2026-11-27T10:00:00Z');
const at = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

const spec = {
  containers: [
    {
      name: 'web',
      image: 'echo',
      ports: [{ containerPort: 8080 }, { containerPort: 9090, protocol: 'UDP' }],
    },
    { name: 'metrics', image: 'echo', ports: [{ containerPort: 9100, protocol: 'TCP' }] },
  ],
};

const running = (restarts = 0) => ({
  metadata: { uid: 'u1', name: 'p', namespace: 'ns' },
  spec,
  status: {
    phase: 'Running',
    podIP: '127.10.0.5',
    containerStatuses: [
      { name: 'web', restartCount: restarts, state: { running: { startedAt: at(T0 - 60_000) } } },
      { name: 'metrics', restartCount: 0, state: { running: { startedAt: at(T0 - 60_000) } } },
    ],
  },
});
const fresh = { metadata: { uid: 'u1', name: 'p', namespace: 'ns' }, spec, status: { phase: 'Pending' } };
const EADDRINUSE = { port: 8080, message: 'listen EADDRINUSE: address already in use 127.10.0.5:8080' };
/** A pod that never ran, after its first failure and the immediate restart's: in its 10 s back-off. */
const inBackOff = (): CrashLoop =>
  startFailed(startFailed(undefined, fresh, [EADDRINUSE], T0, at(T0)), fresh, [EADDRINUSE], T0, at(T0));

describe('crash loop bookkeeping', () => {
  it('backs off as the kubelet does: the first failure at once, then 10 s doubling to 5 min', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 50].map((n) => crashBackoffMs(n) / 1000),
      [0, 10, 20, 40, 80, 160, 300, 300, 300],
    );
  });

  it('prints the back-off as Go prints a duration', () => {
    assert.deepEqual([0, 10, 40, 80, 160, 300, 3600, 3725].map(goSeconds), [
      '0s',
      '10s',
      '40s',
      '1m20s',
      '2m40s',
      '5m0s',
      '1h0m0s',
      '1h2m5s',
    ]);
  });

  it('maps failed TCP ports to the containers that declare them', () => {
    assert.deepEqual(containersOfPorts({ spec }, [8080]), ['web']);
    assert.deepEqual(containersOfPorts({ spec }, [9100, 8080]), ['web', 'metrics']);
    assert.deepEqual(containersOfPorts({ spec }, [9090]), [], 'a UDP port is no echo listener');
  });

  it('counts from a pod that never ran: the first failure restarts at once, the second backs off 10 s', () => {
    const l1 = startFailed(undefined, fresh, [EADDRINUSE], T0, at(T0));
    assert.deepEqual(
      {
        starts: l1.starts,
        failures: l1.failures,
        crashed: Object.keys(l1.crashed),
        next: l1.nextStartMs - T0,
      },
      { starts: 1, failures: 1, crashed: ['web'], next: 0 },
    );
    assert.ok(!backingOff(l1, T0), 'no wait after the first failure');
    const l2 = startFailed(l1, fresh, [EADDRINUSE], T0, at(T0));
    assert.deepEqual([l2.starts, l2.failures, l2.nextStartMs - T0], [2, 2, 10_000]);
    assert.ok(backingOff(l2, T0 + 9_999));
    assert.ok(!backingOff(l2, T0 + 10_000));
    assert.deepEqual(restartsOf(l2), {
      web: {
        restartCount: 1,
        crash: { message: EADDRINUSE.message, startedAt: at(T0), finishedAt: at(T0), backoff: '10s' },
      },
    });
    const l3 = startFailed(l2, fresh, [EADDRINUSE], T0 + 10_000, at(T0 + 10_000));
    assert.deepEqual(
      [l3.starts, l3.nextStartMs - (T0 + 10_000), restartsOf(l3)['web']!.crash!.backoff],
      [3, 20_000, '20s'],
    );
    const ok = startWorked(l3);
    assert.deepEqual([ok.starts, ok.failures, ok.crashed], [4, 0, {}]);
    assert.deepEqual(restartsOf(ok), { web: { restartCount: 3 } });
    assert.ok(!backingOff(ok, T0));
    assert.equal(startWorked(ok), ok, 'running containers: nothing changes');
  });

  it("goes on from the restarts a pod's status shows (a running container found dead, or a restarted kubelet)", () => {
    const l = startFailed(undefined, running(3), [EADDRINUSE], T0, at(T0));
    assert.equal(restartsOf(l)['web']!.restartCount, 3, 'the run that failed is the one after 3 restarts');
    const l2 = startFailed(l, running(3), [EADDRINUSE], T0, at(T0));
    assert.equal(restartsOf(l2)['web']!.restartCount, 4);
    const again = startFailed(startWorked(l2), running(5), [EADDRINUSE], T0 + 1, at(T0 + 1));
    assert.equal(again.failures, 1, 'a crash after a start that worked restarts at once again');
    assert.equal(restartsOf(again)['web']!.restartCount, 6);
  });

  it('fails every container when the port is none of theirs', () => {
    const l = startFailed(undefined, fresh, [{ port: 1, message: 'x' }], T0, at(T0));
    assert.deepEqual(Object.keys(l.crashed), ['web', 'metrics']);
  });
});

describe('planPod through a crash loop', () => {
  const input = (pod: object, loop: CrashLoop | undefined, nowMs: number) => ({
    pod: pod as Parameters<typeof planPod>[0]['pod'],
    ips: ['127.10.0.5'],
    hostIPs: ['127.0.1.2'],
    nowMs,
    now: at(nowMs),
    ...(loop === undefined ? {} : { containers: restartsOf(loop) }),
  });
  const statusOf = (p: PodPlan) => {
    assert.equal(p.kind, 'status');
    return (p as Extract<PodPlan, { kind: 'status' }>).status;
  };

  it('reports Running, not ready, the crashed container waiting with its failed run; the other runs, ready', () => {
    const first = startFailed(undefined, running(0), [EADDRINUSE], T0, at(T0));
    const loop = startFailed(first, running(0), [EADDRINUSE], T0, at(T0));
    const s = statusOf(planPod(input(running(0), loop, T0)));
    assert.equal(s.phase, 'Running');
    const ready = s.conditions.find((c) => c.type === 'Ready')!;
    assert.deepEqual(
      [ready.status, ready.reason, ready.message],
      ['False', 'ContainersNotReady', 'containers with unready status: [web]'],
    );
    const [web, metrics] = s.containerStatuses!;
    assert.deepEqual(web, {
      name: 'web',
      image: 'echo',
      imageID: '',
      ready: false,
      started: false,
      restartCount: 1,
      state: {
        waiting: {
          reason: 'CrashLoopBackOff',
          message: 'back-off 10s restarting failed container=web pod=p_ns(u1)',
        },
      },
      lastState: {
        terminated: {
          exitCode: 1,
          reason: 'Error',
          message: EADDRINUSE.message,
          startedAt: at(T0),
          finishedAt: at(T0),
        },
      },
    });
    assert.deepEqual(
      [metrics!.ready, metrics!.started, metrics!.restartCount, Object.keys(metrics!.state)],
      [true, true, 0, ['running']],
    );
  });

  it('a crash of a pod that never ran is reported Running too (a restarting container counts as stopped)', () => {
    const loop = inBackOff();
    const s = statusOf(planPod(input(fresh, loop, T0)));
    assert.equal(s.phase, 'Running');
    assert.equal(s.containerStatuses![0]!.restartCount, 1);
  });

  it('once a start works: running, ready, the restarts kept and the failed run as lastState', () => {
    const loop = inBackOff();
    const crashedPod = { ...fresh, status: statusOf(planPod(input(fresh, loop, T0))) };
    const s = statusOf(planPod(input(crashedPod, startWorked(loop), T0 + 10_000)));
    assert.equal(s.conditions.find((c) => c.type === 'Ready')!.status, 'True');
    const web = s.containerStatuses![0]!;
    assert.deepEqual(
      [web.ready, web.started, web.restartCount, web.state],
      [true, true, 2, { running: { startedAt: at(T0 + 10_000) } }],
    );
    assert.equal((web.lastState as { terminated: { reason: string } }).terminated.reason, 'Error');
  });

  it('a further failed start changes the restart count and back-off, so the status is written again', () => {
    const l1 = inBackOff();
    const pod1 = { ...fresh, status: statusOf(planPod(input(fresh, l1, T0))) };
    assert.equal(planPod(input(pod1, l1, T0 + 5_000)).kind, 'wait', 'the same crash: nothing to write');
    const l2 = startFailed(l1, pod1, [EADDRINUSE], T0 + 10_000, at(T0 + 10_000));
    const s2 = statusOf(planPod(input(pod1, l2, T0 + 10_000)));
    assert.equal(s2.containerStatuses![0]!.restartCount, 2);
    assert.match(JSON.stringify(s2.containerStatuses![0]!.state), /back-off 20s/);
  });
});
