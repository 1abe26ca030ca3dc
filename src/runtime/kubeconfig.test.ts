// Loading a kubeconfig: static credentials come from a child process, and no worker thread is started;
// an exec plugin's are asked for per request from a worker thread that stays but never keeps the process
// alive; a missing file, malformed YAML or an unknown context throw what they always did.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  crashKubeconfigWorkers,
  kubeconfigChildRuns,
  kubeconfigTransport,
  liveKubeconfigWorkers,
  loadKubeconfig,
} from './kubeconfig.js';

const CA = '-----BEGIN CERTIFICATE-----\nnot really a certificate\n-----END CERTIFICATE-----\n';

let dir: string;
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'svcplane-kubeconfig-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** A kubeconfig with one context `main` (the current one) for `user`, written to a fresh file. */
let files = 0;
function kubeconfig(user: object, cluster: object = {}, namespace?: string): string {
  const file = path.join(dir, `config-${files++}`);
  // JSON is YAML: no need for a YAML writer.
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443', ...cluster } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'main', context: { cluster: 'c', user: 'u', ...(namespace ? { namespace } : {}) } }],
    'current-context': 'main',
  };
  writeFileSync(file, JSON.stringify(config));
  return file;
}

/** Waits (a little) for the worker threads to have exited. */
async function noWorkersLeft(): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (liveKubeconfigWorkers() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.equal(liveKubeconfigWorkers(), 0, 'a kubeconfig worker is still running');
}

/** An exec credential plugin: prints a token counting its runs (tok-1, tok-2, ...), or fails. */
function execPlugin(fail = false): object {
  const script = path.join(dir, `plugin-${files++}.mjs`);
  const counter = `${script}.count`;
  writeFileSync(counter, '0');
  writeFileSync(
    script,
    fail
      ? `process.stderr.write('no login for you'); process.exit(1);`
      : `import { readFileSync, writeFileSync } from 'node:fs';
const n = Number(readFileSync(${JSON.stringify(counter)}, 'utf8')) + 1;
writeFileSync(${JSON.stringify(counter)}, String(n));
console.log(JSON.stringify({
  apiVersion: 'client.authentication.k8s.io/v1',
  kind: 'ExecCredential',
  status: { token: 'tok-' + n },
}));`,
  );
  return {
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: process.execPath,
      args: [script],
      interactiveMode: 'Never',
    },
  };
}

