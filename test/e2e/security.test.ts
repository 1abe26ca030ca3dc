// Authentication and authorization end to end, against real `svcplane up` and `svcplane apiserver`
// processes: bearer tokens, the public health/version paths, a --token-auth-file with ABAC policies
// (read-only user, node agent), client certificates from --client-ca-file, plain HTTP on the TLS port,
// and tokens kept out of the server's log.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { nodeAgentPolicy, policyLine, readOnlyPolicy } from '../../src/apiserver/auth/abac.js';
import { generateCA, issueClientCert, type CertKeyPair } from '../../src/apiserver/auth/pki.js';
import { formatTokenFileRecord } from '../../src/apiserver/auth/token-file.js';
import { KUBECTL, kubectlFor } from './testing/kubectl.js';
import { call, startUp, type Reply, type TestServer } from './testing/server.js';

interface Status {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { kind?: string; name?: string; group?: string };
}

const service = (name: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { ports: [{ port: 80 }] },
});

function assertStatus(res: Reply, code: number, reason: string, message?: string | RegExp): Status {
  const where = `${res.status} ${res.text.slice(0, 300)}`;
  assert.equal(res.status, code, where);
  assert.match(String(res.headers['content-type']), /^application\/json/, where);
  const st = res.json<Status>();
  assert.equal(st.kind, 'Status', where);
  assert.equal(st.status, 'Failure', where);
  assert.equal(st.code, code, where);
  assert.equal(st.reason, reason, where);
  if (typeof message === 'string') assert.equal(st.message, message, where);
  else if (message !== undefined) assert.match(st.message ?? '', message, where);
  return st;
}

/** A GET with a client certificate (and no Authorization header). */
function getWithCert(srv: TestServer, path: string, cert: CertKeyPair): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: srv.port,
        path,
        method: 'GET',
        agent: new Agent({ ca: srv.ca, cert: cert.certPem, key: cert.keyPem, keepAlive: false }),
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: <T>() => JSON.parse(text) as T,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer in 10 s: GET ${path}`)));
    req.end();
  });
}

/** Opens a watch, waits for the response head, and closes it: the status and headers, and whether it stayed open. */
function openWatch(
  srv: TestServer,
  path: string,
  token: string,
): Promise<{ status: number; contentType: string; open: boolean }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: srv.port,
        path,
        method: 'GET',
        agent: new Agent({ ca: srv.ca, keepAlive: false }),
        headers: { Authorization: `Bearer ${token}` },
      },
      (res) => {
        let ended = false;
        res.on('end', () => (ended = true));
        res.on('data', () => undefined);
        res.on('error', () => undefined);
        // Still streaming a moment later: the watch is open (a refused one ends at once).
        setTimeout(() => {
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type']),
            open: !ended && !res.complete,
          });
          req.destroy();
        }, 300);
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'ECONNRESET') reject(err);
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer in 10 s: GET ${path}`)));
    req.end();
  });
}

/** A plain-HTTP request to the TLS port: the answer, or how the connection ended. */
function plainHttp(
  port: number,
  path: string,
): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((resolve) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (err) => resolve({ error: err.message }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.setTimeout(10_000, () => req.destroy(new Error('no answer in 10 s')));
    req.end();
  });
}

