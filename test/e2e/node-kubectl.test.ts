// `svcplane node` as a user runs it next to `svcplane up`, checked with kubectl: three simulated nodes
// register Ready; a pod bound to one of them gets an IP from that node's pod CIDR and becomes Running
// and Ready; --serve-pods answers HTTP on the pod IP with the echo; deleting a pod frees its IP;
// SIGKILL and a restart keep every pod's IP; bad input exits non-zero with one line; two processes
// started at the same moment allocate disjoint ranges from --cluster-cidr.
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseCidrRange } from '../../src/core/allocator/cidr.js';
import { cidrsOverlap } from '../../src/core/nodes/pod-cidrs.js';
import { startUp, type TestServer } from './testing/server.js';
import { kubectlFor } from './testing/kubectl.js';
import { until } from './testing/until.js';
import { httpGet } from './testing/http-get.js';
import { startNodeProcess } from './testing/node-process.js';

const BIN = path.resolve('bin/svcplane.js');
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-node-'));
after(() => rmSync(work, { recursive: true, force: true }));

// A 127/8 range of its own per run (needs no root), and per node a /30: two usable pod IPs, so the
// test can see an address freed and handed out again.
const OCTET = 100 + (process.pid % 150);
const POD_CIDR = `127.${OCTET}.0.0/24`;
const NODE1_IPS = [`127.${OCTET}.0.5`, `127.${OCTET}.0.6`];
const PORT = 18000 + (process.pid % 2000);

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, stdin?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, stdout, stderr });
    });
    if (stdin !== undefined) child.stdin!.end(stdin);
  });
}

const baseEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env['PATH'] ?? '', HOME: work });

/** kubectl against `srv`, with this file's HOME and discovery cache (testing/kubectl.ts). */
const kubectl = (srv: TestServer, args: string[], stdin?: string): Promise<string> =>
  kubectlFor(srv, work)(args, stdin);

/** A running `svcplane node` process, handed back once it printed its ready line. */
const startNodes = async (srv: Pick<TestServer, 'kubeconfig'>, args: string[]): Promise<ChildProcess> =>
  (await startNodeProcess(['--kubeconfig', srv.kubeconfig, ...args], baseEnv())).proc;

const stopped = (proc: ChildProcess, signal: NodeJS.Signals): Promise<number | null> =>
  new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve(proc.exitCode);
    proc.once('exit', (code) => resolve(code));
    proc.kill(signal);
  });

/**
 * A kubeconfig for `srv` through a TCP relay that holds the first `parties` connections until all of
 * them have arrived: processes started together then send their first request (the Node list) at the
 * same moment, which a shell's `a & b` only does when the machine is busy.
 */
