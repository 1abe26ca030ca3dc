// The default scheduler end to end: kubectl against `svcplane up` (scheduler in-process), with Nodes made
// by hand (Ready, 110 pods allocatable) and no kubelet. Pods get bound (NODE column of -o wide), a
// nodeSelector is respected, a tainted node is avoided unless tolerated, an impossible pod gets
// upstream's FailedScheduling message and is placed once a matching node appears, and the pods of one
// owner spread over the nodes. `svcplane scheduler` refuses bad flags with status 2 and one line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubectlFor, type Kubectl } from './testing/kubectl.js';
import { startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-sched-'));
after(() => rmSync(work, { recursive: true, force: true }));

const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

const node = (
  name: string,
  labels: Record<string, string> = {},
  taints: { key: string; value?: string; effect: string }[] = [],
): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { 'kubernetes.io/hostname': name, ...labels } },
  spec: { taints },
  status: {
    capacity: { pods: '110', cpu: '4', memory: '8Gi' },
    allocatable: { pods: '110', cpu: '4', memory: '8Gi' },
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        lastHeartbeatTime: now(),
        lastTransitionTime: now(),
      },
    ],
  },
});

const pod = (
  name: string,
  spec: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...meta },
  spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.9' }], ...spec },
});

const apply = (k: Kubectl, docs: unknown[]): Promise<string> =>
  k(['apply', '-f', '-'], docs.map((d) => JSON.stringify(d)).join('\n'));

/** pod name → NODE column of `kubectl get pods -o wide`. */
async function nodeColumn(k: Kubectl): Promise<Map<string, string>> {
  const out = await k(['get', 'pods', '-o', 'wide', '--no-headers']);
  const m = new Map<string, string>();
  for (const line of out.trim().split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length >= 7) m.set(cols[0]!, cols[6]!);
  }
  return m;
}

const boundTo = (k: Kubectl, name: string): Promise<string> =>
  until(`pod ${name} to be bound`, 20_000, async () => {
    const n = (await nodeColumn(k)).get(name);
    return n !== undefined && n !== '<none>' ? n : undefined;
  });

interface EventList {
  items: {
    reason: string;
    message: string;
    type: string;
    source?: { component?: string };
    involvedObject: { name: string };
  }[];
}

const eventsFor = async (k: Kubectl, podName: string, reason: string): Promise<EventList['items']> => {
  const list = JSON.parse(await k(['get', 'events', '-o', 'json'])) as EventList;
  return list.items.filter((e) => e.involvedObject.name === podName && e.reason === reason);
};

