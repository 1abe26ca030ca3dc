// A bearer token at `svcplane node`'s kubelet API against `svcplane up`: the node checks it with a
// TokenReview (as a kubelet with --authentication-token-webhook does), so the admin token of up's token
// file reads /pods; a ServiceAccount token authenticates too, as the account: one bound to `get
// nodes/proxy` reads /pods, another is refused by the SubjectAccessReview (403, not 401); a token of no
// one is 401.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { kubectlFor } from './testing/kubectl.js';
import { kubeletGet } from './testing/kubelet-api.js';
import { startNodeProcess, type NodeProcess } from './testing/node-process.js';
import { startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-kubelet-token-'));
after(() => rmSync(work, { recursive: true, force: true }));

// A 127/8 node IP and kubelet port of this run's own (no root needed).
const OCTET = 100 + ((process.pid >> 3) % 150);
const NODE_IP = `127.${OCTET}.18.1`;
const KUBELET_PORT = 24000 + (process.pid % 2000);
const ROOT = path.join(work, 'root');

const killed = (proc: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
    proc.once('exit', () => resolve());
    proc.kill('SIGKILL');
  });

/** GET /pods of the node's kubelet API with a bearer token: the status and the body's kind or message. */
const kubeletPods = (token: string) =>
  kubeletGet<{ kind?: string; message?: string }>({
    host: NODE_IP,
    port: KUBELET_PORT,
    caFile: path.join(ROOT, 'edge-tok', 'pki', 'kubelet-ca.crt'),
    path: '/pods',
    token,
  });

describe('a bearer token at the kubelet API of svcplane node against up', () => {
  let srv: TestServer | undefined;
  let node: NodeProcess | undefined;
  after(async () => {
    if (node !== undefined) await killed(node.proc);
    await srv?.destroy();
  });

  it("is reviewed by up's API server: the admin token reads /pods, a ServiceAccount's is authorized as the account", async () => {
    srv = await startUp();
    const kubectl = kubectlFor(srv, work);
    node = await startNodeProcess(
      [
        '--kubeconfig',
        srv.kubeconfig,
        '--name',
        'edge-tok',
        '--pod-cidr',
        `127.${OCTET}.19.0/24`,
        '--node-ip',
        NODE_IP,
        '--root-dir',
        ROOT,
        '--kubelet-port',
        String(KUBELET_PORT),
      ],
      { PATH: process.env['PATH'] ?? '', HOME: work },
    );
    const admin = await until('/pods with the admin token', 20_000, async () => {
      const r = await kubeletPods(srv!.token).catch(() => undefined);
      return r?.status === 200 ? r : undefined;
    });
    assert.equal(admin.body.kind, 'PodList');

    for (const sa of ['reader', 'stranger']) await kubectl(['create', 'serviceaccount', sa]);
    await kubectl(['create', 'clusterrole', 'node-proxy-reader', '--verb=get', '--resource=nodes/proxy']);
    await kubectl([
      'create',
      'clusterrolebinding',
      'node-proxy-reader',
      '--clusterrole=node-proxy-reader',
      '--serviceaccount=default:reader',
    ]);
    const stranger = await kubeletPods((await kubectl(['create', 'token', 'stranger'])).trim());
    assert.equal(stranger.status, 403, JSON.stringify(stranger.body));
    assert.match(
      String(stranger.body.message),
      /user=system:serviceaccount:default:stranger, verb=get, resource=nodes, subresource=proxy/,
    );
    // The binding is in the API server's policy before the node asks (a denial would be cached 30 s).
    await until(
      'the binding to reach the authorizer',
      20_000,
      async () =>
        (
          await kubectl([
            'auth',
            'can-i',
            'get',
            'nodes',
            '--subresource=proxy',
            '--as=system:serviceaccount:default:reader',
          ]).catch(() => '')
        ).trim() === 'yes',
    );
    const reader = (await kubectl(['create', 'token', 'reader'])).trim();
    const allowed = await kubeletPods(reader);
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    assert.equal(allowed.body.kind, 'PodList');

    const nobody = await kubeletPods('not-a-token');
    assert.equal(nobody.status, 401, JSON.stringify(nobody.body));
  });
});
