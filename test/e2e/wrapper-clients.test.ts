// `svcplane wrapper` as its clients see it, beyond wrapper-kubectl.test.ts:
// - a node relabel, counted exactly: an open `kubectl get endpointslices --watch` on the wrapper gets one
//   MODIFIED for each slice whose served form the relabel changes, and nothing for the others; a relabel
//   of a key no rule reads sends nothing at all. The end of each step is marked by a sentinel change made
//   after it upstream: the wrapper's watch is one ordered stream, so every event the relabel caused
//   arrives before the sentinel's. (The service-group test follows a relabel too, but there the grid
//   controllers move pods at the same time, so its events cannot be counted.)
// - client certificates signed by the wrapper's CA: the readers group reads, another group gets 403,
//   another CA's certificate 401; /version answers;
// - no log line per request, and /metrics counting the views and the relists.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateCA, issueClientCert, type CertKeyPair } from '../../src/apiserver/auth/pki.js';
import { kubectlFor, kubectlWatch, type KubectlWatch } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';
import { startWrapper, type TestWrapper } from './testing/wrapper.js';

const UNIT = 'e2e.svcplane.io/unit';
const SVC = 'relabel';
const WAIT = 30_000;

/** A GET to the wrapper with a client certificate and no token. */
function getWithCert(
  w: TestWrapper,
  ca: string,
  path: string,
  cert: CertKeyPair,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: w.port,
        path,
        agent: new Agent({ ca, cert: cert.certPem, key: cert.keyPem, keepAlive: false }),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The sum of a metric's samples in Prometheus text. */
const metricIn = (text: string, name: string): number =>
  text
    .split('\n')
    .filter((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);

interface Slice {
  metadata: { name: string; annotations?: Record<string, string> };
  endpoints?: { addresses: string[]; nodeName?: string }[];
}
interface WatchEvent {
  type: string;
  object: Slice;
}

/** Upstream slices of SVC: name → the nodes of its endpoints (one endpoint per node). */
const SLICES: Record<string, string[]> = {
  'relabel-ab': ['n-a', 'n-b'],
  'relabel-bc': ['n-b', 'n-c'],
  'relabel-c': ['n-c'],
  'relabel-a': ['n-a'],
};
const IP: Record<string, string> = { 'n-a': '10.0.0.1', 'n-b': '10.0.0.2', 'n-c': '10.0.0.3' };

describe('svcplane wrapper: a relabel counted, client certificates, logs and metrics', () => {
  const work = mkdtempSync(join(tmpdir(), 'svcplane-relabel-'));
  let up: TestServer;
  let w: TestWrapper;
  let watch: KubectlWatch<WatchEvent> | undefined;
  let events: WatchEvent[] = [];
  const watchErr = (): string => watch?.stderr() ?? '';

  const ok = async (method: string, path: string, body: unknown, contentType?: string): Promise<void> => {
    const r = await call(up, method, path, { body, ...(contentType ? { contentType } : {}) });
    assert.ok(r.status === 200 || r.status === 201, `${method} ${path}: ${r.status} ${r.text}`);
  };
  const labelNode = (node: string, labels: Record<string, string>): Promise<void> =>
    ok('PATCH', `/api/v1/nodes/${node}`, { metadata: { labels } }, 'application/merge-patch+json');
  let sentinels = 0;
  /** Annotates relabel-a upstream and returns the index of its MODIFIED on the watch. */
  const sentinel = async (): Promise<number> => {
    const mark = String(++sentinels);
    await ok(
      'PATCH',
      '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/relabel-a',
      { metadata: { annotations: { 'e2e/sentinel': mark } } },
      'application/merge-patch+json',
    );
    await until(
      () => `sentinel ${mark} on the watch: ${JSON.stringify(summary(events))} ${watchErr()}`,
      WAIT,
      () => events.some((e) => e.object.metadata.annotations?.['e2e/sentinel'] === mark),
    );
    return events.findIndex((e) => e.object.metadata.annotations?.['e2e/sentinel'] === mark);
  };
  /**
   * A relabel's events, counted: waits for the `expected` events after index `from`, then marks the end
   * with a sentinel and returns every event between. The Node event and the sentinel's slice event reach
   * the wrapper on two upstream watches, so the sentinel is sent only once the expected events are in;
   * an extra event from the same relabel is written in the same pass, before the sentinel's.
   */
  const relabelEvents = async (from: number, expected: string[][]): Promise<string[][]> => {
    const has = (): boolean => {
      const got = summary(events.slice(from)).map((e) => JSON.stringify(e));
      return expected.every((e) => got.includes(JSON.stringify(e)));
    };
    await until(
      () =>
        `the relabel's events ${JSON.stringify(expected)}: ${JSON.stringify(summary(events.slice(from)))}`,
      WAIT,
      has,
    );
    const end = await sentinel();
    return summary(events.slice(from, end)).sort();
  };
  /** Waits until the wrapper serves `node` with `labels` (its Node event has been handled). */
  const servedWith = async (node: string, labels: Record<string, string>): Promise<void> => {
    const { ca, caPem } = pki();
    const reader = issueClientCert(ca, { commonName: 'e2e', organizations: ['svcplane:wrapper-readers'] });
    await until(`${node} served with ${JSON.stringify(labels)}`, WAIT, async () => {
      const r = await getWithCert(w, caPem, `/api/v1/nodes/${node}`, reader);
      const got =
        (JSON.parse(r.text) as { metadata: { labels?: Record<string, string> } }).metadata.labels ?? {};
      return Object.entries(labels).every(([k, v]) => got[k] === v) ? true : undefined;
    });
  };
  const summary = (es: readonly WatchEvent[]): string[][] =>
    es.map((e) => [
      e.type,
      e.object.metadata.name,
      ...(e.object.endpoints ?? []).map((x) => x.addresses[0]!),
    ]);
  const served = (e: WatchEvent): string[] => (e.object.endpoints ?? []).map((x) => x.addresses[0]!).sort();

  /** The wrapper's CA, generated under its --data-dir on first start. */
  const pki = (): { ca: CertKeyPair; caPem: string } => {
    const certPem = readFileSync(join(work, 'w', 'pki', 'ca.crt'), 'utf8');
    return {
      ca: { certPem, keyPem: readFileSync(join(work, 'w', 'pki', 'ca.key'), 'utf8') },
      caPem: certPem,
    };
  };

  before(async () => {
    up = await startUp();
    for (const [node, unit] of [
      ['n-a', 'u1'],
      ['n-b', 'u2'],
      ['n-c', 'u2'],
    ] as const) {
      await ok('POST', '/api/v1/nodes', { metadata: { name: node, labels: { [UNIT]: unit } } });
    }
    await ok('POST', '/api/v1/namespaces/default/services', {
      metadata: { name: SVC, annotations: { topologyKeys: JSON.stringify([UNIT]) } },
      spec: { ports: [{ port: 80 }] },
    });
    for (const [name, nodes] of Object.entries(SLICES)) {
      await ok('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
        metadata: {
          name,
          labels: { 'kubernetes.io/service-name': SVC, 'endpointslice.kubernetes.io/managed-by': 'e2e' },
        },
        addressType: 'IPv4',
        ports: [{ port: 8080, protocol: 'TCP', name: '' }],
        endpoints: nodes.map((n) => ({ addresses: [IP[n]!], nodeName: n, conditions: { ready: true } })),
      });
    }
    w = await startWrapper({ upstreamKubeconfig: up.kubeconfig, hostname: 'n-a', dataDir: join(work, 'w') });
    const home = join(work, 'home');
    mkdirSync(home, { recursive: true });
    watch = kubectlWatch<WatchEvent>(w, home, ['endpointslices', '-l', `kubernetes.io/service-name=${SVC}`]);
    events = watch.events;
    // n-a is in u1 alone: each slice is served with n-a's endpoint, if it has one.
    await until(
      () => `the initial ADDED events: ${JSON.stringify(summary(events))} ${watchErr()}`,
      WAIT,
      () => events.filter((e) => e.type === 'ADDED').length === Object.keys(SLICES).length,
    );
    const initial = new Map(events.map((e) => [e.object.metadata.name, served(e)]));
    assert.deepEqual(Object.fromEntries(initial), {
      'relabel-ab': ['10.0.0.1'],
      'relabel-bc': [],
      'relabel-c': [],
      'relabel-a': ['10.0.0.1'],
    });
  });

  after(async () => {
    watch?.proc.kill('SIGKILL');
    await w?.stop();
    await up?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it("moving n-b into n-a's unit sends one MODIFIED for each slice with an endpoint on n-b, and no other event", async () => {
    const expected = [
      ['MODIFIED', 'relabel-ab', '10.0.0.1', '10.0.0.2'],
      ['MODIFIED', 'relabel-bc', '10.0.0.2'],
    ];
    const from = events.length;
    await labelNode('n-b', { [UNIT]: 'u1' });
    assert.deepEqual(await relabelEvents(from, expected), expected);
  });

  it('a relabel of a key no rule reads, and a repeat of the same value, send nothing', async () => {
    const from = events.length;
    await labelNode('n-c', { 'e2e.svcplane.io/unrelated': 'x' });
    await labelNode('n-b', { [UNIT]: 'u1' });
    await servedWith('n-c', { 'e2e.svcplane.io/unrelated': 'x' });
    const end = await sentinel();
    assert.deepEqual(summary(events.slice(from, end)), []);
  });

  it("moving the wrapper's own node sends one MODIFIED for each slice whose view changes", async () => {
    // n-a joins u2, where n-c is (n-b stays in u1). n-a's own endpoints always share its unit, so
    // relabel-a keeps its one and sends nothing; relabel-ab loses n-b's, relabel-bc swaps n-b's for n-c's,
    // relabel-c gains n-c's.
    const expected = [
      ['MODIFIED', 'relabel-ab', '10.0.0.1'],
      ['MODIFIED', 'relabel-bc', '10.0.0.3'],
      ['MODIFIED', 'relabel-c', '10.0.0.3'],
    ];
    const from = events.length;
    await labelNode('n-a', { [UNIT]: 'u2' });
    assert.deepEqual(await relabelEvents(from, expected), expected);
  });

  describe('client certificates signed by the wrapper CA', () => {
    it('a reader reads, another group gets 403, a certificate of another CA gets 401', async () => {
      const { ca, caPem } = pki();
      const reader = issueClientCert(ca, {
        commonName: 'kube-proxy',
        organizations: ['svcplane:wrapper-readers'],
      });
      const stranger = issueClientCert(ca, { commonName: 'stranger', organizations: ['viewers'] });
      const forged = issueClientCert(generateCA('not-the-wrapper-ca'), {
        commonName: 'kube-proxy',
        organizations: ['svcplane:wrapper-readers'],
      });
      const slices =
        '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=' +
        encodeURIComponent(`kubernetes.io/service-name=${SVC}`);

      const ok = await getWithCert(w, caPem, slices, reader);
      assert.equal(ok.status, 200, ok.text);
      const list = JSON.parse(ok.text) as { items: Slice[] };
      assert.deepEqual(list.items.map((i) => i.metadata.name).sort(), Object.keys(SLICES).sort());

      const denied = await getWithCert(w, caPem, slices, stranger);
      assert.equal(denied.status, 403, denied.text);
      assert.match(
        JSON.parse(denied.text).message as string,
        /User "stranger" cannot list resource "endpointslices"/,
      );

      // A certificate the wrapper's CA did not sign authenticates nothing: the request is anonymous.
      const anonymous = await getWithCert(w, caPem, slices, forged);
      assert.equal(anonymous.status, 401, anonymous.text);

      const version = await getWithCert(w, caPem, '/version', reader);
      assert.equal(version.status, 200, version.text);
      assert.match(JSON.parse(version.text).gitVersion as string, /^v1\.\d+\.\d+/);
    });
  });

  it("kubectl's tables through the wrapper: slices with their served endpoints, and nodes", async () => {
    const kc = kubectlFor(w, join(work, 'home'));
    // After the relabels above: n-a and n-c in u2, n-b in u1, seen from n-a.
    const slices = await kc(['get', 'endpointslices', '-l', `kubernetes.io/service-name=${SVC}`]);
    const rows = slices.trim().split('\n');
    assert.match(rows[0]!, /^NAME\s+ADDRESSTYPE\s+PORTS\s+ENDPOINTS\s+AGE$/, slices);
    assert.deepEqual(
      rows.slice(1).map((r) => r.split(/\s+/).slice(0, 4)),
      [
        ['relabel-a', 'IPv4', '8080', '10.0.0.1'],
        ['relabel-ab', 'IPv4', '8080', '10.0.0.1'],
        ['relabel-bc', 'IPv4', '8080', '10.0.0.3'],
        ['relabel-c', 'IPv4', '8080', '10.0.0.3'],
      ],
      slices,
    );
    const nodes = await kc(['get', 'nodes', '-L', UNIT]);
    const nodeRows = nodes.trim().split('\n');
    assert.match(nodeRows[0]!, /^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION\s+UNIT$/, nodes);
    assert.deepEqual(
      nodeRows.slice(1).map((r) => [r.split(/\s+/)[0], r.split(/\s+/).at(-1)]),
      [
        ['n-a', 'u2'],
        ['n-b', 'u1'],
        ['n-c', 'u2'],
      ],
      nodes,
    );
  });

  it('logs no line per request; /metrics counts the views and the relists', async () => {
    const { ca, caPem } = pki();
    const reader = issueClientCert(ca, { commonName: 'reader', organizations: ['svcplane:wrapper-readers'] });
    const lines = (): number =>
      w
        .stderr()
        .split('\n')
        .filter((l) => l.trim() !== '').length;
    const before = lines();
    for (let i = 0; i < 40; i++) {
      const r = await getWithCert(w, caPem, i % 2 === 0 ? '/api/v1/services' : '/api/v1/nodes/n-a', reader);
      assert.equal(r.status, 200, r.text);
    }
    const refused = await getWithCert(w, caPem, '/api/v1/pods', reader);
    assert.equal(refused.status, 403);
    assert.equal(lines(), before, `new log lines: ${w.stderr().split('\n').slice(before).join('\n')}`);

    const metrics = await getWithCert(w, caPem, '/metrics', reader);
    assert.equal(metrics.status, 200, metrics.text.slice(0, 500));
    // Two Services upstream (default/kubernetes and SVC); one relist of each of the four resources.
    assert.equal(metricIn(metrics.text, 'svcplane_wrapper_views'), 2);
    assert.equal(metricIn(metrics.text, 'svcplane_wrapper_upstream_relists'), 4);
    assert.equal(metricIn(metrics.text, 'svcplane_wrapper_upstream_in_sync'), 1);
  });
});