describe('loadKubeconfig', () => {
  it('a static token and CA: server, namespace and credentials at once, and no worker afterwards', async () => {
    const caFile = path.join(dir, 'ca.crt');
    writeFileSync(caFile, CA);
    const runs = kubeconfigChildRuns();
    const kc = loadKubeconfig({
      path: kubeconfig({ token: 'static-token' }, { 'certificate-authority': caFile }, 'team-a'),
    });
    // Read by a child process: no worker thread was started at all.
    assert.equal(kubeconfigChildRuns(), runs + 1);
    assert.equal(liveKubeconfigWorkers(), 0);
    assert.equal(kc.server, 'https://127.0.0.1:6443');
    assert.equal(kc.namespace, 'team-a');
    const creds = await kc.credentials();
    assert.deepEqual(creds.headers, { Authorization: 'Bearer static-token' });
    assert.ok(Buffer.isBuffer(creds.ca), 'the CA arrives as a Buffer');
    assert.equal(String(creds.ca), CA);
    assert.equal(creds.rejectUnauthorized, undefined);
    assert.equal(creds.cert, undefined);
    await noWorkersLeft();
    assert.deepEqual(await kc.credentials(), creds, 'the same credentials after the worker has gone');
    kc.close();
  });

  it('client certificates, a token file and insecure-skip-tls-verify are static too', async () => {
    const tokenFile = path.join(dir, 'token');
    writeFileSync(tokenFile, 'file-token');
    const kc = loadKubeconfig({
      path: kubeconfig(
        {
          'client-certificate-data': Buffer.from('CERT').toString('base64'),
          'client-key-data': Buffer.from('KEY').toString('base64'),
          'token-file': tokenFile,
        },
        { 'insecure-skip-tls-verify': true },
      ),
    });
    assert.equal(kc.namespace, undefined);
    const creds = await kc.credentials();
    assert.equal(String(creds.cert), 'CERT');
    assert.equal(String(creds.key), 'KEY');
    assert.equal(creds.rejectUnauthorized, false);
    assert.deepEqual(creds.headers, { Authorization: 'Bearer file-token' });
    await noWorkersLeft();
  });

  it('an exec plugin: the worker stays and runs it for each credentials() call', async () => {
    const kc = loadKubeconfig({ path: kubeconfig(execPlugin()) });
    assert.equal(kc.server, 'https://127.0.0.1:6443');
    assert.deepEqual((await kc.credentials()).headers, { Authorization: 'Bearer tok-1' });
    assert.deepEqual((await kc.credentials()).headers, { Authorization: 'Bearer tok-2' });
    assert.equal(liveKubeconfigWorkers(), 1);
    kc.close();
    await noWorkersLeft();
    await assert.rejects(kc.credentials(), /closed/);
  });

  it('an exec plugin that fails: credentials() rejects with what it said, and the next call asks again', async () => {
    const kc = loadKubeconfig({ path: kubeconfig(execPlugin(true)) });
    await assert.rejects(kc.credentials(), /no login for you/);
    await assert.rejects(kc.credentials(), /no login for you/);
    kc.close();
    await noWorkersLeft();
  });

  it('the worker an exec plugin keeps never holds the process open', async () => {
    const file = kubeconfig(execPlugin());
    const module = new URL('./kubeconfig.ts', import.meta.url).href;
    const code = `const { loadKubeconfig } = await import(${JSON.stringify(module)});
const kc = loadKubeconfig({ path: ${JSON.stringify(file)} });
console.log((await kc.credentials()).headers.Authorization);`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += String(d)));
    const killer = setTimeout(() => child.kill(), 30_000);
    const [code_, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('exit', (c, s) => resolve([c, s])),
    );
    clearTimeout(killer);
    assert.equal(signal, null, 'the process had to be killed: the worker kept it alive');
    assert.equal(code_, 0);
    assert.equal(out.trim(), 'Bearer tok-1');
  });

  it('a missing file throws what reading it throws', async () => {
    const missing = path.join(dir, 'nope');
    assert.throws(() => loadKubeconfig({ path: missing }), {
      message: `ENOENT: no such file or directory, open '${missing}'`,
      code: 'ENOENT',
    });
    await noWorkersLeft();
  });

  it('malformed YAML throws the parser error', async () => {
    const bad = path.join(dir, 'bad');
    writeFileSync(bad, 'not: [valid\n');
    assert.throws(() => loadKubeconfig({ path: bad }), /^YAMLException: unexpected end of the stream/);
    await noWorkersLeft();
  });

  it('an unknown --context is named as kubectl names it; no context at all: no current cluster', async () => {
    const file = kubeconfig({ token: 't' });
    assert.throws(() => loadKubeconfig({ path: file, context: 'elsewhere' }), {
      message: 'context "elsewhere" does not exist',
    });
    const noContext = path.join(dir, 'no-context');
    writeFileSync(noContext, readFileSync(file, 'utf8').replace('"current-context":"main"', '"x":"y"'));
    assert.throws(() => loadKubeconfig({ path: noContext }), {
      message: 'the kubeconfig has no current cluster',
    });
    assert.equal(loadKubeconfig({ path: file, context: 'main' }).server, 'https://127.0.0.1:6443');
    await noWorkersLeft();
  });
});

describe('kubeconfigTransport', () => {
  let server: Server;
  let seen: IncomingMessage | undefined;
  let url: string;
  before(async () => {
    server = createServer((req, res) => {
      seen = req;
      res.end('{}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it("sends the kubeconfig's token to its server", async () => {
    const transport = kubeconfigTransport({
      // client-node refuses plain http unless TLS verification is off
      path: kubeconfig({ token: 'sent' }, { server: url, 'insecure-skip-tls-verify': true }, 'ns'),
    });
    assert.equal(transport.server, url);
    assert.equal(transport.namespace, 'ns');
    const res = await transport.send({ method: 'GET', path: '/api' });
    res.body.resume();
    assert.equal(res.status, 200);
    assert.equal(seen?.headers.authorization, 'Bearer sent');
    transport.close();
  });

  it('an exec plugin whose worker crashed: the next request loads the kubeconfig again and goes out', async () => {
    const file = kubeconfig(execPlugin(), { server: url, 'insecure-skip-tls-verify': true });
    const transport = kubeconfigTransport({ path: file });
    (await transport.send({ method: 'GET', path: '/api' })).body.resume();
    assert.match(String(seen?.headers.authorization), /^Bearer tok-\d+$/);
    await crashKubeconfigWorkers();
    assert.equal(liveKubeconfigWorkers(), 0);
    seen = undefined;
    const res = await transport.send({ method: 'GET', path: '/api' });
    res.body.resume();
    assert.equal(res.status, 200);
    assert.match(String((seen as IncomingMessage | undefined)?.headers.authorization), /^Bearer tok-\d+$/);
    assert.equal(liveKubeconfigWorkers(), 1);
    transport.close();
    await noWorkersLeft();
  });

  it('plain http with TLS verification on fails each request, as client-node has it', async () => {
    const transport = kubeconfigTransport({ path: kubeconfig({ token: 't' }, { server: url }) });
    await assert.rejects(transport.send({ method: 'GET', path: '/api' }), /HTTP protocol is not allowed/);
    transport.close();
  });
});
