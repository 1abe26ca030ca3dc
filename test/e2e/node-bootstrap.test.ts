// TLS bootstrapping of `svcplane node`, checked with kubectl against `svcplane up` under an ABAC policy
// in which the bootstrap identity may only handle CertificateSigningRequests and only system:node:n1
// may write anything else: the node gets its certificate through a CSR that the approver and signer
// (csrapproving, csrsigning) issue, registers and goes Ready (writes only its own identity may make),
// and a restart reuses the stored certificate. An administrator's CSR is issued once
// `kubectl certificate approve` approves it, and never after `kubectl certificate deny`.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createCertificateRequest } from '../../src/apiserver/auth/pki.js';
import { kubectlFor, type Kubectl } from './testing/kubectl.js';
import { startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const BIN = path.resolve('bin/svcplane.js');
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-bootstrap-'));
const certDir = path.join(work, 'node-pki');
const POD_CIDR = `127.${100 + (process.pid % 150)}.0.0/24`;

const policy = [
  {
    group: 'system:bootstrappers',
    apiGroup: 'certificates.k8s.io',
    resource: 'certificatesigningrequests',
    namespace: '*',
  },
  { user: 'system:node:n1', apiGroup: '*', resource: '*', namespace: '*' },
]
  .map((spec) =>
    JSON.stringify({ apiVersion: 'abac.authorization.kubernetes.io/v1beta1', kind: 'Policy', spec }),
  )
  .join('\n');

interface Csr {
  metadata: { name: string };
  spec: { username?: string; signerName?: string; groups?: string[] };
  status?: { certificate?: string; conditions?: Array<{ type: string; reason?: string }> };
}

let srv: TestServer;
let kubectl: Kubectl;

async function startNode(
  server: TestServer = srv,
  name = 'n1',
  dir = certDir,
): Promise<{ proc: ChildProcess; out: () => string }> {
  const args = ['node', '--bootstrap-kubeconfig', path.join(server.dataDir, 'bootstrap-kubeconfig')];
  const proc = spawn(
    process.execPath,
    [BIN, ...args, '--name', name, '--cert-dir', dir, '--pod-cidr', POD_CIDR],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env['PATH'] ?? '', HOME: work },
    },
  );
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  await until(
    () => `svcplane node to start:\n${out}`,
    60_000,
    () => {
      if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}: ${out}`);
      return /running/.test(out);
    },
  );
  return { proc, out: () => out };
}

const stop = (proc: ChildProcess): Promise<unknown> =>
  new Promise((resolve) => {
    if (proc.exitCode !== null) return resolve(proc.exitCode);
    proc.once('exit', resolve);
    proc.kill('SIGTERM');
  });

const csrs = async (): Promise<Csr[]> =>
  (JSON.parse(await kubectl(['get', 'csr', '-o', 'json'])) as { items: Csr[] }).items;

/** Whether a SubjectAccessReview allows `user` in `groups` to update node n1. */
async function mayUpdateNode(user: string, groups: string[]): Promise<boolean> {
  const review = {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    spec: { user, groups, resourceAttributes: { verb: 'update', resource: 'nodes', name: 'n1' } },
  };
  const answer = await kubectl(['create', '-f', '-', '-o', 'json'], JSON.stringify(review));
  return (JSON.parse(answer) as { status: { allowed: boolean } }).status.allowed;
}

describe('svcplane node --bootstrap-kubeconfig', () => {
  let node: { proc: ChildProcess; out: () => string } | undefined;

  before(async () => {
    const policyFile = path.join(work, 'policy.jsonl');
    writeFileSync(policyFile, `${policy}\n`);
    srv = await startUp({
      args: ['--authorization-mode', 'ABAC', '--authorization-policy-file', policyFile],
    });
    kubectl = kubectlFor(srv, work);
  });

  after(async () => {
    if (node !== undefined) await stop(node.proc);
    await srv?.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  it('bootstraps the node: its CSR is approved and issued, and the node goes Ready as system:node:n1', async () => {
    assert.ok(existsSync(path.join(srv.dataDir, 'bootstrap-kubeconfig')));
    node = await startNode();
    await until(
      'node n1 Ready',
      60_000,
      async () =>
        (await kubectl([
          'get',
          'node',
          'n1',
          '-o',
          'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
        ])) === 'True',
    );
    const [csr, ...more] = await csrs();
    assert.equal(more.length, 0);
    assert.equal(csr!.spec.username, 'system:bootstrap:svcplane');
    assert.ok(csr!.spec.groups?.includes('system:bootstrappers'));
    assert.equal(csr!.spec.signerName, 'kubernetes.io/kube-apiserver-client-kubelet');
    assert.deepEqual(
      csr!.status?.conditions?.map((c) => [c.type, c.reason]),
      [['Approved', 'AutoApproved']],
    );
    const table = await kubectl(['get', 'csr', csr!.metadata.name, '--no-headers']);
    assert.match(
      table,
      /kubernetes\.io\/kube-apiserver-client-kubelet\s+system:bootstrap:svcplane\s+<none>\s+Approved,Issued/,
    );

    const file = path.join(certDir, 'n1', 'kubelet-client-current.pem');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const cert = new X509Certificate(readFileSync(file));
    assert.deepEqual(cert.subject.split('\n').sort(), ['CN=system:node:n1', 'O=system:nodes']);
    assert.ok(cert.checkIssued(new X509Certificate(srv.ca)));
    assert.equal(Buffer.from(csr!.status!.certificate!, 'base64').toString(), cert.toString());
    // The bootstrap identity may not write Nodes: the node's registration and Ready status are its own.
    assert.equal(
      await mayUpdateNode('system:bootstrap:svcplane', ['system:bootstrappers', 'system:authenticated']),
      false,
    );
    assert.equal(await mayUpdateNode('system:node:n1', ['system:nodes', 'system:authenticated']), true);
    const whoami = await kubectl([
      'auth',
      'whoami',
      '--client-certificate',
      file,
      '--client-key',
      file,
      '-o',
      'json',
    ]);
    assert.equal(JSON.parse(whoami).status.userInfo.username, 'system:node:n1');
  });

  it('reuses the stored certificate after a restart: no new request', async () => {
    const before = await csrs();
    await stop(node!.proc);
    node = await startNode();
    assert.doesNotMatch(node.out(), /node certificate issued/);
    const lease = async (): Promise<string> =>
      kubectl(['get', 'lease', '-n', 'kube-node-lease', 'n1', '-o', 'jsonpath={.spec.renewTime}']);
    const first = await lease();
    await until('the restarted node to renew its Lease', 30_000, async () => (await lease()) !== first, 500);
    assert.deepEqual(
      (await csrs()).map((c) => c.metadata.name),
      before.map((c) => c.metadata.name),
    );
  });

  it('issues a manual CSR once kubectl certificate approve approves it, and not a denied one', async () => {
    const request = (cn: string): string =>
      Buffer.from(createCertificateRequest({ commonName: cn, organizations: ['devs'] }).csrPem).toString(
        'base64',
      );
    const manifest = (name: string): string =>
      JSON.stringify({
        apiVersion: 'certificates.k8s.io/v1',
        kind: 'CertificateSigningRequest',
        metadata: { name },
        spec: {
          request: request(name),
          signerName: 'kubernetes.io/kube-apiserver-client',
          expirationSeconds: 3600,
          usages: ['client auth'],
          username: 'mallory',
        },
      });
    await kubectl(['create', '-f', '-'], manifest('alice'));
    await kubectl(['create', '-f', '-'], manifest('bob'));
    assert.match(await kubectl(['get', 'csr', 'alice', '--no-headers']), /\s+admin\s+60m\s+Pending/);
    await kubectl(['certificate', 'approve', 'alice']);
    await kubectl(['certificate', 'deny', 'bob']);
    await until('alice issued', 30_000, async () =>
      /Approved,Issued/.test(await kubectl(['get', 'csr', 'alice', '--no-headers'])),
    );
    const alice = (await csrs()).find((c) => c.metadata.name === 'alice')!;
    const cert = new X509Certificate(Buffer.from(alice.status!.certificate!, 'base64'));
    assert.deepEqual(cert.subject.split('\n').sort(), ['CN=alice', 'O=devs']);
    assert.ok(Date.parse(cert.validTo) - Date.now() <= 3600_000);
    // Approval is for good: kubectl will not deny it, and the API server refuses a Denied condition on top.
    await assert.rejects(kubectl(['certificate', 'deny', 'alice']), /already Approved/);
    const denied = {
      ...alice,
      status: {
        ...alice.status,
        conditions: [...alice.status!.conditions!, { type: 'Denied', status: 'True' }],
      },
    };
    await assert.rejects(
      kubectl(
        [
          'replace',
          '--raw',
          '/apis/certificates.k8s.io/v1/certificatesigningrequests/alice/approval',
          '-f',
          '-',
        ],
        JSON.stringify(denied),
      ),
      /Approved and Denied conditions are mutually exclusive/,
    );
    const bob = await kubectl(['get', 'csr', 'bob', '--no-headers']);
    assert.match(bob, /\s+Denied\s*$/);
  });
});

describe('svcplane node renews its certificate', () => {
  let short: TestServer;
  let node: { proc: ChildProcess; out: () => string } | undefined;
  const dir = path.join(work, 'renewing-pki');

  before(async () => {
    // Certificates of 40 s: the node asks for the next one 28–36 s after it got one.
    short = await startUp({ args: ['--cluster-signing-duration', '40s'] });
  });
  after(async () => {
    if (node !== undefined) await stop(node.proc);
    await short?.destroy();
  });

  it('asks for a new certificate as itself before the old one expires, and goes on with it', async () => {
    const k = kubectlFor(short, work);
    node = await startNode(short, 'r1', dir);
    const list = async (): Promise<Csr[]> =>
      (JSON.parse(await k(['get', 'csr', '-o', 'json'])) as { items: Csr[] }).items;
    const renewal = await until(
      'a renewal request by system:node:r1, issued',
      90_000,
      async () =>
        (await list()).find(
          (c) => c.spec.username === 'system:node:r1' && c.status?.certificate !== undefined,
        ),
      500,
    );
    assert.deepEqual(renewal.spec.groups?.sort(), ['system:authenticated', 'system:nodes']);
    const approved = renewal.status!.conditions!.find((c) => c.type === 'Approved') as { message?: string };
    assert.equal(
      approved.message,
      'Auto approving self kubelet client certificate after SubjectAccessReview.',
    );
    await until('the renewed certificate saved', 30_000, () => {
      const saved = readFileSync(path.join(dir, 'r1', 'kubelet-client-current.pem'), 'utf8');
      return saved.includes(Buffer.from(renewal.status!.certificate!, 'base64').toString().trim());
    });
    // The node goes on with its new certificate: its Lease keeps being renewed.
    const lease = async (): Promise<string> =>
      k(['get', 'lease', '-n', 'kube-node-lease', 'r1', '-o', 'jsonpath={.spec.renewTime}']);
    const first = await lease();
    await until('the Lease renewed after the rotation', 30_000, async () => (await lease()) !== first, 500);
  });
});
