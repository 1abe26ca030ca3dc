// Workloads end to end: real kubectl against `svcplane up` (every controller, the scheduler included, with
// a short node grace period) and `svcplane node --count 3 --serve-pods` (real processes). A 3-replica
// Deployment runs on 3 nodes with IPs from their pod CIDRs; an image change rolls within the surge bounds,
// `rollout undo` goes back and `scale` works; a nodeSelector places pods on the labelled node only and an
// impossible one is reported as FailedScheduling; the pods answer HTTP with their node's name; a Service's
// Endpoints follow the pods through a SIGKILL of the kubelets (nodes Unknown, pods not ready) and their
// restart (same IPs).
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubectlFor, type Kubectl } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';
import { httpGet } from './testing/http-get.js';
import { startNodeProcess } from './testing/node-process.js';

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-workloads-'));
after(() => rmSync(work, { recursive: true, force: true }));

// A 127/8 range and a port of their own per run, the range below node-kubectl's (127.100-249): no root,
// no clash with a concurrent run of another suite.
const OCTET = 20 + (process.pid % 80);
const POD_CIDR = `127.${OCTET}.0.0/16`;
const NODE_IP = `127.0.${OCTET}.1`;
const PORT = 20_000 + (process.pid % 2000);
const NODES = ['wl-0', 'wl-1', 'wl-2'];
const NODE_ARGS = [
  '--name',
  'wl',
  '--count',
  '3',
  '--pod-cidr',
  POD_CIDR,
  '--node-ip',
  NODE_IP,
  '--serve-pods',
];
// The kubelets renew their Leases every 10 s: 15 s of grace never flaps, and a dead node is seen soon.
const GRACE_MS = 15_000;
const WAIT = 30_000;

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}
interface Pod {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  spec: { nodeName?: string; containers: { image: string }[] };
  status: { phase?: string; podIP?: string; conditions?: Condition[] };
}
interface ReplicaSet {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: { replicas?: number; template: { spec: { containers: { image: string }[] } } };
  status?: { replicas?: number };
}
interface NodeObj {
  metadata: { name: string };
  spec: { podCIDRs?: string[] };
  status: { conditions?: Condition[] };
}
interface Endpoints {
  subsets?: { addresses?: { ip: string }[]; notReadyAddresses?: { ip: string }[] }[];
}
interface EventObj {
  reason: string;
  message: string;
  type: string;
  involvedObject: { kind: string; name: string };
}

const isReady = (p: Pod): boolean =>
  p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
const live = (p: Pod): boolean => p.metadata.deletionTimestamp === undefined;
const nodeReady = (n: NodeObj): string | undefined =>
  n.status.conditions?.find((c) => c.type === 'Ready')?.status;

function ipToInt(ip: string): number {
  return ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
}
function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  const start = ipToInt(base!) - (ipToInt(base!) % size);
  const n = ipToInt(ip);
  return n >= start && n < start + size;
}

/** A running `svcplane node` process, handed back once it printed its ready line. */
async function startNodes(srv: TestServer): Promise<ChildProcess> {
  const node = await startNodeProcess(['--kubeconfig', srv.kubeconfig, ...NODE_ARGS], {
    PATH: process.env['PATH'] ?? '',
    HOME: work,
  });
  return node.proc;
}

const killed = (proc: ChildProcess, signal: NodeJS.Signals): Promise<void> =>
  new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill(signal);
  });

const deployment = (
  name: string,
  replicas: number,
  image: string,
  extra: { nodeSelector?: Record<string, string>; strategy?: unknown } = {},
): unknown => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    ...(extra.strategy === undefined ? {} : { strategy: extra.strategy }),
    template: {
      metadata: { labels: { app: name } },
      spec: {
        ...(extra.nodeSelector === undefined ? {} : { nodeSelector: extra.nodeSelector }),
        containers: [
          {
            name: 'echo',
            image,
            ports: [{ containerPort: PORT }],
            // Ready a second after Running: a new pod is unavailable for a while, which the surge
            // bounds must account for.
            readinessProbe: { httpGet: { path: '/', port: PORT }, initialDelaySeconds: 1 },
          },
        ],
      },
    },
  },
});

