// `svcplane wrapper --proxy-upstream` end to end: a real `svcplane up` with static tokens and an ABAC
// policy (the wrapper's upstream identity may read what it serves and impersonate users and groups;
// alice may only write events), and real wrappers with and without the flag. What the wrapper does not
// serve goes upstream as the client (so the upstream's 403 names alice, not the wrapper); anonymous
// clients and the plain-HTTP port are never forwarded; without the flag the wrapper refuses as before.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { policyLine } from '../../src/apiserver/auth/abac.js';
import { renderKubeconfig } from '../../src/apiserver/auth/kubeconfig.js';
import { formatTokenFileRecord } from '../../src/apiserver/auth/token-file.js';
import { kubectlFor } from './testing/kubectl.js';
import { call, startUp, type Reply, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;

interface Wrapper {
  readonly url: string;
  readonly insecureUrl: string;
  readonly ca: string;
  readonly proc: ChildProcess;
  stop(): Promise<void>;
}

const token = (): string => randomBytes(24).toString('base64url');

/** `svcplane wrapper` on free ports, with a tokens.csv of our own (the reader token and alice). */
async function startWrapper(
  dataDir: string,
  upstreamKubeconfig: string,
  tokensCsv: string,
  extra: string[],
): Promise<Wrapper> {
  mkdirSync(join(dataDir, 'pki'), { recursive: true, mode: 0o700 });
  writeFileSync(join(dataDir, 'pki', 'tokens.csv'), tokensCsv, { mode: 0o600 });
  const proc = spawn(
    process.execPath,
    [
      BIN,
      'wrapper',
      '--kubeconfig',
      upstreamKubeconfig,
      '--hostname',
      'edge-0',
      '--bind-address',
      '127.0.0.1:0',
      '--insecure-bind-address',
      '127.0.0.1:0',
      '--data-dir',
      dataDir,
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const m = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`the wrapper did not start:\n${out}\n${err}`));
    }, 30_000);
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const hit = /at (https:\/\/\S+) and (http:\/\/\S+?); kubeconfig/.exec(out);
      if (hit !== null) {
        clearTimeout(timer);
        resolve(hit);
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the wrapper exited:\n${out}\n${err}`));
    });
  });
  return {
    url: m[1]!,
    insecureUrl: m[2]!,
    ca: readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8'),
    proc,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** A plain-HTTP request (the wrapper's --insecure-bind-address), no credentials. */
function plain(base: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, base), {
      method,
      headers: payload === undefined ? {} : { 'Content-Type': 'application/json' },
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d: Buffer) => (text += d.toString()));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          json: <T>() => JSON.parse(text) as T,
        }),
      );
    });
    req.on('error', reject);
    req.end(payload);
  });
}

const coreEvent = (name: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  involvedObject: { apiVersion: 'v1', kind: 'Node', name: 'edge-0' },
  reason: 'Proxied',
  message: 'through the wrapper',
  type: 'Normal',
});

const eventsV1 = (name: string): Record<string, unknown> => ({
  apiVersion: 'events.k8s.io/v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  eventTime: '2026-11-21T06:34:56.823Z',
  reportingController: 'example.com/e2e',
  reportingInstance: 'edge-0',
  action: 'Proxy',
  reason: 'Proxied',
  type: 'Normal',
  note: 'through the wrapper',
  regarding: { apiVersion: 'v1', kind: 'Node', name: 'edge-0' },
});

const message = (r: Reply): string => r.json<{ message?: string }>().message ?? '';

describe('svcplane wrapper --proxy-upstream', () => {
  const work = mkdtempSync(join(tmpdir(), 'svcplane-wrapper-proxy-'));
  const tokens = {
    admin: token(),
    wrapper: token(),
    alice: token(),
    reader: token(),
    aliceAtWrapper: token(),
    carolAtWrapper: token(),
  };
  let upstream: TestServer;
  let proxying: Wrapper;
  let refusing: Wrapper;
  const admin = (): TestServer => ({ ...upstream, token: tokens.admin });
  const aliceVia = (w: Wrapper) => ({ url: w.url, ca: w.ca, token: tokens.aliceAtWrapper });

  before(async () => {
    const tokenFile = join(work, 'upstream-tokens.csv');
    writeFileSync(
      tokenFile,
      [
        formatTokenFileRecord(tokens.admin, { name: 'admin', uid: 'admin', groups: ['system:masters'] }),
        formatTokenFileRecord(tokens.wrapper, { name: 'edge-wrapper', uid: 'edge-wrapper', groups: [] }),
        formatTokenFileRecord(tokens.alice, { name: 'alice', uid: 'alice', groups: ['edge-devs'] }),
      ].join('\n') + '\n',
    );
    const policyFile = join(work, 'policy.jsonl');
    const w = 'edge-wrapper';
    writeFileSync(
      policyFile,
      [
        // The wrapper reads what it serves, and may impersonate users and groups; nothing else.
        policyLine({ user: w, readonly: true, apiGroup: '', namespace: '*', resource: 'services' }),
        policyLine({ user: w, readonly: true, apiGroup: '', namespace: '*', resource: 'endpoints' }),
        policyLine({
          user: w,
          readonly: true,
          apiGroup: 'discovery.k8s.io',
          namespace: '*',
          resource: 'endpointslices',
        }),
        policyLine({ user: w, readonly: true, apiGroup: '', namespace: '*', resource: 'nodes' }),
        policyLine({ user: w, readonly: true, nonResourcePath: '*' }),
        policyLine({ user: w, apiGroup: '', namespace: '*', resource: 'users' }),
        policyLine({ user: w, apiGroup: '', namespace: '*', resource: 'groups' }),
        // alice writes events, and nothing else.
        policyLine({ user: 'alice', apiGroup: '', namespace: '*', resource: 'events' }),
        policyLine({ user: 'alice', apiGroup: 'events.k8s.io', namespace: '*', resource: 'events' }),
        // carol reads discovery and pods.
        policyLine({ user: 'carol', readonly: true, nonResourcePath: '*' }),
        policyLine({ user: 'carol', readonly: true, apiGroup: '', namespace: '*', resource: 'pods' }),
      ].join('\n') + '\n',
    );
    upstream = await startUp({
      args: [
        '--token-auth-file',
        tokenFile,
        '--authorization-mode',
        'ABAC',
        '--authorization-policy-file',
        policyFile,
      ],
    });
    const upstreamKubeconfig = join(work, 'upstream.kubeconfig');
    writeFileSync(
      upstreamKubeconfig,
      renderKubeconfig({ server: upstream.url, caPem: upstream.ca, user: w, token: tokens.wrapper }),
    );
    const wrapperTokens =
      [
        formatTokenFileRecord(tokens.reader, {
          name: 'wrapper-reader',
          uid: 'wrapper-reader',
          groups: ['svcplane:wrapper-readers'],
        }),
        formatTokenFileRecord(tokens.aliceAtWrapper, { name: 'alice', uid: 'alice', groups: ['edge-devs'] }),
        formatTokenFileRecord(tokens.carolAtWrapper, { name: 'carol', uid: 'carol', groups: [] }),
      ].join('\n') + '\n';
    proxying = await startWrapper(join(work, 'proxying'), upstreamKubeconfig, wrapperTokens, [
      '--proxy-upstream',
    ]);
    refusing = await startWrapper(join(work, 'refusing'), upstreamKubeconfig, wrapperTokens, []);
  });

  after(async () => {
    await proxying?.stop();
    await refusing?.stop();
    await upstream?.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  const kubectlAs = (w: Wrapper, name: string, user: string, userToken: string) => {
    const home = join(work, `home-${name}`);
    mkdirSync(home, { recursive: true });
    const kubeconfig = join(home, 'kubeconfig');
    writeFileSync(kubeconfig, renderKubeconfig({ server: w.url, caPem: w.ca, user, token: userToken }));
    return kubectlFor({ kubeconfig }, home);
  };
  const aliceKubectl = (w: Wrapper, name: string) => kubectlAs(w, name, 'alice', tokens.aliceAtWrapper);

  it('takes discovery from upstream as the client, so kubectl finds what it forwards; its own when upstream refuses', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'via-wrapper', namespace: 'default' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    };
    const made = await call(admin(), 'POST', '/api/v1/namespaces/default/pods', { body: pod });
    assert.equal(made.status, 201, made.text);
    // carol may read discovery and pods upstream: both pass through the wrapper, as carol.
    const carol = kubectlAs(proxying, 'carol', 'carol', tokens.carolAtWrapper);
    assert.match(await carol(['get', 'pods', '-o', 'name']), /^pod\/via-wrapper$/m);
    // alice may not read discovery upstream: the wrapper's own documents, which have no pods.
    await assert.rejects(aliceKubectl(proxying, 'alice-discovery')(['get', 'pods']), (err: Error) => {
      assert.match(err.message, /the server doesn't have a resource type "pods"/);
      return true;
    });
    // Without the flag, discovery is the wrapper's own for carol too.
    await assert.rejects(
      kubectlAs(refusing, 'carol-refusing', 'carol', tokens.carolAtWrapper)(['get', 'pods']),
      (err: Error) => {
        assert.match(err.message, /the server doesn't have a resource type "pods"/);
        return true;
      },
    );
  });

  it("passes alice's namespace create upstream, where the 403 names alice", async () => {
    const kubectl = aliceKubectl(proxying, 'proxying');
    await assert.rejects(kubectl(['create', 'namespace', 'x']), (err: Error) => {
      assert.match(
        err.message,
        /Error from server \(Forbidden\): namespaces is forbidden: User "alice" cannot create resource "namespaces" in API group "" at the cluster scope: No policy matched\./,
      );
      assert.doesNotMatch(err.message, /edge-wrapper|wrapper serves only/);
      return true;
    });
    assert.equal((await call(admin(), 'GET', '/api/v1/namespaces/x')).status, 404);
  });

  it("passes alice's event POSTs (core and events.k8s.io) upstream, as alice", async () => {
    const core = await call(aliceVia(proxying), 'POST', '/api/v1/namespaces/default/events', {
      body: coreEvent('proxied.1'),
    });
    assert.equal(core.status, 201, core.text);
    assert.match(String(core.headers['content-type']), /^application\/json/);
    assert.equal(core.json<{ metadata: { name: string } }>().metadata.name, 'proxied.1');
    const v1 = await call(aliceVia(proxying), 'POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      body: eventsV1('proxied.2'),
    });
    assert.equal(v1.status, 201, v1.text);
    // They are upstream.
    assert.equal((await call(admin(), 'GET', '/api/v1/namespaces/default/events/proxied.1')).status, 200);
    assert.equal(
      (await call(admin(), 'GET', '/apis/events.k8s.io/v1/namespaces/default/events/proxied.2')).status,
      200,
    );
    // The wrapper itself may not write events: the request really went as alice (who may).
    const asWrapper = await call(
      { ...upstream, token: tokens.wrapper },
      'POST',
      '/api/v1/namespaces/default/events',
      {
        body: coreEvent('as-wrapper'),
      },
    );
    assert.equal(asWrapper.status, 403);
  });

  it('streams a watch from upstream', async () => {
    const lines: string[] = [];
    const req = httpsRequest(new URL('/api/v1/namespaces/default/events?watch=true', proxying.url), {
      agent: new Agent({ ca: proxying.ca, keepAlive: false }),
      headers: { Authorization: `Bearer ${tokens.aliceAtWrapper}` },
    });
    const head = await new Promise<{ status: number; type: string }>((resolve, reject) => {
      req.on('response', (res) => {
        res.setEncoding('utf8');
        let buf = '';
        res.on('data', (d: string) => {
          buf += d;
          const parts = buf.split('\n');
          buf = parts.pop() ?? '';
          lines.push(...parts);
        });
        res.on('error', () => undefined);
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']) });
      });
      req.on('error', reject);
      req.end();
    });
    try {
      assert.equal(head.status, 200);
      assert.match(head.type, /^application\/json/);
      const made = await call(admin(), 'POST', '/api/v1/namespaces/default/events', {
        body: coreEvent('watched.1'),
      });
      assert.equal(made.status, 201, made.text);
      await until('the watch event through the wrapper', 15_000, () =>
        lines.some((l) => l.includes('"watched.1"') && l.includes('"ADDED"')),
      );
    } finally {
      req.destroy();
    }
  });

  it('does not let a client choose whom the wrapper impersonates', async () => {
    const r = await call(aliceVia(proxying), 'POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'smuggled' } },
      headers: { 'Impersonate-User': 'admin', 'Impersonate-Group': 'system:masters' },
    });
    assert.equal(r.status, 403, r.text);
    assert.match(message(r), /^users "admin" is forbidden: User "alice" cannot impersonate resource "users"/);
    assert.equal((await call(admin(), 'GET', '/api/v1/namespaces/smuggled')).status, 404);
  });

  it("never forwards anonymous requests: 401 on TLS, the wrapper's own 403 on the insecure port", async () => {
    const anon = await call(aliceVia(proxying), 'POST', '/api/v1/namespaces/default/events', {
      token: null,
      body: coreEvent('anon.1'),
    });
    assert.equal(anon.status, 401);
    const insecure = await plain(
      proxying.insecureUrl,
      'POST',
      '/api/v1/namespaces/default/events',
      coreEvent('anon.2'),
    );
    assert.equal(insecure.status, 403, insecure.text);
    assert.match(
      message(insecure),
      /User "system:anonymous" cannot create resource "events".*the wrapper serves only/,
    );
    for (const name of ['anon.1', 'anon.2'])
      assert.equal((await call(admin(), 'GET', `/api/v1/namespaces/default/events/${name}`)).status, 404);
    // Reads the wrapper serves still work there.
    assert.equal((await plain(proxying.insecureUrl, 'GET', '/api/v1/services')).status, 200);
  });

  it('without --proxy-upstream, refuses the same requests with its own 403', async () => {
    const kubectl = aliceKubectl(refusing, 'refusing');
    await assert.rejects(kubectl(['create', 'namespace', 'y']), (err: Error) => {
      assert.match(
        err.message,
        /namespaces is forbidden: User "alice" cannot create resource "namespaces" in API group "" at the cluster scope: the wrapper serves only get, list and watch/,
      );
      return true;
    });
    const ev = await call(aliceVia(refusing), 'POST', '/api/v1/namespaces/default/events', {
      body: coreEvent('refused.1'),
    });
    assert.equal(ev.status, 403, ev.text);
    assert.match(message(ev), /the wrapper serves only get, list and watch/);
    assert.equal((await call(admin(), 'GET', '/api/v1/namespaces/default/events/refused.1')).status, 404);
  });
});
