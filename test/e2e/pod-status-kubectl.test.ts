// `svcplane pod-status` as a user runs it: the compiled bin against `svcplane up`, checked with kubectl.
// A pod made ready shows up in its Service's Endpoints as ready; --ready=false moves it to
// notReadyAddresses. Bad input exits 2 with one line; a missing pod exits 1 with the API's message.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startUp, type TestServer } from './testing/server.js';
import { KUBECTL } from './testing/kubectl.js';
import { until } from './testing/until.js';

const BIN = path.resolve('bin/svcplane.js');
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-podstatus-'));
after(() => rmSync(work, { recursive: true, force: true }));

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

/** Only PATH and HOME from the environment: no stray KUBECONFIG, a HOME without ~/.kube. */
const baseEnv = (): NodeJS.ProcessEnv => ({ PATH: process.env['PATH'] ?? '', HOME: work });

async function kubectl(srv: TestServer, args: string[], stdin?: string): Promise<string> {
  const r = await run(
    KUBECTL,
    [`--cache-dir=${path.join(work, 'cache')}`, ...args],
    { ...baseEnv(), KUBECONFIG: srv.kubeconfig },
    stdin,
  );
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** `svcplane pod-status ARGS` with the server's kubeconfig in $KUBECONFIG (as a user would have it). */
const podStatus = (srv: TestServer, ...args: string[]): Promise<Run> =>
  run(process.execPath, [BIN, 'pod-status', ...args], { ...baseEnv(), KUBECONFIG: srv.kubeconfig });

const oneLine = (r: Run, pattern: RegExp): void => {
  const lines = r.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line, got: ${r.stderr}`);
  assert.match(lines[0]!, pattern);
};

interface PodJson {
  status: {
    phase?: string;
    podIP?: string;
    podIPs?: { ip: string }[];
    hostIP?: string;
    conditions?: { type: string; status: string; lastTransitionTime?: string }[];
  };
}

interface Endpoints {
  subsets?: {
    addresses?: { ip: string }[];
    notReadyAddresses?: { ip: string }[];
    ports?: { port: number }[];
  }[];
}

const ipsOf = (ep: Endpoints, which: 'addresses' | 'notReadyAddresses'): string[] =>
  (ep.subsets ?? []).flatMap((s) => (s[which] ?? []).map((a) => a.ip)).sort();

async function endpoints(srv: TestServer, name: string): Promise<Endpoints | undefined> {
  try {
    return JSON.parse(await kubectl(srv, ['get', 'endpoints', name, '-o', 'json'])) as Endpoints;
  } catch {
    return undefined;
  }
}

describe('svcplane pod-status against svcplane up', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startUp();
    const docs = [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web' },
        spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http' }] },
      },
      ...['web-1', 'web-2'].map((name) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels: { app: 'web' } },
        spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }] },
      })),
    ];
    await kubectl(srv, ['apply', '-f', '-'], docs.map((d) => JSON.stringify(d)).join('\n'));
  });
  after(async () => srv?.destroy());

  it('makes a pod Running and ready: kubectl sees the status, the Endpoints list the IP as ready', async () => {
    const r = await podStatus(srv, 'web-1', '--ip', '10.244.1.5', '--host-ip', '192.168.1.10');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^pod\/web-1 status set: Running, ready, podIPs 10\.244\.1\.5/);

    const pod = JSON.parse(await kubectl(srv, ['get', 'pod', 'web-1', '-o', 'json'])) as PodJson;
    assert.equal(pod.status.phase, 'Running');
    assert.equal(pod.status.podIP, '10.244.1.5');
    assert.deepEqual(pod.status.podIPs, [{ ip: '10.244.1.5' }]);
    assert.equal(pod.status.hostIP, '192.168.1.10');
    const conds = Object.fromEntries((pod.status.conditions ?? []).map((c) => [c.type, c.status]));
    assert.deepEqual(conds, {
      PodReadyToStartContainers: 'True',
      Initialized: 'True',
      Ready: 'True',
      ContainersReady: 'True',
      PodScheduled: 'True',
    });
    assert.match(await kubectl(srv, ['get', 'pod', 'web-1']), /^web-1\s+1\/1\s+Running\s+0\s/m);

    const ep = await until('web-1 in the Endpoints', 10_000, async () => {
      const e = await endpoints(srv, 'web');
      return e !== undefined && ipsOf(e, 'addresses').length === 1 ? e : undefined;
    });
    assert.deepEqual(ipsOf(ep, 'addresses'), ['10.244.1.5']);
    assert.deepEqual(ipsOf(ep, 'notReadyAddresses'), []);
    assert.equal(ep.subsets?.[0]?.ports?.[0]?.port, 8080);
  });

  it('--ready=false moves the pod to notReadyAddresses and keeps its IP; -n and --kubeconfig work too', async () => {
    const r = await run(
      process.execPath,
      [BIN, 'pod-status', '-n', 'default', '--kubeconfig', srv.kubeconfig, 'pod/web-1', '--ready=false'],
      baseEnv(),
    );
    assert.equal(r.code, 0, r.stderr);
    const ep = await until('web-1 not ready', 10_000, async () => {
      const e = await endpoints(srv, 'web');
      return e !== undefined && ipsOf(e, 'notReadyAddresses').length === 1 ? e : undefined;
    });
    assert.deepEqual(ipsOf(ep, 'notReadyAddresses'), ['10.244.1.5']);
    assert.deepEqual(ipsOf(ep, 'addresses'), []);
    const pod = JSON.parse(await kubectl(srv, ['get', 'pod', 'web-1', '-o', 'json'])) as PodJson;
    assert.equal(pod.status.podIP, '10.244.1.5');
    assert.equal(pod.status.conditions?.find((c) => c.type === 'Ready')?.status, 'False');
    assert.match(await kubectl(srv, ['get', 'pod', 'web-1']), /^web-1\s+0\/1\s+Running\s/m);
  });

  it('a dual-stack pod: both IPs are stored, the IPv4 Service publishes the IPv4 one', async () => {
    const r = await podStatus(srv, 'web-2', '--ip', '10.244.1.6,fd00::6');
    assert.equal(r.code, 0, r.stderr);
    const pod = JSON.parse(await kubectl(srv, ['get', 'pod', 'web-2', '-o', 'json'])) as PodJson;
    assert.deepEqual(pod.status.podIPs, [{ ip: '10.244.1.6' }, { ip: 'fd00::6' }]);
    const ep = await until('web-2 ready', 10_000, async () => {
      const e = await endpoints(srv, 'web');
      return e !== undefined && ipsOf(e, 'addresses').length === 1 ? e : undefined;
    });
    assert.deepEqual(ipsOf(ep, 'addresses'), ['10.244.1.6'], 'the IPv4 Service publishes the IPv4 address');
  });

  it('bad input exits 2 with one line; a missing pod exits 1 with the API message', async () => {
    const rows: [string[], number, RegExp][] = [
      [['web-1', '--ip', '10.0.0.300'], 2, /^svcplane: --ip: "10\.0\.0\.300" is not an IP address$/],
      [
        ['web-1', '--ip', '10.0.0.1,10.0.0.2'],
        2,
        /^svcplane: --ip: two IP addresses must be one IPv4 and one IPv6/,
      ],
      [['web-1', '--ip', ''], 2, /^svcplane: --ip: no IP address given$/],
      [['web-1', '--host-ip', 'node-a'], 2, /^svcplane: --host-ip: "node-a" is not an IP address$/],
      [
        ['web-1', '--phase', 'Sleeping'],
        2,
        /^svcplane: invalid value "Sleeping" for --phase: want one of Pending, Running, Succeeded, Failed$/,
      ],
      [['web-1', '--ready=yes'], 2, /^svcplane: invalid value "yes" for --ready: want true or false$/],
      [['web-1', '--phase', 'Failed', '--ready=true'], 2, /^svcplane: --ready=true needs --phase Running/],
      [['--ip', '10.0.0.1'], 2, /^svcplane: a pod name is required/],
      [['web-1', 'web-2'], 2, /^svcplane: unexpected arguments: web-2$/],
      [['web-1', '--frobnicate'], 2, /^svcplane: Unknown option '--frobnicate'/],
      [['web-1', '--kubeconfig', path.join(work, 'nope')], 2, /^svcplane: --kubeconfig: .* does not exist$/],
      [['nope', '--ip', '10.0.0.1'], 1, /^svcplane: pods "nope" not found$/],
      [['web-1', '-n', 'nosuchns', '--ip', '10.0.0.1'], 1, /^svcplane: pods "web-1" not found$/],
    ];
    // Each run is mostly node loading the CLI, so the rows run side by side.
    const results = await Promise.all(rows.map(([args]) => podStatus(srv, ...args)));
    for (const [i, [args, code, pattern]] of rows.entries()) {
      const r = results[i]!;
      assert.equal(r.code, code, `${args.join(' ')}: ${r.stderr}`);
      oneLine(r, pattern);
      assert.equal(r.stdout, '', args.join(' '));
    }
    // A pod without an IP needs --ip to become Running.
    await kubectl(srv, ['run', 'bare', '--image=nginx']);
    const bare = await podStatus(srv, 'bare');
    assert.equal(bare.code, 2);
    oneLine(bare, /^svcplane: --ip is required: pod default\/bare has no IP yet$/);
  });

  it('--help exits 0 and is listed in svcplane --help', async () => {
    const help = await run(process.execPath, [BIN, 'pod-status', '--help'], baseEnv());
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Usage: svcplane pod-status POD/);
    const top = await run(process.execPath, [BIN, '--help'], baseEnv());
    assert.match(top.stdout, /^ {2}pod-status\s/m);
  });
});