describe('scheduler: kubectl against svcplane up', () => {
  let srv: TestServer;
  let k: Kubectl;
  before(async () => {
    srv = await startUp();
    k = kubectlFor(srv, work);
    await apply(k, [
      node('n1', { disk: 'ssd' }),
      node('n2', { special: 'true' }, [{ key: 'dedicated', value: 'special', effect: 'NoSchedule' }]),
      node('n3'),
      node('n4'),
    ]);
  });
  after(async () => srv?.destroy());

  it('binds a pod with a nodeSelector to the matching node, with a Scheduled event', async () => {
    await apply(k, [pod('ssd', { nodeSelector: { disk: 'ssd' } })]);
    assert.equal(await boundTo(k, 'ssd'), 'n1');
    const ev = await until(
      'the Scheduled event',
      10_000,
      async () => (await eventsFor(k, 'ssd', 'Scheduled'))[0],
    );
    assert.equal(ev.message, 'Successfully assigned default/ssd to n1');
    assert.equal(ev.type, 'Normal');
    assert.equal(ev.source?.component, 'default-scheduler');
    const scheduled = JSON.parse(await k(['get', 'pod', 'ssd', '-o', 'json'])) as {
      status: { conditions?: { type: string; status: string }[] };
    };
    assert.equal(scheduled.status.conditions?.find((c) => c.type === 'PodScheduled')?.status, 'True');
  });

  it('avoids a tainted node unless the pod tolerates its taint', async () => {
    await apply(k, [pod('special-intolerant', { nodeSelector: { special: 'true' } })]);
    const ev = await until(
      'FailedScheduling for the intolerant pod',
      20_000,
      async () => (await eventsFor(k, 'special-intolerant', 'FailedScheduling'))[0],
    );
    assert.equal(
      ev.message,
      "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: special}, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling..",
    );
    await apply(k, [
      pod('special-tolerant', {
        nodeSelector: { special: 'true' },
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'special', effect: 'NoSchedule' }],
      }),
    ]);
    assert.equal(await boundTo(k, 'special-tolerant'), 'n2');
    assert.equal((await nodeColumn(k)).get('special-intolerant'), '<none>');
  });

  it('spreads the pods of one owner over the nodes it may use', async () => {
    // Any existing object may own them (the garbage collector keeps pods whose owner exists).
    const owner = JSON.parse(
      await k(['create', 'service', 'clusterip', 'spread-owner', '--tcp=80', '-o', 'json']),
    ) as { metadata: { uid: string } };
    const ownerReferences = [
      { apiVersion: 'v1', kind: 'Service', name: 'spread-owner', uid: owner.metadata.uid, controller: true },
    ];
    await apply(
      k,
      ['web-0', 'web-1', 'web-2'].map((n) => pod(n, {}, { ownerReferences, labels: { app: 'web' } })),
    );
    const nodes = await Promise.all(['web-0', 'web-1', 'web-2'].map((n) => boundTo(k, n)));
    assert.deepEqual([...nodes].sort(), ['n1', 'n3', 'n4'], `placed on ${nodes.join(', ')}`);
  });

  it('reports an impossible pod with the exact message, then places it once a matching node appears', async () => {
    await apply(k, [pod('nvme', { nodeSelector: { disk: 'nvme' } })]);
    const ev = await until(
      'FailedScheduling',
      20_000,
      async () => (await eventsFor(k, 'nvme', 'FailedScheduling'))[0],
    );
    const message =
      "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: special}, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling..";
    assert.equal(ev.message, message);
    assert.equal(ev.type, 'Warning');
    assert.equal(ev.source?.component, 'default-scheduler');
    const cond = await until('PodScheduled=False', 10_000, async () => {
      const p = JSON.parse(await k(['get', 'pod', 'nvme', '-o', 'json'])) as {
        status: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
      };
      return p.status.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
    });
    assert.equal(cond.reason, 'Unschedulable');
    assert.equal(cond.message, message);
    const described = await k(['describe', 'pod', 'nvme']);
    assert.match(described, /FailedScheduling\s+\S+\s+default-scheduler\s+0\/4 nodes are available/);

    await apply(k, [node('n5', { disk: 'nvme' })]);
    assert.equal(await boundTo(k, 'nvme'), 'n5');
  });

  it('never binds a pod for another scheduler', async () => {
    await apply(k, [pod('other-scheduler', { schedulerName: 'my-scheduler' })]);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal((await nodeColumn(k)).get('other-scheduler'), '<none>');
  });
});

describe('svcplane scheduler: flags', () => {
  const run = (args: string[]): { status: number | null; stderr: string } => {
    const r = spawnSync(process.execPath, [BIN, 'scheduler', ...args], { encoding: 'utf8', timeout: 30_000 });
    return { status: r.status, stderr: r.stderr };
  };
  for (const [name, args, want] of [
    ['without --kubeconfig', [], /^svcplane: --kubeconfig is required\n$/],
    [
      'with an unknown flag',
      ['--kubeconfig', '/dev/null', '--nope'],
      /^svcplane: Unknown option '--nope'\n$/,
    ],
    ['with a missing kubeconfig file', ['--kubeconfig', '/nonexistent/kubeconfig'], /does not exist\n$/],
    ['with a bad --parallelism', ['--kubeconfig', '/dev/null', '--parallelism', '0'], /--parallelism/],
  ] as const) {
    it(`exits 2 with one line ${name}`, () => {
      const r = run([...args]);
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, want);
      assert.equal(r.stderr.trim().split('\n').length, 1);
    });
  }
  it('--help prints the usage', () => {
    const r = spawnSync(process.execPath, [BIN, 'scheduler', '--help'], { encoding: 'utf8' });
    assert.equal(r.status, 0);
    assert.match(r.stdout, /Usage: svcplane scheduler --kubeconfig FILE/);
  });
});
