// `svcplane node` across an offline restart, against `svcplane up`: a node with --serve-pods runs a
// pod; the API server stops and the node is killed; the node starts again with --pod-ip-on-restart new
// and, the API server being unreachable, runs OFFLINE from its checkpoint: its kubelet API's /pods shows
// the pod's NEW IP (the client certificate's access decision was kept) and the echo answers there, not
// on the old one. Once the API server is back (same data dir and port), the pod's status.podIP in
// kubectl becomes the new IP.
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { issueClientCert } from '../../src/apiserver/auth/pki.js';
import { kubectlFor } from './testing/kubectl.js';
import { kubeletGet } from './testing/kubelet-api.js';
import { startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';
import { httpGet } from './testing/http-get.js';
import { startNodeProcess, type NodeProcess } from './testing/node-process.js';

const BIN = path.resolve('bin/svcplane.js');
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-node-offline-'));
after(() => rmSync(work, { recursive: true, force: true }));

// A 127/8 range and node IP of this run's own (no root needed), and ports unlikely to be taken.
const OCTET = 100 + ((process.pid >> 3) % 150);
const POD_CIDR = `127.${OCTET}.9.0/24`;
const NODE_IP = `127.${OCTET}.8.1`;
const ECHO_PORT = 20000 + (process.pid % 2000);
const KUBELET_PORT = 22000 + (process.pid % 2000);
const ROOT = path.join(work, 'root');

const startNode = (kubeconfig: string, extra: string[]): Promise<NodeProcess> =>
  startNodeProcess(
    [
      '--kubeconfig',
      kubeconfig,
      '--name',
      'edge-off',
      '--pod-cidr',
      POD_CIDR,
      '--node-ip',
      NODE_IP,
      '--serve-pods',
      '--root-dir',
      ROOT,
      '--kubelet-port',
      String(KUBELET_PORT),
      ...extra,
    ],
    { PATH: process.env['PATH'] ?? '', HOME: work },
  );

const killed = (proc: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });

const echo = (ip: string): Promise<string> => httpGet(ip, ECHO_PORT);

interface PodList {
  kind: string;
  items: Array<{ metadata: { name: string }; status: { podIP?: string; phase?: string } }>;
}

/** GET /pods of the node's kubelet API with a client certificate signed by the cluster CA. */
async function kubeletPods(cert: {
  certPem: string;
  keyPem: string;
}): Promise<{ status: number; list: PodList }> {
  const r = await kubeletGet<PodList>({
    host: NODE_IP,
    port: KUBELET_PORT,
    caFile: path.join(ROOT, 'edge-off', 'pki', 'kubelet-ca.crt'),
    path: '/pods',
    cert,
  });
  return { status: r.status, list: r.body };
}

describe('svcplane node without an API server', () => {
  // A kubeconfig naming a port nothing listens on.
  const kubeconfig = path.join(work, 'dead-kubeconfig');
  writeFileSync(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]',
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: c, context: {cluster: c, user: u}}]',
      'current-context: c',
    ].join('\n'),
  );
  const run = (root: string): Promise<{ code: number; stderr: string }> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [
          BIN,
          'node',
          '--kubeconfig',
          kubeconfig,
          '--name',
          'lone',
          '--pod-cidr',
          POD_CIDR,
          '--root-dir',
          root,
        ],
        { env: { PATH: process.env['PATH'] ?? '', HOME: work }, timeout: 60_000 },
        (err, _stdout, stderr) =>
          resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stderr }),
      );
    });

  it('without a checkpoint: refused in one line, as before', async () => {
    const r = await run(path.join(work, 'empty-root'));
    assert.equal(r.code, 1);
    assert.match(r.stderr.trim(), /^svcplane: cannot register node "lone": .*ECONNREFUSED/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });

  it('with a corrupt checkpoint: one line naming the file', async () => {
    const root = path.join(work, 'corrupt-root');
    mkdirSync(path.join(root, 'lone'), { recursive: true });
    writeFileSync(path.join(root, 'lone', 'checkpoint.json'), '{"kind":"NodeCheckpoint","apiVe');
    const r = await run(root);
    assert.equal(r.code, 1);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(
      r.stderr,
      /checkpoint .*lone\/checkpoint\.json is corrupt: not JSON .*; the API server cannot be reached either/,
    );
  });
});

describe('svcplane node: an offline restart with new pod IPs', () => {
  let srv: TestServer | undefined;
  let node: NodeProcess | undefined;
  let dataDir: string | undefined;
  after(async () => {
    if (node !== undefined) await killed(node.proc);
    await srv?.destroy();
    if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
  });

  it('runs from its checkpoint with a new pod IP while the API server is down, and reports it when it returns', async () => {
    srv = await startUp();
    dataDir = srv.dataDir;
    const port = srv.port;
    const kubectl = kubectlFor(srv, work);
    const cert = issueClientCert(
      {
        certPem: readFileSync(path.join(dataDir, 'pki', 'ca.crt'), 'utf8'),
        keyPem: readFileSync(path.join(dataDir, 'pki', 'ca.key'), 'utf8'),
      },
      { commonName: 'kubelet-reader', organizations: ['system:masters'] },
    );

    node = await startNode(srv.kubeconfig, []);
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'web' },
        spec: {
          nodeName: 'edge-off',
          containers: [{ name: 'web', image: 'echo', ports: [{ containerPort: ECHO_PORT }] }],
        },
      }),
    );
    const oldIP = await until('web Running with an IP', 20_000, async () => {
      const p = JSON.parse(await kubectl(['get', 'pod', 'web', '-o', 'json'])) as PodList['items'][0];
      return p.status.phase === 'Running' ? p.status.podIP : undefined;
    });
    // Online: /pods shows the pod (and the reader's allowed access decision is kept on disk).
    const online = await until('/pods online', 10_000, async () => {
      const r = await kubeletPods(cert);
      return r.status === 200 && r.list.items.length === 1 ? r.list : undefined;
    });
    assert.equal(online.kind, 'PodList');
    assert.equal(online.items[0]!.status.podIP, oldIP);
    await until('the checkpoint to name the pod', 5_000, () =>
      readFileSync(path.join(ROOT, 'edge-off', 'checkpoint.json'), 'utf8').includes(oldIP),
    );

    // The uplink goes, the node reboots, and its CNI does not keep addresses.
    await srv.stop();
    await killed(node.proc);
    node = await startNode(srv.kubeconfig, ['--pod-ip-on-restart', 'new']);
    assert.match(node.out(), /running offline from the checkpoint/);
    assert.match(node.err(), /the API server cannot be reached/);

    const offline = await kubeletPods(cert);
    assert.equal(offline.status, 200);
    assert.equal(offline.list.items.length, 1);
    const newIP = offline.list.items[0]!.status.podIP!;
    assert.ok(newIP !== undefined && newIP !== oldIP, `a new pod IP, not ${oldIP}: ${newIP}`);
    assert.ok(newIP.startsWith(`127.${OCTET}.9.`));
    assert.match(await until('the echo on the new IP', 10_000, () => echo(newIP)), /^\s*pod name: web$/m);
    await assert.rejects(echo(oldIP));

    // The uplink returns: the node registers and reports the new IP.
    srv = await startUp({ dataDir, args: ['--secure-port', String(port)] });
    const reported = await until('status.podIP to become the new IP', 30_000, async () => {
      const p = JSON.parse(await kubectl(['get', 'pod', 'web', '-o', 'json'])) as PodList['items'][0];
      return p.status.podIP === newIP ? p : undefined;
    });
    assert.equal(reported.status.phase, 'Running');
    assert.match(node.err(), /the API server answers again/);
  });
});
