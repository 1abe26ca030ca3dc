// kubectl 1.33's generator commands (create namespace / service / deployment) send their bodies as
// Kubernetes protobuf. This runs them against a real `svcplane up` and reads the objects back as
// JSON; then checks, with hand-built protobuf bodies, the client-go event recorder's events.k8s.io
// Event and how bad or unsupported protobuf bodies are answered.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { enc, envelope, objectMeta, timestamp } from '../../src/api/protobuf/testing/encode.js';
import { call, startUp, type TestServer } from './testing/server.js';

const KUBECTL = '/usr/lib/google-cloud-sdk/bin/kubectl.1.33';
const PROTOBUF = 'application/vnd.kubernetes.protobuf';

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

describe('kubectl 1.33 protobuf request bodies', () => {
  let srv: TestServer;
  let home: string;

  const kubectl = (...args: string[]): Promise<Run> =>
    new Promise((resolve) => {
      execFile(
        KUBECTL,
        [`--cache-dir=${path.join(home, 'cache')}`, ...args],
        {
          env: { PATH: process.env['PATH'] ?? '', HOME: home, KUBECONFIG: srv.kubeconfig },
          cwd: home,
          timeout: 30_000,
          maxBuffer: 16 * 1024 * 1024,
        },
        (err, stdout, stderr) => {
          const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
          resolve({ code, stdout, stderr });
        },
      );
    });
  const ok = async (...args: string[]): Promise<string> => {
    const r = await kubectl(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
    return r.stdout;
  };
  const getJson = async <T>(...args: string[]): Promise<T> =>
    JSON.parse(await ok('get', ...args, '-o', 'json')) as T;

  before(async () => {
    assert.ok(
      existsSync(KUBECTL),
      `${KUBECTL} is missing: this test needs kubectl 1.33 (it sends protobuf bodies); install it there`,
    );
    home = mkdtempSync(path.join(tmpdir(), 'svcplane-kubectl-pb-'));
    mkdirSync(path.join(home, 'cache'), { recursive: true });
    srv = await startUp();
  });
  after(async () => {
    await srv?.destroy();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  });

  it('create namespace sends protobuf (seen at -v=8) and is created', async () => {
    const r = await kubectl('create', 'namespace', 'x', '-v=8');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'namespace/x created\n');
    // The POST's request headers, as klog prints them, carry the protobuf Content-Type.
    const post = r.stderr.indexOf('verb="POST"');
    assert.ok(post >= 0, `no POST in the -v=8 log:\n${r.stderr}`);
    const headers = r.stderr.slice(post, r.stderr.indexOf('"Response"', post));
    assert.match(headers, /Content-Type: application\/vnd\.kubernetes\.protobuf/);
    const ns = await getJson<{ metadata: { name: string }; status: { phase: string } }>('namespace', 'x');
    assert.equal(ns.metadata.name, 'x');
    assert.equal(ns.status.phase, 'Active');
  });

  it('create service clusterip keeps ports, targetPort, selector and labels', async () => {
    assert.equal(
      await ok('create', 'service', 'clusterip', 'web', '--tcp=80:8080', '-n', 'x'),
      'service/web created\n',
    );
    const svc = await getJson<{
      metadata: { labels: Record<string, string>; namespace: string };
      spec: Record<string, unknown>;
    }>('service', 'web', '-n', 'x');
    assert.equal(svc.metadata.namespace, 'x');
    assert.deepEqual(svc.metadata.labels, { app: 'web' });
    assert.equal(svc.spec['type'], 'ClusterIP');
    assert.deepEqual(svc.spec['selector'], { app: 'web' });
    assert.deepEqual(svc.spec['ports'], [{ name: '80-8080', port: 80, protocol: 'TCP', targetPort: 8080 }]);
  });

  it('create deployment keeps replicas, selector, image and container port', async () => {
    assert.equal(
      await ok('create', 'deployment', 'web', '--image=nginx', '--replicas=2', '--port=80', '-n', 'x'),
      'deployment.apps/web created\n',
    );
    interface Deploy {
      metadata: { labels: Record<string, string> };
      spec: {
        replicas: number;
        selector: unknown;
        strategy: { type: string };
        template: {
          metadata: { labels: Record<string, string> };
          spec: { containers: { name: string; image: string; ports: unknown; resources: unknown }[] };
        };
      };
    }
    const d = await getJson<Deploy>('deployment', 'web', '-n', 'x');
    assert.deepEqual(d.metadata.labels, { app: 'web' });
    assert.equal(d.spec.replicas, 2);
    assert.deepEqual(d.spec.selector, { matchLabels: { app: 'web' } });
    assert.equal(d.spec.strategy.type, 'RollingUpdate');
    assert.deepEqual(d.spec.template.metadata.labels, { app: 'web' });
    const [c] = d.spec.template.spec.containers;
    assert.equal(c?.name, 'nginx');
    assert.equal(c?.image, 'nginx');
    assert.deepEqual(c?.ports, [{ containerPort: 80, protocol: 'TCP' }]);
    assert.deepEqual(c?.resources, {});
    const table = await ok('get', 'deployments', '-n', 'x');
    assert.match(table, /^web\s+\d+\/2\s/m);
  });

  it('takes an events.k8s.io/v1 Event as client-go event recorders post it', async () => {
    const raw = enc()
      .message(1, objectMeta('node-1.17a8c4e5d0a3b2c1', 'default'))
      .message(2, timestamp(1_700_000_000, 123_456_000))
      .string(4, 'kube-proxy')
      .string(5, 'kube-proxy-node-1')
      .string(6, 'StartKubeProxy')
      .string(7, 'Starting')
      .message(8, enc().string(1, 'Node').string(3, 'node-1').string(4, 'node-1'))
      .string(10, '')
      .string(11, 'Normal')
      .message(12, enc().string(1, '').string(2, ''))
      .message(13, enc())
      .message(14, enc())
      .varint(15, 0);
    const r = await call(srv, 'POST', '/apis/events.k8s.io/v1/namespaces/default/events', {
      rawBody: Buffer.from(envelope('events.k8s.io/v1', 'Event', raw)),
      contentType: PROTOBUF,
      accept: `${PROTOBUF}, */*`,
    });
    assert.equal(r.status, 201, r.text);
    assert.match(String(r.headers['content-type']), /application\/json/);
    const ev = await getJson<Record<string, unknown>>(
      'events.v1.events.k8s.io',
      'node-1.17a8c4e5d0a3b2c1',
      '-n',
      'default',
    );
    assert.equal(ev['eventTime'], '2023-11-14T22:13:20.123456Z');
    assert.equal(ev['reportingController'], 'kube-proxy');
    assert.equal(ev['action'], 'StartKubeProxy');
    assert.deepEqual(ev['regarding'], { kind: 'Node', name: 'node-1', uid: 'node-1' });
  });

  it('takes protobuf DeleteOptions on DELETE: preconditions, grace period, policy; bad ones refused', async () => {
    const del = (p: string, body: Uint8Array): ReturnType<typeof call> =>
      call(srv, 'DELETE', p, { rawBody: Buffer.from(body), contentType: PROTOBUF });
    const services = '/api/v1/namespaces/x/services';
    const created = await call(srv, 'POST', services, {
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'doomed' },
        spec: { ports: [{ port: 80 }] },
      },
    });
    assert.equal(created.status, 201, created.text);
    const uid = String((created.json()['metadata'] as Record<string, unknown>)['uid']);

    const wrongUid = await del(
      `${services}/doomed`,
      envelope('v1', 'DeleteOptions', enc().message(2, enc().string(1, 'not-the-uid'))),
    );
    assert.equal(wrongUid.status, 409, wrongUid.text);
    assert.match(String(wrongUid.json()['message']), /Precondition failed: UID in precondition: not-the-uid/);

    const badPolicy = await del(
      `${services}/doomed`,
      envelope('v1', 'DeleteOptions', enc().string(4, 'Sometimes')),
    );
    assert.equal(badPolicy.status, 422, badPolicy.text);

    const dry = await del(`${services}/doomed`, envelope('v1', 'DeleteOptions', enc().string(5, 'All')));
    assert.equal(dry.status, 200, dry.text);
    assert.equal((await call(srv, 'GET', `${services}/doomed`)).status, 200, 'a dry run deletes nothing');

    const unknown = await del(`${services}/doomed`, envelope('v1', 'DeleteOptions', enc().string(42, 'x')));
    assert.equal(unknown.status, 415, unknown.text);
    const garbage = await del(`${services}/doomed`, Uint8Array.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x7f]));
    assert.equal(garbage.status, 400, garbage.text);
    const notOptions = await del(`${services}/doomed`, envelope('v1', 'Service', enc()));
    assert.equal(notOptions.status, 400, notOptions.text);
    assert.equal(
      (await call(srv, 'GET', `${services}/doomed`)).status,
      200,
      'refused deletes delete nothing',
    );

    const ok = await del(
      `${services}/doomed`,
      envelope(
        'v1',
        'DeleteOptions',
        enc().varint(1, 0).message(2, enc().string(1, uid)).string(4, 'Background'),
      ),
    );
    assert.equal(ok.status, 200, ok.text);
    assert.equal((await call(srv, 'GET', `${services}/doomed`)).status, 404);
  });

  it('answers bad protobuf with 400 and unsupported protobuf with 415, saying what and why', async () => {
    const post = (p: string, body: Uint8Array): ReturnType<typeof call> =>
      call(srv, 'POST', p, { rawBody: Buffer.from(body), contentType: PROTOBUF });
    const services = '/api/v1/namespaces/x/services';

    const garbage = await post(services, Uint8Array.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x7f]));
    assert.equal(garbage.status, 400, garbage.text);
    assert.equal(garbage.json()['reason'], 'BadRequest');

    const notK8s = await post(services, new TextEncoder().encode('{"kind":"Service"}'));
    assert.equal(notK8s.status, 400, notK8s.text);

    const wrongKind = await post(services, envelope('v1', 'Namespace', enc().message(1, objectMeta('y'))));
    assert.equal(wrongKind.status, 400, wrongKind.text);
    assert.match(String(wrongKind.json()['message']), /v1 Namespace.*v1 Service/);

    const unknownField = await post(
      services,
      envelope('v1', 'Service', enc().message(1, objectMeta('odd')).message(2, enc().string(99, 'x'))),
    );
    assert.equal(unknownField.status, 415, unknownField.text);
    const status = unknownField.json();
    assert.equal(status['reason'], 'UnsupportedMediaType');
    assert.match(String(status['message']), /ServiceSpec field 99/);
    assert.match(String(status['message']), /application\/json/);
    const notCreated = await call(srv, 'GET', `${services}/odd`);
    assert.equal(notCreated.status, 404);

    const lease = await post(
      '/apis/coordination.k8s.io/v1/namespaces/x/leases',
      envelope('coordination.k8s.io/v1', 'Lease', enc().message(1, objectMeta('l'))),
    );
    assert.equal(lease.status, 415, lease.text);
    assert.match(String(lease.json()['message']), /Lease/);

    // PATCH bodies stay JSON: a protobuf patch is refused as before.
    const patch = await call(srv, 'PATCH', `${services}/web`, {
      rawBody: Buffer.from(envelope('v1', 'Service', enc())),
      contentType: PROTOBUF,
    });
    assert.equal(patch.status, 415, patch.text);
  });
});