describe('svcplane up: bearer tokens', () => {
  let srv: TestServer;
  const wrongToken = randomBytes(24).toString('base64url');

  before(async () => {
    srv = await startUp();
  });
  after(async () => {
    await srv?.destroy();
  });

  it('answers a request without a token with 401 Unauthorized', async () => {
    const res = await call(srv, 'GET', '/api/v1/namespaces', { token: null });
    assertStatus(res, 401, 'Unauthorized', 'Unauthorized');
    assert.match(String(res.headers['www-authenticate']), /^Bearer /);
  });

  it('answers a wrong token with 401 Unauthorized, on reads and writes alike', async () => {
    assertStatus(
      await call(srv, 'GET', '/api/v1/namespaces', { token: wrongToken }),
      401,
      'Unauthorized',
      'Unauthorized',
    );
    assertStatus(
      await call(srv, 'POST', '/api/v1/namespaces/default/services', {
        token: wrongToken,
        body: service('sneaky'),
      }),
      401,
      'Unauthorized',
    );
    // A wrong token is 401 even on a public path: it is a failed login, not an anonymous request.
    assertStatus(await call(srv, 'GET', '/version', { token: wrongToken }), 401, 'Unauthorized');
    // Nothing was written (default/kubernetes is the API server's own).
    const list = await call(srv, 'GET', '/api/v1/namespaces/default/services');
    assert.deepEqual(
      list.json<{ items: { metadata: { name: string } }[] }>().items.map((s) => s.metadata.name),
      ['kubernetes'],
    );
  });

  it('serves /healthz, /livez, /readyz and /version without a token', async () => {
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const res = await call(srv, 'GET', path, { token: null });
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.equal(res.text, 'ok', path);
    }
    const verbose = await call(srv, 'GET', '/readyz?verbose', { token: null });
    assert.equal(verbose.status, 200);
    assert.match(verbose.text, /readyz check passed/);
    const version = await call(srv, 'GET', '/version', { token: null });
    assert.equal(version.status, 200);
    const v = version.json<{ major: string; minor: string; gitVersion: string }>();
    assert.equal(v.major, '1');
    assert.match(v.gitVersion, /^v1\.\d+\.\d+/);
    // ...but nothing else: discovery and metrics need credentials.
    for (const path of ['/api', '/apis', '/metrics', '/openapi/v3']) {
      assert.equal((await call(srv, 'GET', path, { token: null })).status, 401, path);
    }
  });

  it('answers plain HTTP on the TLS port with 400 "Client sent an HTTP request to an HTTPS server."', async () => {
    const res = await plainHttp(srv.port, '/version');
    assert.deepEqual(res, { status: 400, body: 'Client sent an HTTP request to an HTTPS server.\n' });
    // The port still speaks TLS afterwards.
    assert.equal((await call(srv, 'GET', '/readyz', { token: null })).status, 200);
  });

  it('never writes a token to its log', async () => {
    await call(srv, 'GET', '/api/v1/namespaces/default/services');
    await call(srv, 'GET', '/api/v1/nodes', { token: wrongToken });
    await call(srv, 'POST', '/api/v1/namespaces/nope/services', { body: service('x') });
    await call(srv, 'GET', '/api/v1/namespaces/default/services/missing');
    const log = srv.stderr();
    assert.ok(log.length > 0, 'the server logs something');
    assert.ok(!log.includes(srv.token), 'the admin token is in the log');
    assert.ok(!log.includes(wrongToken), 'a presented (wrong) token is in the log');
  });
});

