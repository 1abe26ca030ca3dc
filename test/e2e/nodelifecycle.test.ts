// The node lifecycle and pod GC controllers as `svcplane controller-manager` runs them against
// `svcplane apiserver`, with short periods: the test plays the kubelets (it renews their Leases and
// posts their Ready condition). A node whose Lease stops turns Unknown with the unreachable taints,
// its pods turn not ready and leave the Endpoints; heartbeats again remove the taints; pods of a
// deleted (or never existing) node are garbage-collected; with --enable-pod-eviction a pod that
// tolerates the unreachable taint for 1 s is evicted and one with the default 300 s is not.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { renderKubeconfig } from '../../src/apiserver/auth/kubeconfig.js';
import { freePort } from '../../src/storage/etcd/testing/etcd-server.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const TOKEN = 'nodelifecycle-e2e-token';
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-nlc-'));
after(() => rmSync(work, { recursive: true, force: true }));

const FAST = [
  '--node-monitor-period',
  '300ms',
  '--node-monitor-grace-period',
  // Renewals every 500 ms: six seconds of failed or slow PATCHes on a loaded machine before a healthy
  // node could flap.
  '6s',
  '--node-startup-grace-period',
  '3s',
  '--podgc-period',
  '300ms',
  '--podgc-orphan-quarantine',
  '1s',
];

interface Cluster {
  readonly srv: TestServer;
  readonly cm: ChildProcess;
  readonly log: () => string;
  close(): Promise<void>;
}

async function cluster(name: string, cmFlags: string[]): Promise<Cluster> {
  const tokenFile = path.join(work, `${name}-tokens.csv`);
  writeFileSync(tokenFile, `${TOKEN},admin,admin,"system:masters"\n`);
  const port = await freePort();
  const srv: TestServer = {
    ...(await startUp({
      command: 'apiserver',
      dataDir: path.join(work, name),
      args: ['--token-auth-file', tokenFile, '--secure-port', String(port)],
    })),
    token: TOKEN,
  };
  const kubeconfig = path.join(work, `${name}-kubeconfig`);
  writeFileSync(
    kubeconfig,
    renderKubeconfig({ server: srv.url, caPem: srv.ca, user: 'admin', token: TOKEN }),
  );
  const cm = spawn(process.execPath, [BIN, 'controller-manager', '--kubeconfig', kubeconfig, ...cmFlags], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  cm.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  cm.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  await until('the controller manager to start', 20_000, () =>
    log.includes('running (') ? true : undefined,
  );
  return {
    srv,
    cm,
    log: () => log,
    async close() {
      cm.kill('SIGTERM');
      await new Promise((r) => (cm.exitCode !== null ? r(null) : cm.once('exit', r)));
      await srv.stop();
    },
  };
}

const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/** Plays the kubelets of `names`: creates their Nodes and Leases, renews the Leases every 500 ms. */
class Kubelets {
  private readonly renewing = new Set<string>();
  private readonly timer: NodeJS.Timeout;
  constructor(private readonly srv: TestServer) {
    this.timer = setInterval(() => void this.renewAll(), 500);
  }
  async register(name: string, zone?: string): Promise<void> {
    const r = await call(this.srv, 'POST', '/api/v1/nodes', {
      body: {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name, labels: zone === undefined ? {} : { 'topology.kubernetes.io/zone': zone } },
      },
    });
    assert.equal(r.status, 201, r.text);
    await this.postReady(name);
    const l = await call(this.srv, 'POST', '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases', {
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name },
        spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: new Date().toISOString() },
      },
    });
    assert.equal(l.status, 201, l.text);
    this.renewing.add(name);
  }
  /** What a kubelet posts: Ready True with a fresh heartbeat. */
  async postReady(name: string): Promise<void> {
    const r = await call(this.srv, 'PATCH', `/api/v1/nodes/${name}/status`, {
      contentType: 'application/strategic-merge-patch+json',
      body: {
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'KubeletReady',
              message: 'kubelet is posting ready status',
              lastHeartbeatTime: now(),
              lastTransitionTime: now(),
            },
          ],
        },
      },
    });
    assert.equal(r.status, 200, r.text);
  }
  stop(name: string): void {
    this.renewing.delete(name);
  }
  resume(name: string): void {
    this.renewing.add(name);
  }
  private async renewAll(): Promise<void> {
    for (const name of this.renewing) {
      await call(
        this.srv,
        'PATCH',
        `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`,
        {
          contentType: 'application/merge-patch+json',
          body: { spec: { renewTime: new Date().toISOString() } },
        },
      ).catch(() => undefined);
    }
  }
  close(): void {
    clearInterval(this.timer);
  }
}