describe('workloads end to end: kubectl, svcplane up and svcplane node', () => {
  let srv: TestServer;
  let kubectl: Kubectl;
  let nodes: ChildProcess | undefined;

  const getJson = async <T>(args: string[]): Promise<T> =>
    JSON.parse(await kubectl([...args, '-o', 'json'])) as T;
  const pods = async (app: string): Promise<Pod[]> =>
    (await getJson<{ items: Pod[] }>(['get', 'pods', '-l', `app=${app}`])).items;
  const apiList = async <T>(p: string): Promise<T[]> => {
    const r = await call(srv, 'GET', p);
    assert.equal(r.status, 200, r.text);
    return r.json<{ items: T[] }>().items;
  };
  /** `n` Running, Ready pods of `app` (no others) with IPs, all running `image` when given. */
  const readyPods = (app: string, n: number, image?: string): Promise<Pod[]> =>
    until(`${n} Ready pods of ${app}${image === undefined ? '' : ` on ${image}`}`, WAIT, async () => {
      const ps = await pods(app);
      return ps.length === n &&
        ps.every(
          (p) =>
            live(p) &&
            p.status.phase === 'Running' &&
            isReady(p) &&
            p.status.podIP !== undefined &&
            (image === undefined || p.spec.containers[0]!.image === image),
        )
        ? ps
        : undefined;
    });
  const endpoints = async (): Promise<{ ready: string[]; notReady: string[] }> => {
    const ep = await getJson<Endpoints>(['get', 'endpoints', 'web']);
    const ips = (k: 'addresses' | 'notReadyAddresses'): string[] =>
      (ep.subsets ?? []).flatMap((s) => (s[k] ?? []).map((a) => a.ip)).sort();
    return { ready: ips('addresses'), notReady: ips('notReadyAddresses') };
  };

  before(async () => {
    srv = await startUp({
      args: ['--node-monitor-grace-period', `${GRACE_MS / 1000}s`, '--node-monitor-period', '500ms'],
    });
    kubectl = kubectlFor(srv, work);
    nodes = await startNodes(srv);
    await until('3 Ready nodes', WAIT, async () => {
      const ns = await apiList<NodeObj>('/api/v1/nodes');
      return ns.length === 3 && ns.every((n) => nodeReady(n) === 'True');
    });
  });
  after(async () => {
    if (nodes !== undefined) await killed(nodes, 'SIGKILL');
    await srv?.destroy();
  });

  it('runs a 3-replica Deployment as 3 Running, Ready pods on 3 nodes, with IPs from their pod CIDRs', async () => {
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify(
        deployment('web', 3, 'echo:v1', {
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } },
        }),
      ),
    );
    await readyPods('web', 3);
    const cidrs = new Map(
      (await apiList<NodeObj>('/api/v1/nodes')).map((n) => [n.metadata.name, n.spec.podCIDRs ?? []]),
    );
    const wide = await kubectl(['get', 'pods', '-l', 'app=web', '-o', 'wide', '--no-headers']);
    const rows = wide
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/));
    assert.equal(rows.length, 3, wide);
    const used = new Set<string>();
    for (const [name, ready, status, , , ip, node] of rows) {
      assert.match(name!, /^web-[a-z0-9]+-[a-z0-9]{5}$/, wide);
      assert.equal(ready, '1/1', wide);
      assert.equal(status, 'Running', wide);
      assert.ok(NODES.includes(node!), `${name} on a known node: ${wide}`);
      const podCIDRs = cidrs.get(node!)!;
      assert.ok(
        podCIDRs.some((c) => inCidr(ip!, c)),
        `${name}'s IP ${ip} is inside ${node}'s podCIDRs ${podCIDRs.join(',')}`,
      );
      used.add(node!);
    }
    assert.deepEqual([...used].sort(), NODES, `one pod per node:\n${wide}`);
  });

  it('rolls an image change within the surge bounds, undoes it, and scales', async () => {
    const status = await kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    assert.match(status, /deployment "web" successfully rolled out/);

    // Sample the pods and ReplicaSets as often as the API answers while the roll runs.
    const replicas = 3;
    const maxSurge = 1;
    const maxUnavailable = 1;
    const violations: string[] = [];
    let samples = 0;
    let mixed = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const [ps, rss] = await Promise.all([
          apiList<Pod>('/api/v1/namespaces/default/pods?labelSelector=app%3Dweb'),
          apiList<ReplicaSet>('/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Dweb'),
        ]);
        samples++;
        const active = ps.filter(live);
        const ready = active.filter(isReady).length;
        const wanted = rss.reduce((a, rs) => a + (rs.spec.replicas ?? 0), 0);
        const images = new Set(active.map((p) => p.spec.containers[0]!.image));
        if (images.size > 1) mixed++;
        if (active.length > replicas + maxSurge)
          violations.push(
            `${active.length} pods > ${replicas + maxSurge}: ${active.map((p) => p.metadata.name)}`,
          );
        if (wanted > replicas + maxSurge)
          violations.push(`ReplicaSets want ${wanted} > ${replicas + maxSurge}`);
        if (ready < replicas - maxUnavailable)
          violations.push(`${ready} Ready < ${replicas - maxUnavailable}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    try {
      await kubectl(['set', 'image', 'deployment/web', 'echo=echo:v2']);
      const rolled = await kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s']);
      assert.match(rolled, /deployment "web" successfully rolled out/);
    } finally {
      sampling = false;
      await sampler;
    }
    assert.deepEqual(violations, [], `${violations.length} violations in ${samples} samples`);
    assert.ok(mixed > 0, `the sampler saw the roll (old and new pods together) in ${samples} samples`);
    await readyPods('web', 3, 'echo:v2');
    const v2 = await getJson<{ metadata: { annotations: Record<string, string> } }>(['get', 'deploy', 'web']);
    assert.equal(v2.metadata.annotations['deployment.kubernetes.io/revision'], '2');

    await kubectl(['rollout', 'undo', 'deployment/web']);
    assert.match(
      await kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s']),
      /successfully rolled out/,
    );
    const back = await getJson<{
      metadata: { annotations: Record<string, string> };
      spec: { template: { spec: { containers: { image: string }[] } } };
    }>(['get', 'deploy', 'web']);
    assert.equal(back.metadata.annotations['deployment.kubernetes.io/revision'], '3');
    assert.equal(back.spec.template.spec.containers[0]!.image, 'echo:v1');
    await readyPods('web', 3, 'echo:v1');
    const rss = await apiList<ReplicaSet>(
      '/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3Dweb',
    );
    const current = rss.filter((rs) => (rs.spec.replicas ?? 0) > 0);
    assert.equal(current.length, 1, JSON.stringify(rss.map((r) => [r.metadata.name, r.spec.replicas])));
    assert.equal(current[0]!.spec.template.spec.containers[0]!.image, 'echo:v1');
    assert.equal(current[0]!.metadata.annotations?.['deployment.kubernetes.io/revision'], '3');

    assert.match(await kubectl(['scale', 'deploy', 'web', '--replicas=5']), /deployment.apps\/web scaled/);
    await readyPods('web', 5, 'echo:v1');
    const table = await kubectl(['get', 'deploy', 'web']);
    assert.match(table, /^web\s+5\/5\s+5\s+5\s/m, table);
  });

  it('places pods with a nodeSelector on the labelled node only, and reports an impossible one', async () => {
    assert.match(await kubectl(['label', 'node', 'wl-1', 'tier=gold']), /node\/wl-1 labeled/);
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify(deployment('gold', 3, 'echo:v1', { nodeSelector: { tier: 'gold' } })),
    );
    const gold = await readyPods('gold', 3);
    assert.deepEqual(
      gold.map((p) => p.spec.nodeName),
      ['wl-1', 'wl-1', 'wl-1'],
    );

    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify(deployment('nowhere', 1, 'echo:v1', { nodeSelector: { tier: 'platinum' } })),
    );
    const pod = await until('the nowhere pod', WAIT, async () => (await pods('nowhere'))[0]);
    const event = await until('a FailedScheduling event for the nowhere pod', WAIT, async () => {
      const evs = await getJson<{ items: EventObj[] }>(['get', 'events']);
      return evs.items.find(
        (e) => e.reason === 'FailedScheduling' && e.involvedObject.name === pod.metadata.name,
      );
    });
    assert.equal(event.type, 'Warning');
    assert.equal(event.involvedObject.kind, 'Pod');
    assert.match(
      event.message,
      /^0\/3 nodes are available: 3 node\(s\) didn't match Pod's node affinity\/selector/,
    );
    const still = (await pods('nowhere'))[0]!;
    assert.equal(still.spec.nodeName, undefined);
    assert.equal(still.status.phase, 'Pending');
    await kubectl(['delete', 'deploy', 'nowhere', 'gold']);
  });

  it("answers HTTP on each pod's IP and containerPort with its node's name", async () => {
    for (const p of await readyPods('web', 5)) {
      const body = await until(`the echo of ${p.metadata.name}`, WAIT, () => httpGet(p.status.podIP!, PORT));
      assert.match(body, new RegExp(`^\\s*node name: ${p.spec.nodeName}$`, 'm'), body);
      assert.match(body, new RegExp(`^\\s*pod name: ${p.metadata.name}$`, 'm'), body);
    }
  });

  it('keeps the Endpoints with the pods through a SIGKILL of the kubelets and their restart', async () => {
    await kubectl(['expose', 'deployment', 'web', '--port=80', `--target-port=${PORT}`]);
    const before = (await readyPods('web', 5)).map((p) => p.status.podIP!).sort();
    await until('the Endpoints of web with every pod IP', WAIT, async () => {
      const ep = await endpoints();
      return ep.ready.join() === before.join() && ep.notReady.length === 0;
    });

    await killed(nodes!, 'SIGKILL');
    nodes = undefined;
    const down = await until('3 nodes Ready=Unknown', GRACE_MS + WAIT, async () => {
      const ns = await apiList<NodeObj>('/api/v1/nodes');
      return ns.every((n) => nodeReady(n) === 'Unknown') ? ns : undefined;
    });
    const leases = new Map(
      (
        await apiList<{ metadata: { name: string }; spec: { renewTime: string } }>(
          '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases',
        )
      ).map((l) => [l.metadata.name, Date.parse(l.spec.renewTime)]),
    );
    for (const n of down) {
      const ready = n.status.conditions!.find((c) => c.type === 'Ready')!;
      assert.equal(ready.reason, 'NodeStatusUnknown');
      assert.equal(ready.message, 'Kubelet stopped posting node status.');
      // lastTransitionTime has whole seconds: allow one.
      const silentMs = Date.parse(ready.lastTransitionTime!) - leases.get(n.metadata.name)!;
      assert.ok(
        silentMs >= GRACE_MS - 1000,
        `${n.metadata.name} Unknown ${silentMs} ms after its last Lease renewal`,
      );
    }
    assert.match(await kubectl(['get', 'nodes']), /^wl-0\s+NotReady\s/m);
    const gone = await until('the pods in notReadyAddresses', WAIT, async () => {
      const ep = await endpoints();
      return ep.ready.length === 0 && ep.notReady.join() === before.join() ? ep : undefined;
    });
    assert.deepEqual(gone.notReady, before);

    nodes = await startNodes(srv);
    await until('3 nodes Ready again', WAIT, async () => {
      const ns = await apiList<NodeObj>('/api/v1/nodes');
      return ns.every((n) => nodeReady(n) === 'True');
    });
    const after = (await readyPods('web', 5)).map((p) => p.status.podIP!).sort();
    assert.deepEqual(after, before, 'the same pod IPs after the restart');
    await until('the pods back in the Endpoints addresses', WAIT, async () => {
      const ep = await endpoints();
      return ep.ready.join() === before.join() && ep.notReady.length === 0;
    });
    const body = await until('the echo after the restart', WAIT, () => httpGet(before[0]!, PORT));
    assert.match(body, /node name: wl-\d/);
  });
});