async function gatedKubeconfig(
  srv: TestServer,
  parties: number,
  file: string,
): Promise<{ kubeconfig: string; close: () => void }> {
  const held: Socket[] = [];
  const open = new Set<Socket>();
  const relay = (client: Socket): void => {
    const upstream = connect(srv.port, '127.0.0.1');
    for (const s of [client, upstream]) {
      open.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        open.delete(s);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  };
  const server = createServer((client) => {
    if (held.length >= parties) return relay(client);
    client.pause();
    held.push(client);
    if (held.length === parties) held.forEach(relay);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const kubeconfig = path.join(work, file);
  writeFileSync(
    kubeconfig,
    readFileSync(srv.kubeconfig, 'utf8').replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${port}`),
  );
  return {
    kubeconfig,
    close: () => {
      server.close();
      for (const s of [...held, ...open]) s.destroy();
    },
  };
}

interface PodJson {
  metadata: { name: string };
  spec: { nodeName?: string };
  status: {
    phase?: string;
    podIP?: string;
    hostIP?: string;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    containerStatuses?: ContainerStatusJson[];
  };
}

interface ContainerStatusJson {
  ready: boolean;
  started: boolean;
  restartCount: number;
  state: { waiting?: { reason: string; message?: string }; running?: { startedAt: string } };
  lastState?: { terminated?: { reason: string; exitCode: number; message?: string } };
}

const getPod = async (srv: TestServer, name: string): Promise<PodJson | undefined> => {
  try {
    return JSON.parse(await kubectl(srv, ['get', 'pod', name, '-o', 'json'])) as PodJson;
  } catch {
    return undefined;
  }
};

const isReady = (p: PodJson | undefined): boolean =>
  p?.status.phase === 'Running' &&
  p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

const podManifest = (name: string, node: string): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'echo' } },
    spec: {
      nodeName: node,
      containers: [{ name: 'echo', image: 'echoserver', ports: [{ containerPort: PORT }] }],
    },
  });

const oneLine = (r: Run, pattern: RegExp): void => {
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line, got: ${r.stderr}`);
  assert.match(lines[0]!, pattern);
};

describe('svcplane node against svcplane up', () => {
  let srv: TestServer;
  let nodes: ChildProcess | undefined;
  const nodeArgs = ['--name', 'sim', '--count', '3', '--pod-cidr', POD_CIDR, '--node-cidr-mask-size', '30'];
  before(async () => {
    srv = await startUp();
    nodes = await startNodes(srv, [...nodeArgs, '--labels', 'zone=z1', '--serve-pods']);
  });
  after(async () => {
    if (nodes !== undefined) await stopped(nodes, 'SIGKILL');
    await srv?.destroy();
  });

  it('registers three Ready nodes with their pod CIDRs, labels and Leases', async () => {
    const table = await until('3 Ready nodes', 15_000, async () => {
      const t = await kubectl(srv, ['get', 'nodes', '-o', 'wide']);
      return (t.match(/^sim-\d\s+Ready\s/gm) ?? []).length === 3 ? t : undefined;
    });
    assert.match(table, /^sim-0\s+Ready\s+<none>\s+\S+\s+v1\.33\.0-svcplane/m);
    const list = JSON.parse(await kubectl(srv, ['get', 'nodes', '-l', 'zone=z1', '-o', 'json'])) as {
      items: {
        metadata: { name: string };
        spec: { podCIDRs: string[] };
        status: { allocatable: { pods: string } };
      }[];
    };
    assert.deepEqual(
      list.items.map((n) => [n.metadata.name, n.spec.podCIDRs.join(','), n.status.allocatable.pods]),
      [
        ['sim-0', `127.${OCTET}.0.0/30`, '110'],
        ['sim-1', `127.${OCTET}.0.4/30`, '110'],
        ['sim-2', `127.${OCTET}.0.8/30`, '110'],
      ],
    );
    const leases = await kubectl(srv, ['get', 'leases', '-n', 'kube-node-lease']);
    for (const n of ['sim-0', 'sim-1', 'sim-2']) assert.match(leases, new RegExp(`^${n}\\s+${n}\\s`, 'm'));
  });

  it('runs a pod bound to a node: an IP from its CIDR, Running and Ready, and the echo on the pod IP', async () => {
    await kubectl(srv, ['apply', '-f', '-'], podManifest('echo-1', 'sim-1'));
    const pod = await until('echo-1 Ready', 15_000, async () => {
      const p = await getPod(srv, 'echo-1');
      return isReady(p) ? p : undefined;
    });
    assert.equal(pod.status.podIP, NODE1_IPS[0]);
    assert.equal(pod.status.hostIP, '127.0.1.2');
    const wide = await kubectl(srv, ['get', 'pods', '-o', 'wide']);
    assert.match(
      wide,
      new RegExp(
        `^echo-1\\s+1/1\\s+Running\\s+0\\s+\\S+\\s+${NODE1_IPS[0]!.replaceAll('.', '\\.')}\\s+sim-1\\s`,
        'm',
      ),
    );

    const body = await until('the echo', 10_000, () => httpGet(pod.status.podIP!, PORT));
    assert.match(body, /^\s*node name: sim-1$/m);
    assert.match(body, /^\s*pod name: echo-1$/m);
    assert.match(body, /^\s*pod namespace: default$/m);
    assert.match(body, new RegExp(`^\\s*pod IP: ${NODE1_IPS[0]!.replaceAll('.', '\\.')}$`, 'm'));
    assert.match(body, /^\s*client address: 127\.\d+\.\d+\.\d+:\d+$/m);
  });

  it('frees a deleted pod IP: with the /30 full, a third pod waits and gets the freed address', async () => {
    await kubectl(srv, ['apply', '-f', '-'], podManifest('echo-2', 'sim-1'));
    const second = await until('echo-2 Ready', 15_000, async () => {
      const p = await getPod(srv, 'echo-2');
      return isReady(p) ? p : undefined;
    });
    assert.equal(second.status.podIP, NODE1_IPS[1]);
    await kubectl(srv, ['apply', '-f', '-'], podManifest('echo-3', 'sim-1'));
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal((await getPod(srv, 'echo-3'))?.status.podIP, undefined, 'no address is left for echo-3');

    await kubectl(srv, ['delete', 'pod', 'echo-1', '--wait=true', '--timeout=30s']);
    assert.equal(await getPod(srv, 'echo-1'), undefined);
    await assert.rejects(httpGet(NODE1_IPS[0]!, PORT), 'the listener of the deleted pod is closed');
    const third = await until('echo-3 Ready on the freed IP', 20_000, async () => {
      const p = await getPod(srv, 'echo-3');
      return isReady(p) ? p : undefined;
    });
    assert.equal(third.status.podIP, NODE1_IPS[0]);
  });

  it('keeps every pod IP across SIGKILL and a restart, and serves them again', async () => {
    await stopped(nodes!, 'SIGKILL');
    nodes = await startNodes(srv, [...nodeArgs, '--serve-pods']);
    const ips = Object.fromEntries(
      await Promise.all(
        ['echo-2', 'echo-3'].map(async (n) => [n, (await getPod(srv, n))?.status.podIP] as const),
      ),
    );
    assert.deepEqual(ips, { 'echo-2': NODE1_IPS[1], 'echo-3': NODE1_IPS[0] });
    const body = await until('the echo after the restart', 10_000, () => httpGet(NODE1_IPS[1]!, PORT));
    assert.match(body, /node name: sim-1/);
    // Nothing was handed out twice: a new pod on the full node gets no address.
    await kubectl(srv, ['apply', '-f', '-'], podManifest('echo-4', 'sim-1'));
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal((await getPod(srv, 'echo-4'))?.status.podIP, undefined);
    await kubectl(srv, ['delete', 'pod', 'echo-4', '--wait=false']);
  });

  it('reports a pod whose port is taken as CrashLoopBackOff, not Ready, and starts it once the port is free', async () => {
    // sim-2's first pod IP; someone else listens on it at the pod's port.
    const ip = `127.${OCTET}.0.9`;
    const squatter = createServer().listen({ host: ip, port: PORT });
    await new Promise((r) => squatter.once('listening', r));
    let freed = false;
    try {
      await kubectl(srv, ['apply', '-f', '-'], podManifest('crash-1', 'sim-2'));
      const pod = await until('crash-1 in CrashLoopBackOff', 15_000, async () => {
        const p = await getPod(srv, 'crash-1');
        return p?.status.containerStatuses?.[0]?.state.waiting?.reason === 'CrashLoopBackOff' ? p : undefined;
      });
      assert.equal(pod.status.podIP, ip);
      assert.equal(pod.status.phase, 'Running');
      const cs = pod.status.containerStatuses![0]!;
      // The first failure was restarted at once (restart 1); that one failed too: back-off 10 s.
      assert.deepEqual([cs.ready, cs.started, cs.restartCount], [false, false, 1]);
      assert.match(
        cs.state.waiting!.message ?? '',
        /^back-off 10s restarting failed container=echo pod=crash-1_default\(/,
      );
      assert.deepEqual([cs.lastState?.terminated?.reason, cs.lastState?.terminated?.exitCode], ['Error', 1]);
      assert.match(cs.lastState?.terminated?.message ?? '', /EADDRINUSE/);
      const ready = pod.status.conditions!.find((c) => c.type === 'Ready')!;
      assert.deepEqual(
        [ready.status, ready.reason, ready.message],
        ['False', 'ContainersNotReady', 'containers with unready status: [echo]'],
      );
      assert.match(
        await kubectl(srv, ['get', 'pod', 'crash-1']),
        /^crash-1\s+0\/1\s+CrashLoopBackOff\s+1 \(/m,
      );
      await new Promise((r) => squatter.close(r));
      freed = true;
      // The back-off (10 s) runs out, the container starts again and is ready: its second restart.
      const again = await until('crash-1 Ready after its restart', 30_000, async () => {
        const q = await getPod(srv, 'crash-1');
        return isReady(q) ? q : undefined;
      });
      const cs2 = again.status.containerStatuses![0]!;
      assert.equal(cs2.restartCount, 2);
      assert.ok(cs2.state.running !== undefined);
      assert.equal(cs2.lastState?.terminated?.reason, 'Error', 'the failed run stays as lastState');
      assert.match(await httpGet(ip, PORT), /pod name: crash-1/);
      assert.match(await kubectl(srv, ['get', 'pod', 'crash-1']), /^crash-1\s+1\/1\s+Running\s+2 \(/m);
    } finally {
      if (!freed) await new Promise((r) => squatter.close(r));
      await kubectl(srv, ['delete', 'pod', 'crash-1', '--wait=false']);
    }
  });

  it('kubectl drain empties a node (kubectl sends its DELETEs with protobuf DeleteOptions)', async () => {
    const deployment = JSON.stringify({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'drainme' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'drainme' } },
        template: {
          metadata: { labels: { app: 'drainme' } },
          spec: {
            nodeSelector: { 'kubernetes.io/hostname': 'sim-0' },
            containers: [{ name: 'echo', image: 'echoserver', ports: [{ containerPort: PORT }] }],
          },
        },
      },
    });
    await kubectl(srv, ['apply', '-f', '-'], deployment);
    const running = async (): Promise<string[]> =>
      (
        await kubectl(srv, [
          'get',
          'pods',
          '-l',
          'app=drainme',
          '--field-selector',
          'status.phase=Running',
          '-o',
          'name',
        ])
      )
        .split('\n')
        .filter((l) => l !== '');
    const before = await until('2 drainme pods running on sim-0', 20_000, async () => {
      const names = await running();
      return names.length === 2 ? names : undefined;
    });
    try {
      const out = await kubectl(srv, ['drain', 'sim-0', '--ignore-daemonsets', '--timeout=60s']);
      assert.match(out, /node\/sim-0 drained/);
      const left = await kubectl(srv, ['get', 'pods', '-l', 'app=drainme', '-o', 'name']);
      for (const name of before) assert.ok(!left.includes(name), `${name} is gone after the drain`);
      assert.match(await kubectl(srv, ['get', 'node', 'sim-0']), /Ready,SchedulingDisabled/);
    } finally {
      await kubectl(srv, ['uncordon', 'sim-0']);
      await kubectl(srv, ['delete', 'deployment', 'drainme', '--wait=false']);
    }
  });

  it('refuses a name held by a live node, an overlapping CIDR and an unreachable API server: one line, nothing registered', async () => {
    const cmd = (...args: string[]): Promise<Run> =>
      run(process.execPath, [BIN, 'node', '--kubeconfig', srv.kubeconfig, ...args], baseEnv());
    const taken = await cmd('--name', 'sim-0', '--pod-cidr', '127.250.0.0/24');
    assert.equal(taken.code, 1);
    oneLine(taken, /^svcplane: node "sim-0" is taken by a live node/);

    const overlap = await cmd('--name', 'other', '--pod-cidr', `127.${OCTET}.0.0/29`);
    assert.equal(overlap.code, 1);
    oneLine(
      overlap,
      /^svcplane: pod CIDR 127\.\d+\.0\.0\/29 of node "other" overlaps 127\.\d+\.0\.0\/30 of node "sim-0"/,
    );

    const badConfig = path.join(work, 'unreachable.kubeconfig');
    writeFileSync(badConfig, readFileSync(srv.kubeconfig, 'utf8').replace(/127\.0\.0\.1:\d+/, '127.0.0.1:1'));
    const down = await run(
      process.execPath,
      [BIN, 'node', '--kubeconfig', badConfig, '--name', 'other'],
      baseEnv(),
    );
    assert.equal(down.code, 1);
    oneLine(down, /^svcplane: cannot register node "other": .*ECONNREFUSED/);

    const badFlag = await cmd('--name', 'x', '--pod-cidr', '10.0.0.0/33');
    assert.equal(badFlag.code, 2);
    oneLine(badFlag, /^svcplane: --pod-cidr: /);

    const names = await kubectl(srv, ['get', 'nodes', '-o', 'name']);
    assert.doesNotMatch(names, /node\/other/);
  });

  it('gives two processes started at the same moment disjoint pod CIDRs from --cluster-cidr', async () => {
    const racers: ChildProcess[] = [];
    const gates: { close: () => void }[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        // Both list the Nodes before either created its own, as `a & b` in a shell on a busy machine.
        const gate = await gatedKubeconfig(srv, 2, `race${round}.kubeconfig`);
        gates.push(gate);
        racers.push(
          ...(await Promise.all(
            [`race${round}a`, `race${round}b`].map((name) =>
              startNodes({ kubeconfig: gate.kubeconfig }, ['--name', name, '--count', '3']),
            ),
          )),
        );
      }
      const list = JSON.parse(await kubectl(srv, ['get', 'nodes', '-o', 'json'])) as {
        items: { metadata: { name: string }; spec: { podCIDRs?: string[] } }[];
      };
      const cidrs = list.items.flatMap((n) =>
        (n.spec.podCIDRs ?? []).map((text) => ({ node: n.metadata.name, text, c: parseCidrRange(text)! })),
      );
      assert.equal(cidrs.filter((x) => x.node.startsWith('race')).length, 18);
      for (let i = 0; i < cidrs.length; i++) {
        for (const other of cidrs.slice(i + 1)) {
          const a = cidrs[i]!;
          assert.ok(
            !cidrsOverlap(a.c, other.c),
            `${a.node} (${a.text}) and ${other.node} (${other.text}) overlap`,
          );
        }
      }
      for (const p of racers) assert.equal(p.exitCode, null, 'every racer is still running');
    } finally {
      await Promise.all(racers.map((p) => stopped(p, 'SIGKILL')));
      for (const g of gates) g.close();
    }
  });
});