interface NodeView {
  spec?: { taints?: { key: string; effect: string; timeAdded?: string }[] };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}
const getNode = async (srv: TestServer, name: string): Promise<NodeView> =>
  (await call(srv, 'GET', `/api/v1/nodes/${name}`)).json<NodeView>();
const readyOf = (n: NodeView): string | undefined =>
  n.status?.conditions?.find((c) => c.type === 'Ready')?.status;
const taintKeys = (n: NodeView): string[] => (n.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`).sort();

async function runPod(
  srv: TestServer,
  name: string,
  node: string,
  ip: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  const r = await call(srv, 'POST', '/api/v1/namespaces/default/pods', {
    body: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'web' } },
      spec: {
        nodeName: node,
        containers: [{ name: 'c', image: 'x', ports: [{ containerPort: 80 }] }],
        ...extra,
      },
    },
  });
  assert.equal(r.status, 201, r.text);
  await setPodReady(srv, name, ip);
}

async function setPodReady(srv: TestServer, name: string, ip: string): Promise<void> {
  const r = await call(srv, 'PATCH', `/api/v1/namespaces/default/pods/${name}/status`, {
    contentType: 'application/merge-patch+json',
    body: {
      status: {
        phase: 'Running',
        podIP: ip,
        podIPs: [{ ip }],
        conditions: [
          { type: 'ContainersReady', status: 'True', lastTransitionTime: now() },
          { type: 'Ready', status: 'True', lastTransitionTime: now() },
        ],
      },
    },
  });
  assert.equal(r.status, 200, r.text);
}

interface PodView {
  metadata: { deletionTimestamp?: string };
  status?: { phase?: string; conditions?: { type: string; status: string; reason?: string }[] };
}
const getPod = async (srv: TestServer, name: string): Promise<{ code: number; pod: PodView }> => {
  const r = await call(srv, 'GET', `/api/v1/namespaces/default/pods/${name}`);
  return { code: r.status, pod: r.json<PodView>() };
};
const podCondition = (p: PodView, type: string): string | undefined =>
  p.status?.conditions?.find((c) => c.type === type)?.status;

const endpointIPs = async (srv: TestServer): Promise<{ ready: string[]; notReady: string[] }> => {
  const r = await call(srv, 'GET', '/api/v1/namespaces/default/endpoints/web');
  type Subset = { addresses?: { ip: string }[]; notReadyAddresses?: { ip: string }[] };
  const subsets = r.status === 200 ? (r.json<{ subsets?: Subset[] }>().subsets ?? []) : [];
  return {
    ready: subsets.flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort(),
    notReady: subsets.flatMap((s) => (s.notReadyAddresses ?? []).map((a) => a.ip)).sort(),
  };
};

describe('node lifecycle and pod GC', () => {
  it('a silent node turns Unknown and tainted, its pods leave the Endpoints; heartbeats undo the taints; pods of gone nodes are collected', async () => {
    const c = await cluster('main', ['--controllers', 'endpoints,nodelifecycle,podgc', ...FAST]);
    const kubelets = new Kubelets(c.srv);
    const fail = (err: unknown): never => {
      throw new Error(`${String(err)}\n--- controller-manager log ---\n${c.log().slice(-6000)}`);
    };
    try {
      const srv = c.srv;
      await kubelets.register('edge-1');
      await kubelets.register('edge-2');
      const svc = await call(srv, 'POST', '/api/v1/namespaces/default/services', {
        body: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web' },
          spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
        },
      });
      assert.equal(svc.status, 201, svc.text);
      await runPod(srv, 'p1', 'edge-1', '10.1.0.1');
      await runPod(srv, 'p2', 'edge-2', '10.1.0.2');
      await until('both pods in the Endpoints', 10_000, async () =>
        JSON.stringify((await endpointIPs(srv)).ready) === '["10.1.0.1","10.1.0.2"]' ? true : undefined,
      ).catch(fail);

      // Renewing Leases keep a node Ready well past the grace period, untainted.
      await new Promise((r) => setTimeout(r, 7_500));
      for (const name of ['edge-1', 'edge-2']) {
        const n = await getNode(srv, name);
        assert.equal(readyOf(n), 'True', name);
        assert.deepEqual(taintKeys(n), [], name);
      }

      // edge-1's kubelet goes silent.
      kubelets.stop('edge-1');
      const stoppedAt = Date.now();
      const unknown = await until('edge-1 Unknown and tainted', 20_000, async () => {
        const n = await getNode(srv, 'edge-1');
        const keys = taintKeys(n);
        return readyOf(n) === 'Unknown' &&
          keys.includes('node.kubernetes.io/unreachable:NoExecute') &&
          keys.includes('node.kubernetes.io/unreachable:NoSchedule')
          ? n
          : undefined;
      }).catch(fail);
      assert.ok(Date.now() - stoppedAt >= 5_500, 'not before the grace period');
      const ready = unknown.status!.conditions!.find((x) => x.type === 'Ready')!;
      assert.equal(ready.reason, 'NodeStatusUnknown');
      assert.equal(ready.message, 'Kubelet stopped posting node status.');
      assert.ok(
        unknown.spec!.taints!.find((t) => t.effect === 'NoExecute')!.timeAdded,
        'the NoExecute taint has timeAdded',
      );
      assert.equal(readyOf(await getNode(srv, 'edge-2')), 'True', 'the renewing node is untouched');

      // Its pod turns not ready and leaves the Endpoints' ready addresses.
      await until('p1 not ready in the Endpoints', 10_000, async () => {
        const ips = await endpointIPs(srv);
        return JSON.stringify(ips) === '{"ready":["10.1.0.2"],"notReady":["10.1.0.1"]}' ? true : undefined;
      }).catch(fail);
      const p1 = (await getPod(srv, 'p1')).pod;
      assert.equal(podCondition(p1, 'Ready'), 'False');
      assert.equal(podCondition(p1, 'ContainersReady'), 'True', 'only Ready is changed');
      // No eviction without --enable-pod-eviction.
      await new Promise((r) => setTimeout(r, 1_500));
      const still = await getPod(srv, 'p1');
      assert.equal(still.code, 200);
      assert.equal(still.pod.metadata.deletionTimestamp, undefined);

      // The kubelet comes back: Lease renewed, Ready posted. The taints go; the pod's readiness is the
      // kubelet's to restore (the controller does not touch it).
      kubelets.resume('edge-1');
      await kubelets.postReady('edge-1');
      await until('edge-1 untainted', 10_000, async () => {
        const n = await getNode(srv, 'edge-1');
        return readyOf(n) === 'True' && taintKeys(n).length === 0 ? true : undefined;
      }).catch(fail);
      assert.equal(podCondition((await getPod(srv, 'p1')).pod, 'Ready'), 'False');
      await setPodReady(srv, 'p1', '10.1.0.1');
      await until('p1 back in the Endpoints', 10_000, async () =>
        JSON.stringify((await endpointIPs(srv)).ready) === '["10.1.0.1","10.1.0.2"]' ? true : undefined,
      ).catch(fail);

      // Pod GC: a pod bound to a node that never existed, and the pod of a node that is deleted.
      await runPod(srv, 'ghost', 'no-such-node', '10.1.0.9');
      kubelets.stop('edge-2');
      const del = await call(srv, 'DELETE', '/api/v1/nodes/edge-2');
      assert.equal(del.status, 200, del.text);
      for (const name of ['ghost', 'p2']) {
        await until(`${name} garbage-collected`, 15_000, async () =>
          (await getPod(srv, name)).code === 404 ? true : undefined,
        ).catch(fail);
      }
      assert.equal((await getPod(srv, 'p1')).code, 200, 'a pod of a live node stays');
      assert.match(c.log(), /pod garbage-collected.*"why":"orphaned"/);
    } finally {
      kubelets.close();
      await c.close();
    }
  });

  it('a node that never heartbeats is marked after the startup grace period', async () => {
    const c = await cluster('bare', ['--controllers', 'nodelifecycle', ...FAST]);
    try {
      const r = await call(c.srv, 'POST', '/api/v1/nodes', {
        body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'by-hand' } },
      });
      assert.equal(r.status, 201, r.text);
      const n = await until('by-hand marked', 15_000, async () => {
        const got = await getNode(c.srv, 'by-hand');
        return readyOf(got) === 'Unknown' ? got : undefined;
      });
      assert.deepEqual(
        n.status!.conditions!.map((x) => [x.type, x.status, x.reason]),
        ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((t) => [
          t,
          'Unknown',
          'NodeStatusNeverUpdated',
        ]),
      );
      await until('the unreachable NoSchedule taint', 10_000, async () =>
        taintKeys(await getNode(c.srv, 'by-hand')).includes('node.kubernetes.io/unreachable:NoSchedule')
          ? true
          : undefined,
      );
      // The only node of the only zone is down: the zone is fully disrupted, every zone is, and no
      // NoExecute taint is added (upstream's rule against evicting a whole cluster).
      await new Promise((res) => setTimeout(res, 1_000));
      assert.ok(!taintKeys(await getNode(c.srv, 'by-hand')).some((k) => k.endsWith(':NoExecute')));
    } finally {
      await c.close();
    }
  });

  it('with --enable-pod-eviction a pod tolerating the taint for 1 s is evicted; the default 300 s keeps it', async () => {
    const c = await cluster('evict', ['--controllers', 'nodelifecycle', '--enable-pod-eviction', ...FAST]);
    const kubelets = new Kubelets(c.srv);
    try {
      await kubelets.register('e-1');
      await kubelets.register('e-2');
      await runPod(c.srv, 'short', 'e-1', '10.2.0.1', {
        tolerations: [
          {
            key: 'node.kubernetes.io/unreachable',
            operator: 'Exists',
            effect: 'NoExecute',
            tolerationSeconds: 1,
          },
        ],
      });
      await runPod(c.srv, 'long', 'e-1', '10.2.0.2');
      kubelets.stop('e-1');
      const evicted = await until('short evicted', 20_000, async () => {
        const { code, pod } = await getPod(c.srv, 'short');
        return code === 404 || pod.metadata.deletionTimestamp !== undefined ? { code, pod } : undefined;
      }).catch((err: unknown) => {
        throw new Error(`${String(err)}\n${c.log().slice(-6000)}`);
      });
      if (evicted.code === 200) {
        assert.equal(
          evicted.pod.status?.conditions?.find((x) => x.type === 'DisruptionTarget')?.reason,
          'DeletionByTaintManager',
        );
      }
      const long = await getPod(c.srv, 'long');
      assert.equal(long.code, 200);
      assert.equal(long.pod.metadata.deletionTimestamp, undefined);
    } finally {
      kubelets.close();
      await c.close();
    }
  });
});
