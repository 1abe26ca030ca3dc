// `svcplane wrapper` started with SuperEdge's own flags, as SuperEdge's DaemonSet passes them
// (deployment/application-grid-wrapper.yaml: --kubeconfig=, --bind-address=, --hostname=,
// --notify-channel-size=10000), against a real `svcplane up`: it serves, says in its log which SuperEdge
// flag changes nothing here, honours --wrapper-in-cluster=false (default/kubernetes is not rewritten to
// its local-endpoint annotations), and refuses what it cannot honour with exit status 2 and the reason.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubectlFor } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';
import { startWrapper, type TestWrapper } from './testing/wrapper.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;

interface Served {
  ep: { subsets?: { addresses?: { ip: string }[]; ports?: { port: number }[] }[] };
  slice: { endpoints?: { addresses: string[] }[]; ports?: { port: number }[] };
}

describe("svcplane wrapper with SuperEdge's flags", () => {
  const work = mkdtempSync(join(tmpdir(), 'svcplane-se-flags-'));
  let up: TestServer;
  const wrappers: TestWrapper[] = [];

  before(async () => {
    up = await startUp();
    assert.equal(
      (await call(up, 'POST', '/api/v1/nodes', { body: { metadata: { name: 'edge-0' } } })).status,
      201,
    );
    for (const path of [
      '/api/v1/namespaces/default/endpoints/kubernetes',
      '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes',
    ]) {
      const r = await call(up, 'PATCH', path, {
        contentType: 'application/merge-patch+json',
        body: {
          metadata: {
            annotations: { 'superedge.io/local-endpoint': '127.0.0.1', 'superedge.io/local-port': '51003' },
          },
        },
      });
      assert.equal(r.status, 200, r.text);
    }
  });

  after(async () => {
    for (const w of wrappers) await w.stop();
    await up?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  /** default/kubernetes as kubectl gets it through the wrapper. */
  const served = async (w: TestWrapper): Promise<Served> => {
    const home = join(work, `home-${w.port}`);
    mkdirSync(home, { recursive: true });
    const k = kubectlFor({ kubeconfig: w.kubeconfig }, home);
    const get = async (path: string): Promise<unknown> => JSON.parse(await k(['get', '--raw', path]));
    return {
      ep: (await get('/api/v1/namespaces/default/endpoints/kubernetes')) as Served['ep'],
      slice: (await get(
        '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes',
      )) as Served['slice'],
    };
  };
  const ports = (s: Served): number[] => [
    s.ep.subsets?.[0]?.ports?.[0]?.port ?? 0,
    s.slice.ports?.[0]?.port ?? 0,
  ];

  it("serves with SuperEdge's DaemonSet command line, and says which flag changes nothing", async () => {
    const w = await startWrapper({
      upstreamKubeconfig: up.kubeconfig,
      hostname: 'edge-0',
      dataDir: join(work, 'w-default'),
      args: [`--kubeconfig=${up.kubeconfig}`, '--hostname=edge-0', '--notify-channel-size=10000'],
    });
    wrappers.push(w);
    // The rewrite is on by default, as SuperEdge's --wrapper-in-cluster is.
    const s = await until('default/kubernetes rewritten to 127.0.0.1:51003', 15_000, async () => {
      const got = await served(w);
      return ports(got).every((p) => p === 51003) ? got : undefined;
    });
    assert.deepEqual(
      s.slice.endpoints?.map((e) => e.addresses),
      [['127.0.0.1']],
    );
    assert.match(
      w.stderr(),
      /SuperEdge flag --notify-channel-size=10000 has no effect: svcplane bounds each watcher/,
    );
  });

  it('--wrapper-in-cluster=false serves default/kubernetes as the upstream has it', async () => {
    const w = await startWrapper({
      upstreamKubeconfig: up.kubeconfig,
      hostname: 'edge-0',
      dataDir: join(work, 'w-off'),
      args: ['--wrapper-in-cluster=false'],
    });
    wrappers.push(w);
    const s = await until('default/kubernetes served', 15_000, async () => {
      const got = await served(w);
      return got.slice.endpoints !== undefined && got.ep.subsets !== undefined ? got : undefined;
    });
    assert.deepEqual(ports(s), [up.port, up.port]);
  });

  it('refuses what it cannot honour, and bad values, with exit status 2 and the reason', () => {
    for (const [flag, want] of [
      ['--insecure', /--insecure \(SuperEdge's\) is not supported: .*--insecure-bind-address/],
      ['--cert-file=/etc/wrapper.pem', /--cert-file \(SuperEdge's\) is not supported/],
      ['--notify-channel-size=ten', /invalid value "ten" for --notify-channel-size/],
      ['--wrapper-in-cluster=maybe', /want true or false/],
    ] as const) {
      const r = spawnSync(process.execPath, [BIN, 'wrapper', '--hostname', 'edge-0', flag], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(r.status, 2, `${flag}: ${r.stderr}`);
      assert.match(r.stderr, want);
    }
    // --help wins over a SuperEdge flag it would refuse.
    const help = spawnSync(process.execPath, [BIN, 'wrapper', '--help', '--insecure'], { encoding: 'utf8' });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /SuperEdge's own flags are taken as its DaemonSet passes them/);
  });
});