describe('svcplane apiserver: token file, ABAC, client certificates', () => {
  let srv: TestServer;
  const work = mkdtempSync(join(tmpdir(), 'svcplane-security-'));
  const tokens = {
    admin: randomBytes(24).toString('base64url'),
    ro: randomBytes(24).toString('base64url'),
    node: randomBytes(24).toString('base64url'),
  };
  const wrongToken = randomBytes(24).toString('base64url');
  const clientCA = generateCA('e2e-client-ca');
  const otherCA = generateCA('e2e-other-ca');
  const alice = issueClientCert(clientCA, { commonName: 'alice', organizations: ['system:masters'] });
  const bob = issueClientCert(clientCA, { commonName: 'bob', organizations: [] });
  const carol = issueClientCert(clientCA, { commonName: 'carol', organizations: ['viewers'] });
  const mallory = issueClientCert(otherCA, { commonName: 'mallory', organizations: ['system:masters'] });

  before(async () => {
    const tokenFile = join(work, 'tokens.csv');
    writeFileSync(
      tokenFile,
      [
        formatTokenFileRecord(tokens.admin, { name: 'admin', uid: 'admin-uid', groups: ['system:masters'] }),
        formatTokenFileRecord(tokens.ro, { name: 'ro', uid: 'ro-uid', groups: [] }),
        formatTokenFileRecord(tokens.node, { name: 'node-1', uid: 'node-1-uid', groups: ['system:nodes'] }),
      ].join('\n') + '\n',
    );
    const policyFile = join(work, 'policy.jsonl');
    writeFileSync(
      policyFile,
      readOnlyPolicy('ro') +
        nodeAgentPolicy('node-1') +
        // A group read-only rule, to show certificate O= fields become groups.
        policyLine({ group: 'viewers', readonly: true, apiGroup: '*', namespace: '*', resource: '*' }) +
        '\n',
    );
    const caFile = join(work, 'client-ca.crt');
    writeFileSync(caFile, clientCA.certPem);
    srv = await startUp({
      command: 'apiserver',
      args: [
        '--token-auth-file',
        tokenFile,
        '--authorization-mode',
        'ABAC',
        '--authorization-policy-file',
        policyFile,
        '--client-ca-file',
        caFile,
      ],
    });
  });
  after(async () => {
    await srv?.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  const as = (token: string): TestServer => ({ ...srv, token });

  it('lets the system:masters admin do anything', async () => {
    const created = await call(as(tokens.admin), 'POST', '/api/v1/namespaces/default/services', {
      body: service('web'),
    });
    assert.equal(created.status, 201, created.text);
    const nodes = await call(as(tokens.admin), 'POST', '/api/v1/nodes', {
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } },
    });
    assert.equal(nodes.status, 201, nodes.text);
  });

  it('answers an unknown token and no token with 401', async () => {
    assertStatus(await call(as(wrongToken), 'GET', '/api/v1/services'), 401, 'Unauthorized');
    assertStatus(await call(srv, 'GET', '/api/v1/services', { token: null }), 401, 'Unauthorized');
  });

  it('lets "ro" read everything but write nothing (403 with kube\'s message)', async () => {
    const ro = as(tokens.ro);
    const list = await call(ro, 'GET', '/api/v1/namespaces/default/services');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.json<{ items: { metadata: { name: string } }[] }>().items.map((s) => s.metadata.name),
      ['kubernetes', 'web'],
    );
    assert.equal((await call(ro, 'GET', '/api/v1/nodes/node-1')).status, 200);
    assert.equal((await call(ro, 'GET', '/apis')).status, 200);
    const st = assertStatus(
      await call(ro, 'POST', '/api/v1/namespaces/default/services', { body: service('ro-made') }),
      403,
      'Forbidden',
      'services is forbidden: User "ro" cannot create resource "services" in API group "" in the namespace "default": No policy matched.',
    );
    assert.deepEqual(st.details, { kind: 'services' });
    assertStatus(
      await call(ro, 'DELETE', '/api/v1/namespaces/default/services/web'),
      403,
      'Forbidden',
      'services "web" is forbidden: User "ro" cannot delete resource "services" in API group "" in the namespace "default": No policy matched.',
    );
    assertStatus(
      await call(ro, 'PATCH', '/api/v1/namespaces/default/services/web/status', {
        body: { status: {} },
        contentType: 'application/merge-patch+json',
      }),
      403,
      'Forbidden',
      /^services "web" is forbidden: User "ro" cannot patch resource "services\/status"/,
    );
    const web = await call(as(tokens.admin), 'GET', '/api/v1/namespaces/default/services/web');
    assert.equal(web.status, 200, 'the refused delete left the service alone');
  });

  it('lets "ro" open a watch on EndpointSlices', async () => {
    const w = await openWatch(srv, '/apis/discovery.k8s.io/v1/endpointslices?watch=true', tokens.ro);
    assert.equal(w.status, 200);
    assert.match(w.contentType, /^application\/json/);
    assert.ok(w.open, 'the watch stream stays open');
  });

  it('lets "node-1" list services and create events, but not delete a node', async () => {
    const node = as(tokens.node);
    const services = await call(node, 'GET', '/api/v1/services');
    assert.equal(services.status, 200, services.text);
    const slices = await call(node, 'GET', '/apis/discovery.k8s.io/v1/endpointslices');
    assert.equal(slices.status, 200, slices.text);
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const event = await call(node, 'POST', '/api/v1/namespaces/default/events', {
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'node-1.e2e', namespace: 'default' },
        involvedObject: { kind: 'Node', name: 'node-1', uid: 'node-1', apiVersion: 'v1' },
        reason: 'Starting',
        message: 'Starting kube-proxy.',
        type: 'Normal',
        source: { component: 'kube-proxy', host: 'node-1' },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      },
    });
    assert.equal(event.status, 201, event.text);
    assertStatus(
      await call(node, 'DELETE', '/api/v1/nodes/node-1'),
      403,
      'Forbidden',
      'nodes "node-1" is forbidden: User "node-1" cannot delete resource "nodes" in API group "" at the cluster scope: No policy matched.',
    );
    assertStatus(
      await call(node, 'POST', '/api/v1/namespaces/default/services', { body: service('node-made') }),
      403,
      'Forbidden',
    );
    assertStatus(
      await call(node, 'GET', '/apis/apps/v1/deployments'),
      403,
      'Forbidden',
      'deployments.apps is forbidden: User "node-1" cannot list resource "deployments" in API group "apps" at the cluster scope: No policy matched.',
    );
    const still = await call(as(tokens.admin), 'GET', '/api/v1/nodes/node-1');
    assert.equal(still.status, 200, 'the node is still there');
  });

  it('answers kubectl auth can-i (and --list) and whoami for each user by the ABAC policy (protobuf reviews)', async () => {
    // `svcplane apiserver` writes no kubeconfig: one with the server and its CA, the token on each call.
    const kubeconfig = join(work, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'c',
            cluster: {
              server: srv.url,
              'certificate-authority-data': Buffer.from(srv.ca).toString('base64'),
            },
          },
        ],
        users: [{ name: 'u', user: {} }],
        contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'c',
      }),
    );
    const k = kubectlFor({ kubeconfig }, work);
    // kubectl auth can-i prints "yes" (exit 0) or "no" (exit 1) on stdout; anything else is a failure.
    const canI = (token: string, ...args: string[]): Promise<string> =>
      new Promise((resolve, reject) => {
        execFile(
          KUBECTL,
          [`--cache-dir=${join(work, 'cache')}`, 'auth', 'can-i', `--token=${token}`, ...args],
          { env: { PATH: process.env['PATH'] ?? '', HOME: work, KUBECONFIG: kubeconfig }, timeout: 60_000 },
          (err, stdout, stderr) => {
            const answer = stdout.trim();
            const code = err === null ? 0 : err.code;
            if ((code === 0 && answer === 'yes') || (code === 1 && answer === 'no')) resolve(answer);
            else
              reject(
                new Error(`kubectl auth can-i ${args.join(' ')}: exit ${String(code)}: ${stdout}${stderr}`),
              );
          },
        );
      });
    assert.equal(await canI(tokens.ro, 'list', 'services'), 'yes');
    assert.equal(await canI(tokens.ro, 'create', 'services'), 'no');
    assert.equal(await canI(tokens.node, 'create', 'events', '-n', 'default'), 'yes');
    assert.equal(await canI(tokens.node, 'delete', 'nodes'), 'no');
    assert.equal(await canI(tokens.admin, 'delete', 'nodes'), 'yes');
    // A user impersonating system:anonymous is not authenticated: no self review for it (kube: 403).
    const anonymous = await call(
      as(tokens.admin),
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
        headers: { 'Impersonate-User': 'system:anonymous' },
      },
    );
    assert.equal(anonymous.status, 403, anonymous.text);
    // --list: the policy lines that match ro (readonly, everything), as kubectl prints them.
    const list = await k(['auth', 'can-i', '--list', `--token=${tokens.ro}`]);
    assert.match(list, /^\*\.\*\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
    // kubectl prints a non-resource rule once per verb.
    for (const verb of ['get', 'list', 'watch'])
      assert.match(list, new RegExp(`^\\s+\\[\\*\\]\\s+\\[\\]\\s+\\[${verb}\\]$`, 'm'));
    const whoami = await k(['auth', 'whoami', `--token=${tokens.node}`, '-o', 'json']);
    assert.deepEqual((JSON.parse(whoami) as { status: unknown }).status, {
      userInfo: { username: 'node-1', uid: 'node-1-uid', groups: ['system:nodes', 'system:authenticated'] },
    });
  });

  it('authenticates a client certificate from --client-ca-file: CN is the user, O the groups', async () => {
    const asAlice = await getWithCert(srv, '/api/v1/namespaces/default/services', alice);
    assert.equal(asAlice.status, 200, asAlice.text);
    // carol (O=viewers) may read through the group rule; bob (no group, no rule) is known but forbidden.
    assert.equal((await getWithCert(srv, '/api/v1/nodes', carol)).status, 200);
    assertStatus(
      await getWithCert(srv, '/api/v1/nodes', bob),
      403,
      'Forbidden',
      'nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope: No policy matched.',
    );
  });

  it('refuses a client certificate from another CA with 401', async () => {
    assertStatus(await getWithCert(srv, '/api/v1/namespaces/default/services', mallory), 401, 'Unauthorized');
    assertStatus(await getWithCert(srv, '/api/v1/nodes', mallory), 401, 'Unauthorized');
  });

  it('answers plain HTTP on the TLS port with 400, and never logs a token', async () => {
    const res = await plainHttp(srv.port, '/version');
    assert.deepEqual(res, { status: 400, body: 'Client sent an HTTP request to an HTTPS server.\n' });
    const log = srv.stderr();
    for (const [who, token] of [...Object.entries(tokens), ['wrong', wrongToken]]) {
      assert.ok(!log.includes(token!), `the ${who} token is in the log`);
    }
  });
});
