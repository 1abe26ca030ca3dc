// The Node authorization mode and NodeRestriction end to end: `svcplane apiserver` with
// --authorization-mode Node,ABAC and --client-ca-file, and the real kubectl with a kubelet's client
// certificate (CN=system:node:n1, O=system:nodes). The node writes its Node's status, creates its
// Lease, reads its own pod but not another node's, lists pods only by its spec.nodeName, and cannot
// delete another Node; the 403s carry kube-apiserver's messages.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { policyLine } from '../../src/apiserver/auth/abac.js';
import { generateCA, issueClientCert } from '../../src/apiserver/auth/pki.js';
import { formatTokenFileRecord } from '../../src/apiserver/auth/token-file.js';
import { kubectlFor, type Kubectl } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe('svcplane apiserver --authorization-mode Node,ABAC: a kubelet certificate with kubectl', () => {
  const work = mkdtempSync(join(tmpdir(), 'svcplane-node-authz-'));
  const adminToken = randomBytes(24).toString('base64url');
  const clientCA = generateCA('e2e-node-ca');
  const n1 = issueClientCert(clientCA, { commonName: 'system:node:n1', organizations: ['system:nodes'] });
  let srv: TestServer;
  let node: Kubectl;

  /** kubectl as n1; rejects with kubectl's stderr. */
  const asNode = (...args: string[]): Promise<string> => node(args);
  /** kubectl as n1 (with `stdin`) fails with this 403 message. */
  const refused = async (args: string[], message: string, stdin?: string): Promise<void> => {
    await assert.rejects(node(args, stdin), (err: Error) => {
      // With -f kubectl puts `error when creating "STDIN": ` between the two.
      assert.match(err.message, /Error from server \(Forbidden\): (error when \w+ "STDIN": )?/);
      assert.ok(err.message.includes(message), err.message);
      return true;
    });
  };

  before(async () => {
    const tokenFile = join(work, 'tokens.csv');
    writeFileSync(
      tokenFile,
      formatTokenFileRecord(adminToken, { name: 'admin', uid: 'admin', groups: ['system:masters'] }) + '\n',
    );
    // The ABAC mode after Node only lets every authenticated client read discovery and OpenAPI.
    const policyFile = join(work, 'policy.jsonl');
    writeFileSync(
      policyFile,
      policyLine({ group: 'system:authenticated', readonly: true, nonResourcePath: '*' }) + '\n',
    );
    const caFile = join(work, 'client-ca.crt');
    writeFileSync(caFile, clientCA.certPem);
    srv = await startUp({
      command: 'apiserver',
      args: [
        '--token-auth-file',
        tokenFile,
        '--authorization-mode',
        'Node,ABAC',
        '--authorization-policy-file',
        policyFile,
        '--client-ca-file',
        caFile,
      ],
    });
    const admin = { ...srv, token: adminToken };
    for (const name of ['n1', 'n2']) {
      const r = await call(admin, 'POST', '/api/v1/nodes', {
        body: { apiVersion: 'v1', kind: 'Node', metadata: { name } },
      });
      assert.equal(r.status, 201, r.text);
    }
    for (const [name, nodeName] of [
      ['web-a', 'n1'],
      ['web-b', 'n2'],
    ]) {
      const r = await call(admin, 'POST', '/api/v1/namespaces/default/pods', {
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name },
          spec: { nodeName, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
        },
      });
      assert.equal(r.status, 201, r.text);
    }
    const kubeconfig = join(work, 'n1.kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: srv.url, 'certificate-authority-data': b64(srv.ca) } }],
        users: [
          {
            name: 'n1',
            user: { 'client-certificate-data': b64(n1.certPem), 'client-key-data': b64(n1.keyPem) },
          },
        ],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'n1' } }],
        'current-context': 'c',
      }),
    );
    node = kubectlFor({ kubeconfig }, work);
  });
  after(async () => {
    await srv?.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  it('is system:node:n1 in system:nodes', async () => {
    const who = JSON.parse(await asNode('auth', 'whoami', '-o', 'json')) as {
      status: { userInfo: { username: string; groups: string[] } };
    };
    assert.equal(who.status.userInfo.username, 'system:node:n1');
    assert.ok(who.status.userInfo.groups.includes('system:nodes'));
  });

  it("writes its Node status and patches its Node, and not another node's", async () => {
    // `kubectl patch --subresource=status` GETs nodes/status first, which the Node mode does not allow
    // (upstream allows a node only update and patch there); a kubelet writes its status without reading
    // it, as `kubectl replace --subresource=status` does.
    const own = JSON.parse(await asNode('get', 'node', 'n1', '-o', 'json')) as Record<string, unknown>;
    const ready = { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ok' };
    const withStatus = JSON.stringify({ ...own, status: { conditions: [ready] } });
    await node(['replace', '--subresource=status', '-f', '-'], withStatus);
    assert.equal(
      await asNode('get', 'node', 'n1', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].reason}'),
      'KubeletReady',
    );
    await asNode(
      'patch',
      'node',
      'n1',
      '--type=merge',
      '-p',
      '{"metadata":{"labels":{"example.com/rack":"r1"}}}',
    );
    assert.equal(
      await asNode('get', 'node', 'n1', '-o', 'jsonpath={.metadata.labels.example\\.com/rack}'),
      'r1',
    );
    await refused(
      [
        'patch',
        'node',
        'n1',
        '--type=merge',
        '-p',
        '{"metadata":{"labels":{"node-restriction.kubernetes.io/pool":"a"}}}',
      ],
      'nodes "n1" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pool',
    );
    const other = JSON.stringify({ ...own, metadata: { name: 'n2' }, status: { conditions: [ready] } });
    await refused(
      ['replace', '--subresource=status', '-f', '-'],
      'nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"',
      other,
    );
  });

  it('creates its Lease in kube-node-lease', async () => {
    const lease = (name: string): string =>
      JSON.stringify({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace: 'kube-node-lease' },
        spec: { holderIdentity: name, leaseDurationSeconds: 40 },
      });
    assert.match(await node(['create', '-f', '-'], lease('n1')), /lease.coordination.k8s.io\/n1 created/);
    assert.equal(
      await asNode('get', 'lease', 'n1', '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.holderIdentity}'),
      'n1',
    );
    await refused(
      ['create', '-f', '-'],
      'leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node',
      lease('n2'),
    );
  });

  it("gets its own pod, and not another node's", async () => {
    assert.equal(await asNode('get', 'pod', 'web-a', '-n', 'default', '-o', 'name'), 'pod/web-a\n');
    await refused(
      ['get', 'pod', 'web-b', '-n', 'default'],
      'pods "web-b" is forbidden: User "system:node:n1" cannot get resource "pods" in API group "" in the ' +
        'namespace "default": no relationship found between node \'n1\' and this object',
    );
  });

  it('cannot delete another Node', async () => {
    await refused(
      ['delete', 'node', 'n2'],
      'nodes "n2" is forbidden: User "system:node:n1" cannot delete resource "nodes" in API group "" at the cluster scope',
    );
    const admin = { ...srv, token: adminToken };
    assert.equal((await call(admin, 'GET', '/api/v1/nodes/n2')).status, 200);
  });

  it('lists pods only with --field-selector spec.nodeName=n1', async () => {
    assert.equal(
      await asNode('get', 'pods', '-A', '--field-selector', 'spec.nodeName=n1', '-o', 'name'),
      'pod/web-a\n',
    );
    await refused(
      ['get', 'pods', '-A'],
      'pods is forbidden: User "system:node:n1" cannot list resource "pods" in API group "" at the cluster ' +
        'scope: can only list/watch pods with spec.nodeName field selector',
    );
  });
});
