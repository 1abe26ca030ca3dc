// `svcplane wrapper --kubelet-url` end to end: a real `svcplane up`, a real wrapper for edge-0, and a
// kubelet stand-in (HTTPS, its own CA) in this process whose `/pods` answer the test changes. With the API
// server stopped, a pod of edge-0 reported with a new IP reaches a watch through the wrapper as exactly
// one MODIFIED of its slice, marked svcplane.io/offline-local-pods, and `svcplane explain` through the
// wrapper says the view was rewritten; with the API server started again, the wrapper serves the
// upstream's slices object by object, each change seen once. A kubelet that does not answer leaves the
// last views served, with one log line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { kubeletPod, startFakeKubelet, type FakeKubelet } from '../support/fake-kubelet.js';
import { kubectlFor, kubectlWatch, type KubectlWatch } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';
import { startWrapper, type TestWrapper } from './testing/wrapper.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const SLICES = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
const ANNOTATION = 'svcplane.io/offline-local-pods';

interface Slice {
  metadata: {
    name: string;
    resourceVersion?: string;
    managedFields?: unknown;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
  endpoints?: { addresses: string[]; nodeName?: string }[];
}
interface WatchEvent {
  type: string;
  object: Slice;
}

const ref = (name: string) => ({ kind: 'Pod', namespace: 'default', name, uid: `uid-${name}` });
const ips = (s: Slice | undefined) => (s?.endpoints ?? []).map((e) => e.addresses[0]).sort();
/** An object as compared across servers: each has resourceVersions and managedFields of its own. */
const comparable = (s: Slice) => {
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = s.metadata;
  return { ...s, metadata };
};

describe('svcplane wrapper --kubelet-url (offline: the node’s own pods)', () => {
  const work = mkdtempSync(join(tmpdir(), 'svcplane-offline-'));
  const home = join(work, 'home');
  mkdirSync(home);
  let up: TestServer;
  let kubelet: FakeKubelet;
  let wrapper: TestWrapper;
  let watch: KubectlWatch<WatchEvent> | undefined;

  before(async () => {
    kubelet = await startFakeKubelet();
    kubelet.pods = [kubeletPod('a', { node: 'edge-0', ip: '10.244.0.1' })];
    const caFile = join(work, 'kubelet-ca.crt');
    writeFileSync(caFile, kubelet.caPem);
    up = await startUp({ dataDir: join(work, 'up') });
    for (const name of ['edge-0', 'edge-1'])
      assert.equal((await call(up, 'POST', '/api/v1/nodes', { body: { metadata: { name } } })).status, 201);
    // Selectorless, so the slice and Endpoints are the test's own (no controller rewrites them).
    const svc = await call(up, 'POST', '/api/v1/namespaces/default/services', {
      body: { metadata: { name: 'web' }, spec: { ports: [{ name: 'http', port: 80, targetPort: 8080 }] } },
    });
    assert.equal(svc.status, 201, svc.text);
    const slice = await call(up, 'POST', SLICES, {
      body: {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          name: 'web-1',
          labels: { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'e2e' },
        },
        addressType: 'IPv4',
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        endpoints: [
          { addresses: ['10.244.0.1'], conditions: { ready: true }, nodeName: 'edge-0', targetRef: ref('a') },
          { addresses: ['10.244.1.1'], conditions: { ready: true }, nodeName: 'edge-1', targetRef: ref('r') },
        ],
      },
    });
    assert.equal(slice.status, 201, slice.text);
    const endpoints = await call(up, 'POST', '/api/v1/namespaces/default/endpoints', {
      body: {
        metadata: { name: 'web' },
        subsets: [
          {
            addresses: [
              { ip: '10.244.0.1', nodeName: 'edge-0', targetRef: ref('a') },
              { ip: '10.244.1.1', nodeName: 'edge-1', targetRef: ref('r') },
            ],
            ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
          },
        ],
      },
    });
    assert.equal(endpoints.status, 201, endpoints.text);
    wrapper = await startWrapper({
      upstreamKubeconfig: up.kubeconfig,
      hostname: 'edge-0',
      dataDir: join(work, 'wrapper'),
      args: [
        '--kubelet-url',
        kubelet.url,
        '--kubelet-certificate-authority',
        caFile,
        '--kubelet-poll-interval',
        '200ms',
      ],
    });
  });

  after(async () => {
    watch?.proc.kill('SIGKILL');
    await wrapper?.stop();
    await up?.stop();
    await kubelet?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const slicesThrough = async (srv: Pick<TestServer, 'kubeconfig'>): Promise<Slice[]> =>
    (
      JSON.parse(await kubectlFor(srv, home)(['get', 'endpointslices', '-n', 'default', '-o', 'json'])) as {
        items: Slice[];
      }
    ).items;
  const web1 = (events: readonly WatchEvent[]) => events.filter((e) => e.object.metadata.name === 'web-1');

  it('rewrites the slice of a pod with a new IP while the API server is away; serves the upstream’s when it is back', async () => {
    await until(
      'the wrapper serves web-1',
      30_000,
      async () => ips((await slicesThrough(wrapper)).find((s) => s.metadata.name === 'web-1')).length === 2,
    );
    watch = kubectlWatch<WatchEvent>(wrapper, home, ['endpointslices', '-n', 'default']);
    await until('the initial ADDED of web-1', 30_000, () => web1(watch!.events).length === 1);
    assert.equal(kubelet.requests.length, 0, 'a start whose upstream answers does not read the kubelet');

    // The node rebooted without its uplink: pod a is back with another IP.
    kubelet.pods = [kubeletPod('a', { node: 'edge-0', ip: '10.244.0.9' })];
    const port = up.port;
    await up.stop();
    const rewritten = await until('a MODIFIED of web-1 with the new IP', 30_000, () =>
      web1(watch!.events).find((e) => e.type === 'MODIFIED' && ips(e.object).includes('10.244.0.9')),
    );
    assert.deepEqual(ips(rewritten.object), ['10.244.0.9', '10.244.1.1']);
    assert.match(
      rewritten.object.metadata.annotations?.[ANNOTATION] ?? '',
      /^\{"since":"[^"]+","endpoints":1\}$/,
    );
    // More polls with the same answer change nothing.
    const polled = kubelet.requests.length;
    await until('three more polls', 10_000, () => kubelet.requests.length >= polled + 3);
    assert.deepEqual(
      web1(watch.events).map((e) => e.type),
      ['ADDED', 'MODIFIED'],
      'exactly one MODIFIED while offline',
    );
    assert.equal((wrapper.stderr().match(/upstream away: rewriting/g) ?? []).length, 1, wrapper.stderr());

    // The metrics count it: the slice and the Endpoints rewritten, the polls made.
    const kc = parse(readFileSync(wrapper.kubeconfig, 'utf8')) as {
      clusters: { cluster: Record<string, string> }[];
      users: { user: { token: string } }[];
    };
    const metrics = await call(
      {
        url: wrapper.url,
        token: kc.users[0]!.user.token,
        ca: Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data']!, 'base64').toString(),
      },
      'GET',
      '/metrics',
    );
    assert.match(metrics.text, /^svcplane_wrapper_offline_rewritten_objects 2$/m);
    assert.match(metrics.text, /^svcplane_wrapper_kubelet_polls_total [1-9]/m);
    assert.match(metrics.text, /^svcplane_wrapper_kubelet_poll_failures_total 0$/m);

    // explain, through the wrapper, says the view was rewritten from the kubelet.
    const explained = spawnSync(
      process.execPath,
      [BIN, 'explain', 'service/web', '--node', 'edge-0', '--kubeconfig', wrapper.kubeconfig, '-o', 'json'],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(explained.status, 0, explained.stderr);
    const conditions = (JSON.parse(explained.stdout) as { conditions: { type: string; objects: string[] }[] })
      .conditions;
    assert.deepEqual(
      conditions.map((c) => [c.type, c.objects]),
      [['OfflineLocalPods', ['web-1']]],
    );
    const text = spawnSync(
      process.execPath,
      [BIN, 'explain', 'service/web', '--node', 'edge-0', '--kubeconfig', wrapper.kubeconfig],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.match(
      text.stdout,
      /Condition OfflineLocalPods=True \(RewrittenFromKubelet\): rewritten from the node's kubelet/,
    );

    // The API server is back: after the relist, the upstream's slices, object by object.
    up = await startUp({ dataDir: join(work, 'up'), args: ['--secure-port', String(port)] });
    await until('web-1 as the upstream has it again', 60_000, () =>
      web1(watch!.events).find((e) => e.type === 'MODIFIED' && ips(e.object).includes('10.244.0.1')),
    );
    const upstream = await slicesThrough(up);
    await until('every slice as the upstream has it', 30_000, async () => {
      const served = await slicesThrough(wrapper);
      return served.length === upstream.length;
    });
    const served = new Map((await slicesThrough(wrapper)).map((s) => [s.metadata.name, comparable(s)]));
    for (const s of upstream) assert.deepEqual(served.get(s.metadata.name), comparable(s), s.metadata.name);
    assert.equal(served.get('web-1')?.metadata.annotations?.[ANNOTATION], undefined);
    await until('the log says the rewriting stopped', 10_000, () =>
      /upstream back: the endpoints rewritten from the kubelet/.test(wrapper.stderr()),
    );
    assert.deepEqual(
      web1(watch.events).map((e) => e.type),
      ['ADDED', 'MODIFIED', 'MODIFIED'],
      'each change once',
    );
  });

  it('a kubelet that does not answer: the last views stay served, and one log line says so', async () => {
    const before = (await slicesThrough(wrapper)).find((s) => s.metadata.name === 'web-1')!;
    kubelet.failWith = 503;
    kubelet.pods = [kubeletPod('a', { node: 'edge-0', ip: '10.244.0.7' })];
    const asked = kubelet.requests.length;
    await up.stop();
    await until('four failed polls', 30_000, () => kubelet.requests.length >= asked + 4);
    const after = (await slicesThrough(wrapper)).find((s) => s.metadata.name === 'web-1')!;
    assert.deepEqual(comparable(after), comparable(before));
    assert.equal(
      (wrapper.stderr().match(/the kubelet does not answer: serving the last views/g) ?? []).length,
      1,
      wrapper.stderr(),
    );
  });
});
