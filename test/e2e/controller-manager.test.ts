// `svcplane controller-manager` as a separate process against `svcplane apiserver` (which runs no
// controllers itself): two copies with --leader-elect, only the leader works; kill it and the other
// takes over, and the Endpoints and EndpointSlices keep following the pods. Then the apiserver restarts
// underneath the controller manager, which relists or resumes and converges; deleting the Service then
// removes its slices (garbage collector) and its Endpoints.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { renderKubeconfig } from '../../src/apiserver/auth/kubeconfig.js';
import { freePort } from '../../src/storage/etcd/testing/etcd-server.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const TOKEN = 'cm-e2e-admin-token';
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-cm-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface Proc {
  readonly proc: ChildProcess;
  log: string;
}

function controllerManager(kubeconfig: string, extra: string[] = []): Proc {
  const proc = spawn(process.execPath, [BIN, 'controller-manager', '--kubeconfig', kubeconfig, ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const p: Proc = { proc, log: '' };
  proc.stdout!.on('data', (d: Buffer) => (p.log += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (p.log += d.toString()));
  return p;
}

const readyIPs = async (srv: TestServer, name: string): Promise<string[] | undefined> => {
  const r = await call(srv, 'GET', `/api/v1/namespaces/default/endpoints/${name}`);
  if (r.status !== 200) return undefined;
  return (r.json<{ subsets?: { addresses?: { ip: string }[] }[] }>().subsets ?? [])
    .flatMap((s) => (s.addresses ?? []).map((a) => a.ip))
    .sort();
};

/** Ready addresses over the Service's managed EndpointSlices (every slice, so duplicates would show). */
const readySliceIPs = async (srv: TestServer, name: string): Promise<string[]> => {
  const r = await call(
    srv,
    'GET',
    `/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io/service-name=${name},endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io`,
  );
  assert.equal(r.status, 200, r.text);
  type Slice = { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[] };
  return r
    .json<{ items: Slice[] }>()
    .items.flatMap((s) => (s.endpoints ?? []).filter((e) => e.conditions?.ready === true))
    .flatMap((e) => e.addresses)
    .sort();
};

/** Endpoints and EndpointSlices both show exactly `ips` as ready. */
const bothShow = async (srv: TestServer, ips: string[]): Promise<true | undefined> =>
  JSON.stringify(await readyIPs(srv, 'web')) === JSON.stringify(ips) &&
  JSON.stringify(await readySliceIPs(srv, 'web')) === JSON.stringify(ips)
    ? true
    : undefined;

const metricsURL = (p: Proc): string | undefined => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(p.log)?.[1];

async function setReady(srv: TestServer, name: string, ip: string, ready: boolean): Promise<void> {
  const r = await call(srv, 'PATCH', `/api/v1/namespaces/default/pods/${name}/status`, {
    contentType: 'application/merge-patch+json',
    body: {
      status: {
        phase: 'Running',
        podIP: ip,
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      },
    },
  });
  assert.equal(r.status, 200, r.text);
}

describe('svcplane controller-manager', () => {
  it('two copies with --leader-elect: one works; kill it and the other takes over', async () => {
    const tokenFile = path.join(work, 'tokens.csv');
    writeFileSync(tokenFile, `${TOKEN},admin,admin,"system:masters"\n`);
    const dataDir = path.join(work, 'api');
    const port = await freePort();
    const args = ['--token-auth-file', tokenFile, '--secure-port', String(port)];
    let srv: TestServer = { ...(await startUp({ command: 'apiserver', dataDir, args })), token: TOKEN };
    const kubeconfig = path.join(work, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      renderKubeconfig({ server: srv.url, caPem: srv.ca, user: 'admin', token: TOKEN }),
    );

    const flags = ['--leader-elect', '--metrics-bind-address', '127.0.0.1:0'];
    const a = controllerManager(kubeconfig, flags);
    const b = controllerManager(kubeconfig, flags);
    try {
      const leader = await until('a leader', 20_000, () =>
        a.log.includes('became the leader') ? a : b.log.includes('became the leader') ? b : undefined,
      );
      const follower = leader === a ? b : a;
      assert.ok(!follower.log.includes('became the leader'), 'only one leads');
      // Only the leader runs the controllers: its /readyz says so, the follower's does not.
      const readyz = async (p: Proc): Promise<number> => {
        const url = await until('the metrics address', 10_000, () => metricsURL(p));
        return (await fetch(`${url}/readyz`)).status;
      };
      await until('the leader ready', 10_000, async () =>
        (await readyz(leader)) === 200 ? true : undefined,
      );
      assert.equal(await readyz(follower), 503);

      await call(srv, 'POST', '/api/v1/namespaces/default/services', {
        body: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web' },
          spec: { selector: { app: 'web' }, ports: [{ port: 80 }] },
        },
      });
      for (const [name, ip] of [
        ['p1', '10.1.0.1'],
        ['p2', '10.1.0.2'],
      ] as const) {
        await call(srv, 'POST', '/api/v1/namespaces/default/pods', {
          body: {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name, labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'x' }] },
          },
        });
        await setReady(srv, name, ip, true);
      }
      await until('endpoints and slices from the leader', 10_000, () =>
        bothShow(srv, ['10.1.0.1', '10.1.0.2']),
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}\n${leader.log}`);
      });

      const killedAt = Date.now();
      leader.proc.kill('SIGKILL');
      await until('the follower to take over', 25_000, () =>
        follower.log.includes('became the leader') ? true : undefined,
      );
      const takeoverMs = Date.now() - killedAt;
      // The lease is 15 s, counted from when the follower last saw the record change, and candidates look
      // every 2 s. The leader renewed at most 2 s before it died, so the follower cannot lead sooner than
      // 13 s after the kill (no two leaders); it may have seen that renewal up to 2 s after the kill, and
      // acts at its next look, so it leads within 15 + 2 + 2 s, plus a second for timers on a loaded machine.
      assert.ok(takeoverMs >= 13_000 && takeoverMs <= 20_000, `took over after ${takeoverMs} ms`);

      await setReady(srv, 'p2', '10.1.0.2', false);
      await until('the new leader to follow a readiness flip', 10_000, () => bothShow(srv, ['10.1.0.1']));
      const metrics = await (await fetch(`${metricsURL(follower)!}/metrics`)).text();
      assert.match(metrics, /^workqueue_adds_total\{name="endpoint_slice"\} [1-9]/m);
      assert.match(metrics, /^workqueue_adds_total\{name="endpoint"\} [1-9]/m);

      // The apiserver restarts underneath the controller manager; changes made meanwhile are picked up.
      assert.equal(await srv.stop(), 0);
      srv = { ...(await startUp({ command: 'apiserver', dataDir, args })), token: TOKEN };
      await setReady(srv, 'p2', '10.1.0.2', true);
      await call(srv, 'DELETE', '/api/v1/namespaces/default/pods/p1');
      await until('convergence after the restart', 30_000, () => bothShow(srv, ['10.1.0.2']));

      // The garbage collector of the new leader removes the slices of a deleted Service.
      assert.equal((await call(srv, 'DELETE', '/api/v1/namespaces/default/services/web')).status, 200);
      await until('slices and endpoints gone with the Service', 15_000, async () =>
        (await readySliceIPs(srv, 'web')).length === 0 && (await readyIPs(srv, 'web')) === undefined
          ? true
          : undefined,
      ).catch((err: unknown) => {
        throw new Error(`${String(err)}\n${follower.log}`);
      });
    } finally {
      for (const p of [a, b])
        if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGTERM');
      await srv.destroy();
    }
  });

  it('refuses a missing kubeconfig, unknown controllers and bad flags with exit 2 and one line', () => {
    const kubeconfig = path.join(work, 'some-kubeconfig');
    writeFileSync(kubeconfig, 'apiVersion: v1\nkind: Config\n');
    for (const [args, text] of [
      [[], /--kubeconfig is required/],
      [['--kubeconfig', '/nonexistent'], /does not exist/],
      [['--kubeconfig', kubeconfig, '--controllers', 'nope'], /unknown controller "nope"/],
      [
        ['--kubeconfig', kubeconfig, '--max-endpoints-per-slice', '1001'],
        /must not be more than 1000, but got 1001/,
      ],
      [['--kubeconfig', kubeconfig, '--concurrent-service-endpoint-syncs', '51'], /must not be more than 50/],
      [['--kubeconfig', kubeconfig, '--concurrent-gc-syncs', '0'], /--concurrent-gc-syncs/],
      [['--kubeconfig', kubeconfig, '--metrics-bind-address', 'nope'], /want HOST:PORT/],
    ] as const) {
      const r = spawnSync(process.execPath, [BIN, 'controller-manager', ...args], { encoding: 'utf8' });
      assert.equal(r.status, 2, r.stderr);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
      assert.match(r.stderr, /^svcplane: /);
      assert.match(r.stderr, text);
    }
  });
});
