import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPodReady, shouldPodBeInEndpoints } from '../endpoints/pod-address.js';
import type { Pod } from '../endpoints/types.js';
import {
  ipListProblem,
  podStatus,
  podStatusProblems,
  PodStatusError,
  type PodStatus,
  type PodStatusInput,
} from './pod-status.js';

const T0 = '2026-11-21T10:00:00Z';
const T1 = '2026-11-21T10:05:00Z';
const T2 = '2026-11-21T10:09:00Z';

const spec = {
  containers: [
    { name: 'web', image: 'nginx' },
    { name: 'log', image: 'busybox' },
  ],
};
const cond = (s: PodStatus, type: string) => s.conditions.find((c) => c.type === type);
const withStatus = (status: PodStatus): Pod => ({ metadata: { name: 'p' }, spec, status });

describe('podStatus', () => {
  it('a ready Running pod: IPs, phase, the five kubelet conditions, all True at now', () => {
    const s = podStatus({ ip: '10.244.1.5', now: T0 });
    assert.equal(s.phase, 'Running');
    assert.equal(s.podIP, '10.244.1.5');
    assert.deepEqual(s.podIPs, [{ ip: '10.244.1.5' }]);
    assert.equal(s.startTime, T0);
    assert.deepEqual(s.conditions, [
      { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: T0 },
      { type: 'Initialized', status: 'True', lastTransitionTime: T0 },
      { type: 'Ready', status: 'True', lastTransitionTime: T0 },
      { type: 'ContainersReady', status: 'True', lastTransitionTime: T0 },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: T0 },
    ]);
    assert.equal(s.containerStatuses, undefined, 'no containers known, none reported');
    assert.equal(s.hostIP, undefined);
  });

  it('dual-stack pod and host IPs keep their order (primary first)', () => {
    const s = podStatus({ ips: ['fd00::5', '10.0.0.5'], hostIPs: ['192.168.1.2', '2001:db8::2'], now: T0 });
    assert.equal(s.podIP, 'fd00::5');
    assert.deepEqual(s.podIPs, [{ ip: 'fd00::5' }, { ip: '10.0.0.5' }]);
    assert.equal(s.hostIP, '192.168.1.2');
    assert.deepEqual(s.hostIPs, [{ ip: '192.168.1.2' }, { ip: '2001:db8::2' }]);
  });

  it('not ready: Ready and ContainersReady False with the kubelet reason naming the containers', () => {
    const s = podStatus({ ip: '10.0.0.1', ready: false, now: T0, pod: { spec } });
    for (const type of ['Ready', 'ContainersReady']) {
      assert.deepEqual(cond(s, type), {
        type,
        status: 'False',
        lastTransitionTime: T0,
        reason: 'ContainersNotReady',
        message: 'containers with unready status: [web log]',
      });
    }
    assert.equal(cond(s, 'PodScheduled')?.status, 'True');
    assert.deepEqual(
      s.containerStatuses?.map((c) => [c.name, c.image, c.ready, c.started, Object.keys(c.state)[0]]),
      [
        ['web', 'nginx', false, true, 'running'],
        ['log', 'busybox', false, true, 'running'],
      ],
    );
  });

  it('containers of a ready pod are ready and running since now', () => {
    const s = podStatus({ ip: '10.0.0.1', now: T0, pod: { spec } });
    assert.deepEqual(s.containerStatuses?.[0], {
      name: 'web',
      image: 'nginx',
      imageID: '',
      ready: true,
      started: true,
      restartCount: 0,
      state: { running: { startedAt: T0 } },
    });
  });

  it('what the Endpoints controller reads agrees: ready or not, in endpoints while Running with an IP', () => {
    const ready = withStatus(podStatus({ ip: '10.0.0.1', now: T0 }));
    const notReady = withStatus(podStatus({ ip: '10.0.0.1', ready: false, now: T0 }));
    const done = withStatus(podStatus({ ip: '10.0.0.1', phase: 'Succeeded', now: T0 }));
    assert.equal(isPodReady(ready), true);
    assert.equal(isPodReady(notReady), false);
    assert.equal(shouldPodBeInEndpoints(notReady, false), true);
    assert.equal(shouldPodBeInEndpoints(done, false), false);
  });

  it('keeps lastTransitionTime, startTime and startedAt across updates; moves them on a change', () => {
    const first = podStatus({ ip: '10.0.0.1', now: T0, pod: { spec } });
    const same = podStatus({ ip: '10.0.0.1', now: T1, pod: { spec, status: first } });
    assert.deepEqual(same, first, 'nothing changed, nothing moves');

    const down = podStatus({ ip: '10.0.0.1', ready: false, now: T1, pod: { spec, status: first } });
    assert.equal(cond(down, 'Ready')?.lastTransitionTime, T1);
    assert.equal(cond(down, 'ContainersReady')?.lastTransitionTime, T1);
    assert.equal(cond(down, 'PodScheduled')?.lastTransitionTime, T0);
    assert.equal(down.startTime, T0);
    assert.deepEqual(down.containerStatuses?.[0]?.state, { running: { startedAt: T0 } });

    const up = podStatus({ ip: '10.0.0.1', ready: true, now: T2, pod: { spec, status: down } });
    assert.equal(cond(up, 'Ready')?.lastTransitionTime, T2);
    assert.equal(cond(up, 'Ready')?.reason, undefined);
  });

  it('keeps conditions it does not own, after its own', () => {
    const gate = { type: 'example.com/feature', status: 'True', lastTransitionTime: T0 };
    const s = podStatus({ ip: '10.0.0.1', now: T1, pod: { status: { conditions: [gate] } } });
    assert.deepEqual(s.conditions.at(-1), gate);
    assert.equal(s.conditions.length, 6);
  });

  it('without IPs it leaves the pod IPs as they are (and needs none when the pod has one)', () => {
    const prev = podStatus({ ip: '10.0.0.1', now: T0 });
    const s = podStatus({ ready: false, now: T1, pod: { status: prev } });
    assert.equal('podIP' in s, false);
    assert.equal('podIPs' in s, false);
    assert.equal(cond(s, 'PodReadyToStartContainers')?.status, 'True');
  });

  it('Pending: not ready, containers waiting in ContainerCreating; sandbox ready only with an IP', () => {
    const noIP = podStatus({ phase: 'Pending', now: T0, pod: { spec } });
    assert.equal(noIP.phase, 'Pending');
    assert.equal(cond(noIP, 'Ready')?.status, 'False');
    assert.equal(cond(noIP, 'PodReadyToStartContainers')?.status, 'False');
    assert.deepEqual(noIP.containerStatuses?.[0]?.state, { waiting: { reason: 'ContainerCreating' } });
    const withIP = podStatus({ phase: 'Pending', ip: '10.0.0.1', now: T0 });
    assert.equal(cond(withIP, 'PodReadyToStartContainers')?.status, 'True');
  });

  it('Succeeded and Failed: PodCompleted, containers terminated with exit code 0 or 1', () => {
    const running = podStatus({ ip: '10.0.0.1', now: T0, pod: { spec } });
    const ok = podStatus({ phase: 'Succeeded', now: T1, pod: { spec, status: running } });
    assert.deepEqual(cond(ok, 'Ready'), {
      type: 'Ready',
      status: 'False',
      lastTransitionTime: T1,
      reason: 'PodCompleted',
    });
    assert.equal(cond(ok, 'PodReadyToStartContainers')?.status, 'False');
    assert.deepEqual(ok.containerStatuses?.[0]?.state, {
      terminated: { exitCode: 0, reason: 'Completed', startedAt: T0, finishedAt: T1 },
    });
    const again = podStatus({ phase: 'Succeeded', now: T2, pod: { spec, status: ok } });
    assert.deepEqual(again, ok, 'a finished container stays finished at the time it finished');
    const failed = podStatus({ phase: 'Failed', ip: '10.0.0.1', now: T1, pod: { spec } });
    assert.deepEqual(failed.containerStatuses?.[1]?.state, {
      terminated: { exitCode: 1, reason: 'Error', startedAt: T1, finishedAt: T1 },
    });
  });

  it('ready defaults to true only when Running', () => {
    assert.equal(cond(podStatus({ ip: '10.0.0.1', now: T0 }), 'Ready')?.status, 'True');
    assert.equal(cond(podStatus({ phase: 'Failed', now: T0 }), 'Ready')?.status, 'False');
  });

  it('refuses input a kubelet would never report', () => {
    const cases: [PodStatusInput, RegExp][] = [
      [{ ip: '10.0.0.300', now: T0 }, /pod IPs: "10\.0\.0\.300" is not an IP address/],
      [{ ips: ['10.0.0.1', '10.0.0.2'], now: T0 }, /one IPv4 and one IPv6/],
      [{ ips: ['10.0.0.1', 'fd00::1', '10.0.0.2'], now: T0 }, /at most two/],
      [{ ips: [], now: T0 }, /no IP address/],
      [{ ip: '10.0.0.1', hostIP: 'nope', now: T0 }, /host IPs: "nope" is not an IP address/],
      [{ ip: '10.0.0.1', ips: ['10.0.0.1'], now: T0 }, /ip or ips/],
      [{ phase: 'Pending', ready: true, ip: '10.0.0.1', now: T0 }, /phase Pending cannot be ready/],
      [{ now: T0 }, /a Running pod needs an IP address/],
      [{ ip: '10.0.0.1', phase: 'Unknown' as never, now: T0 }, /phase "Unknown" is not one of/],
      [{ ip: '10.0.0.1', now: 'yesterday' }, /not an RFC 3339 time/],
    ];
    for (const [input, want] of cases) {
      assert.match(podStatusProblems(input).join('; '), want, JSON.stringify(input));
      assert.throws(
        () => podStatus(input),
        (err) => err instanceof PodStatusError && want.test(err.message),
      );
    }
  });

  it('ipListProblem accepts one address or one per family', () => {
    assert.equal(ipListProblem(['10.0.0.1']), undefined);
    assert.equal(ipListProblem(['2001:db8::1']), undefined);
    assert.equal(ipListProblem(['10.0.0.1', '2001:db8::1']), undefined);
    assert.match(ipListProblem(['2001:db8::1', '2001:db8::2']) ?? '', /one IPv4 and one IPv6/);
  });
});
