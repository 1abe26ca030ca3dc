// `svcplane wrapper` end to end, against one `svcplane up`: SuperEdge's service-group layout (SuperEdge's README demo:
// node0 in zone1=nodeunit1, node1 in zone1=nodeunit2, deploymentgrid-demo and servicegrid-demo, pods run
// by `svcplane node`) with a wrapper per node, each serving only its unit's endpoints to the real kubectl,
// and following a relabel with MODIFIED events on an open watch; the API server's list/watch semantics
// through the wrapper over raw HTTPS (resourceVersion, 410, bookmarks, sendInitialEvents, kube-proxy's
// selectors, limit/continue, Table, timeoutSeconds); 500 abandoned watches and a watcher that never reads;
// authentication and the read-only authorization (nothing is ever forwarded upstream); the
// superedge.io/local-endpoint rewrite of default/kubernetes; and the upstream going away and coming back.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import { parse } from 'yaml';
import { kubectlFor, kubectlWatch, type Kubectl } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const FIXTURES = new URL('./fixtures/grids/', import.meta.url).pathname;
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-wrapper-'));
after(() => rmSync(work, { recursive: true, force: true }));

const WAIT = 30_000;
const SVC_LABEL = 'kubernetes.io/service-name';
const DEMO_SVC = 'servicegrid-demo-svc';
/** kube-proxy's selector for Services and EndpointSlices. */
const PROXY_SELECTOR = '!service.kubernetes.io/headless,!service.kubernetes.io/service-proxy-name';
const SERVED_MESSAGE =
  'the wrapper serves only get, list and watch of services, endpoints, endpointslices.discovery.k8s.io and nodes';

type Api = Pick<TestServer, 'url' | 'token' | 'ca'>;
interface Meta {
  name: string;
  namespace?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  deletionTimestamp?: string;
}
interface Obj {
  kind?: string;
  metadata: Meta;
  [k: string]: unknown;
}
interface ObjList<T = Obj> {
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}
interface Slice extends Obj {
  endpoints?: { addresses: string[]; conditions?: Record<string, boolean> }[];
  ports?: { name?: string; port?: number; protocol?: string }[];
}
interface Pod extends Obj {
  spec: { nodeName?: string };
  status?: { podIP?: string };
}
interface WatchEvent {
  type: string;
  object: Obj & { code?: number; reason?: string; message?: string };
}

const sorted = (xs: Iterable<string>): string[] => [...xs].sort();
const sliceIPs = (slices: readonly Slice[]): string[] =>
  sorted(slices.flatMap((s) => (s.endpoints ?? []).map((e) => e.addresses[0]!)));
const demoSlices = (l: ObjList<Slice>): Slice[] =>
  l.items.filter((s) => s.metadata.labels?.[SVC_LABEL] === DEMO_SVC);

async function getJson<T = ObjList>(api: Api, p: string, token?: string | null): Promise<T> {
  const r = await call(api, 'GET', p, token === undefined ? {} : { token });
  assert.equal(r.status, 200, `GET ${p}: ${r.text}`);
  return r.json<T>();
}

/** Sums every sample of a metric in Prometheus text, optionally only those whose labels contain `match`. */
async function metric(api: Api, name: string, match = ''): Promise<number> {
  const text = (await call(api, 'GET', '/metrics')).text;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (match !== '' && !line.includes(match)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

// ------------------------------------------------------------------------------------ processes

interface Wrapper extends Api {
  readonly node: string;
  readonly port: number;
  readonly httpUrl: string | undefined;
  readonly kubeconfig: string;
  readonly dataDir: string;
  readonly proc: ChildProcess;
  stderr(): string;
  /** SIGTERM; resolves to the exit code (SIGKILL and null after 10 s). */
  stop(): Promise<number | null>;
}

async function startWrapper(
  upstream: TestServer,
  node: string,
  dataDir: string,
  opts: { insecure?: boolean; port?: number } = {},
): Promise<Wrapper> {
  const args = ['wrapper', '--kubeconfig', upstream.kubeconfig, '--hostname', node];
  args.push('--bind-address', `127.0.0.1:${opts.port ?? 0}`, '--data-dir', dataDir);
  if (opts.insecure === true) args.push('--insecure-bind-address', '127.0.0.1:0');
  const proc = spawn(process.execPath, [BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '', HOME: work, SVCPLANE_BOOKMARK_INTERVAL_MS: '500' },
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const m = await until(
    () => `svcplane wrapper --hostname ${node} to serve:\n${out}\n${err}`,
    WAIT,
    () => {
      if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}: ${err}`);
      return (
        /^svcplane wrapper: serving node (\S+) at (https:\/\/\S+?)(?: and (http:\/\/\S+?))?; kubeconfig: (\S+)\n/m.exec(
          out,
        ) ?? undefined
      );
    },
    50,
  );
  assert.equal(m[1], node);
  assert.equal(m[4], path.join(dataDir, 'kubeconfig'));
  assert.equal(m[3] !== undefined, opts.insecure === true, out);
  const kc = parse(readFileSync(m[4]!, 'utf8')) as {
    clusters: { cluster: { server: string; 'certificate-authority-data': string } }[];
    users: { user: { token: string } }[];
  };
  assert.equal(kc.clusters[0]!.cluster.server, m[2]);
  return {
    node,
    url: m[2]!,
    port: Number(new URL(m[2]!).port),
    httpUrl: m[3],
    kubeconfig: m[4]!,
    token: kc.users[0]!.user.token,
    ca: Buffer.from(kc.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8'),
    dataDir,
    proc,
    stderr: () => err,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** One `svcplane node` process running a single node with a label and a pod CIDR of its own. */
async function startNode(srv: TestServer, name: string, label: string, cidr: string, ip: string) {
  const args = ['node', '--kubeconfig', srv.kubeconfig, '--name', name, '--labels', label];
  args.push('--pod-cidr', cidr, '--node-ip', ip);
  const proc = spawn(process.execPath, [BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '', HOME: work },
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await until(
    () => `svcplane node --name ${name} to start:\n${out}\n${err}`,
    WAIT,
    () => {
      if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}: ${err}`);
      return /running/.test(out);
    },
    50,
  );
  return proc;
}

const killed = (p: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (p.exitCode !== null || p.signalCode !== null) return resolve();
    p.once('exit', () => resolve());
    p.kill('SIGKILL');
  });

// ------------------------------------------------------------------------------------ watches

/** A raw HTTPS watch (NDJSON), as client-go's reflector makes it. */
class RawWatch {
  readonly events: WatchEvent[] = [];
  status = 0;
  body = '';
  readonly response: Promise<void>;
  /** 'end': the chunked body ended properly; 'error': reset or aborted; 'closed': closed by us. */
  readonly ended: Promise<'end' | 'error' | 'closed'>;
  private readonly req: ClientRequest;
  private pending = '';
  private closing = false;

  constructor(api: Api, p: string, token: string = api.token) {
    const u = new URL(p, api.url);
    let gotResponse!: () => void;
    this.response = new Promise((resolve) => (gotResponse = resolve));
    let finish!: (how: 'end' | 'error' | 'closed') => void;
    let done = false;
    this.ended = new Promise((resolve) => (finish = resolve));
    const end = (how: 'end' | 'error'): void => {
      if (done) return;
      done = true;
      finish(this.closing ? 'closed' : how);
    };
    this.req = httpsRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        agent: new Agent({ ca: api.ca, keepAlive: false }),
        headers: { Authorization: `Bearer ${token}` },
      },
      (res: IncomingMessage) => {
        this.status = res.statusCode ?? 0;
        gotResponse();
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          if (this.status !== 200) {
            this.body += chunk;
            return;
          }
          this.pending += chunk;
          for (let nl = this.pending.indexOf('\n'); nl >= 0; nl = this.pending.indexOf('\n')) {
            const line = this.pending.slice(0, nl).trim();
            this.pending = this.pending.slice(nl + 1);
            if (line !== '') this.events.push(JSON.parse(line) as WatchEvent);
          }
        });
        res.on('end', () => end(res.complete ? 'end' : 'error'));
        res.on('error', () => end('error'));
        res.on('close', () => end(res.complete ? 'end' : 'error'));
      },
    );
    this.req.on('error', () => {
      gotResponse();
      end('error');
    });
    this.req.end();
  }

  /** The first event at index >= `from` that satisfies `pred`. */
  next(what: string, pred: (e: WatchEvent) => boolean, from = 0, ms = 15_000): Promise<WatchEvent> {
    return until(
      () => `${what}; events: ${JSON.stringify(this.events.map((e) => [e.type, e.object.metadata?.name]))}`,
      ms,
      () => this.events.slice(from).find(pred),
      20,
    );
  }

  close(): void {
    this.closing = true;
    this.req.destroy();
  }
}

// ------------------------------------------------------------------------------------ the suite

describe('svcplane wrapper against svcplane up, simulated nodes and kubectl', () => {
  let srv: TestServer;
  let k: Kubectl;
  let w0: Wrapper;
  let w1: Wrapper;
  let k0: Kubectl;
  let k1: Kubectl;
  let watchProc: ChildProcess | undefined;
  const nodes: ChildProcess[] = [];
  const home = (name: string): string => {
    const dir = path.join(work, name);
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const upLog = (): string => srv.stderr().slice(-3000);

  /** Creates a Service upstream (admin), no selector unless given. */
  const createService = async (name: string, extra: Record<string, unknown> = {}): Promise<Obj> => {
    const { labels, spec, annotations } = extra as {
      labels?: Record<string, string>;
      annotations?: Record<string, string>;
      spec?: Record<string, unknown>;
    };
    const r = await call(srv, 'POST', '/api/v1/namespaces/default/services', {
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
        spec: { ports: [{ port: 80, targetPort: 8080 }], ...spec },
      },
    });
    assert.equal(r.status, 201, r.text);
    return r.json<Obj>();
  };
  const patchUpstream = async (p: string, patch: unknown): Promise<Obj> => {
    const r = await call(srv, 'PATCH', p, {
      body: patch,
      contentType: 'application/merge-patch+json',
    });
    assert.equal(r.status, 200, r.text);
    return r.json<Obj>();
  };

  before(async () => {
    srv = await startUp({ dataDir: path.join(work, 'up') });
    k = kubectlFor(srv, home('home-up'));
    // One after another, each with its own --pod-cidr (see topology-explain.test.ts).
    nodes.push(await startNode(srv, 'node0', 'zone1=nodeunit1', '10.251.0.0/24', '127.0.5.1'));
    nodes.push(await startNode(srv, 'node1', 'zone1=nodeunit2', '10.251.1.0/24', '127.0.5.2'));
    [w0, w1] = await Promise.all([
      startWrapper(srv, 'node0', path.join(work, 'w0'), { insecure: true }),
      startWrapper(srv, 'node1', path.join(work, 'w1')),
    ]);
    k0 = kubectlFor(w0, home('home-w0'));
    k1 = kubectlFor(w1, home('home-w1'));
  });
  after(async () => {
    if (watchProc !== undefined) await killed(watchProc);
    await Promise.all([w0?.stop(), w1?.stop()]);
    await Promise.all(nodes.map(killed));
    await srv?.destroy();
  });

  it('SuperEdge service groups: each node is served only its unit; a relabel reaches an open watch as MODIFIED', async () => {
    await k(['apply', '-f', path.join(FIXTURES, 'deploymentgrid.yaml')]);
    await k(['apply', '-f', path.join(FIXTURES, 'servicegrid.yaml')]);
    const livePods = async (): Promise<Pod[]> =>
      (await getJson<ObjList<Pod>>(srv, '/api/v1/namespaces/default/pods')).items.filter(
        (p) => p.metadata.deletionTimestamp === undefined,
      );
    const ipsOn = (pods: readonly Pod[], node: string): string[] =>
      sorted(pods.filter((p) => p.spec.nodeName === node).map((p) => p.status!.podIP!));
    const pods = await until(
      () => `4 running pods and their 4 endpoints upstream\n${upLog()}`,
      WAIT,
      async () => {
        const ps = await livePods();
        if (ps.length !== 4 || ps.some((p) => p.status?.podIP === undefined)) return undefined;
        const slices = demoSlices(
          await getJson<ObjList<Slice>>(srv, '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices'),
        );
        const ready = slices.flatMap((s) =>
          (s.endpoints ?? []).filter((e) => e.conditions?.ready === true).map((e) => e.addresses[0]!),
        );
        return sorted(ready).join() === sorted(ps.map((p) => p.status!.podIP!)).join() ? ps : undefined;
      },
    );
    const node0IPs = ipsOn(pods, 'node0');
    const node1IPs = ipsOn(pods, 'node1');
    assert.equal(node0IPs.length, 2, JSON.stringify(pods.map((p) => [p.metadata.name, p.spec.nodeName])));
    assert.equal(node1IPs.length, 2);

    // kubectl against each wrapper: only its unit's pods, in the slices and in the Endpoints.
    const servedIPs = async (kc: Kubectl): Promise<string[]> =>
      sliceIPs(demoSlices(JSON.parse(await kc(['get', 'endpointslices', '-o', 'json'])) as ObjList<Slice>));
    const endpointsIPs = async (kc: Kubectl): Promise<string[]> => {
      const ep = JSON.parse(await kc(['get', 'endpoints', DEMO_SVC, '-o', 'json'])) as {
        subsets?: { addresses?: { ip: string }[] }[];
      };
      return sorted((ep.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)));
    };
    for (const [kc, want, node] of [
      [k0, node0IPs, 'node0'],
      [k1, node1IPs, 'node1'],
    ] as const) {
      await until(`${node}'s wrapper serving ${want.join()}`, WAIT, async () =>
        (await servedIPs(kc)).join() === want.join() ? true : undefined,
      );
      await until(`${node}'s wrapper serving Endpoints ${want.join()}`, WAIT, async () =>
        (await endpointsIPs(kc)).join() === want.join() ? true : undefined,
      );
    }
    assert.deepEqual(await servedIPs(k), sorted([...node0IPs, ...node1IPs]), 'upstream serves all');
    // The served slices keep their names and ports; the Service passes through.
    const up = demoSlices(JSON.parse(await k(['get', 'endpointslices', '-o', 'json'])) as ObjList<Slice>);
    const served0 = demoSlices(
      JSON.parse(await k0(['get', 'endpointslices', '-o', 'json'])) as ObjList<Slice>,
    );
    assert.deepEqual(
      served0.map((s) => [s.metadata.name, s.ports]),
      up.map((s) => [s.metadata.name, s.ports]),
    );
    assert.match(
      await k0(['get', 'svc', DEMO_SVC]),
      new RegExp(`^${DEMO_SVC}\\s+ClusterIP\\s+\\d+\\.\\d+\\.\\d+\\.\\d+\\s+<none>\\s+80/TCP\\s+`, 'm'),
    );

    // An open kubectl watch on node0's wrapper, then node0 moves to nodeunit2.
    const watch = kubectlWatch<WatchEvent>(w0, home('home-w0-watch'), [
      'endpointslices',
      '-l',
      `${SVC_LABEL}=${DEMO_SVC}`,
    ]);
    watchProc = watch.proc;
    const events = watch.events;
    const names = up.map((s) => s.metadata.name);
    await until(
      () => `kubectl's initial ADDED events: ${JSON.stringify(events)} ${watch.stderr()}`,
      WAIT,
      () => events.filter((e) => e.type === 'ADDED').length === names.length,
    );
    const initial = events.length;
    await k(['label', 'node', 'node0', 'zone1=nodeunit2', '--overwrite']);

    // At once node0 is in nodeunit2: node1's pods join its view (node0's own still run, now in nodeunit2).
    await until(
      () =>
        `a MODIFIED event with node1's endpoints: ${JSON.stringify(events.slice(initial))} ${watch.stderr()}`,
      WAIT,
      () =>
        events
          .slice(initial)
          .some(
            (e) =>
              e.type === 'MODIFIED' && node1IPs.every((ip) => sliceIPs([e.object as Slice]).includes(ip)),
          ),
    );
    // Then the DeploymentGrid controller removes nodeunit1's Deployment: the final view is nodeunit2's.
    const final = await until(
      () => `nodeunit1's pods gone and node0 served nodeunit2's endpoints\n${upLog()}`,
      WAIT,
      async () => {
        const ps = await livePods();
        if (ps.length === 0 || ps.some((p) => !p.metadata.name.startsWith('deploymentgrid-demo-nodeunit2-')))
          return undefined;
        const want = sorted(ps.map((p) => p.status?.podIP ?? '?'));
        const upIPs = sliceIPs(
          demoSlices(
            await getJson<ObjList<Slice>>(srv, '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices'),
          ),
        );
        const w0IPs = await servedIPs(k0);
        const last = events.at(-1);
        return upIPs.join() === want.join() &&
          w0IPs.join() === want.join() &&
          last !== undefined &&
          sliceIPs([last.object as Slice]).join() === want.join()
          ? want
          : undefined;
      },
    );
    assert.deepEqual(final, node1IPs, "nodeunit2's pods are node1's");
    const after = events.slice(initial);
    assert.ok(after.length > 0);
    assert.deepEqual(
      [...new Set(after.map((e) => e.type))],
      ['MODIFIED'],
      `only MODIFIED events, never DELETED+ADDED: ${JSON.stringify(after.map((e) => [e.type, e.object.metadata.name]))}`,
    );
    assert.deepEqual(sorted(new Set(after.map((e) => e.object.metadata.name))), sorted(names));
    await until("node1's wrapper serving the same", WAIT, async () =>
      (await servedIPs(k1)).join() === final.join() ? true : undefined,
    );
    await killed(watch.proc);
    watchProc = undefined;
  });

  it('list and watch semantics: resourceVersion, bookmarks, watch-list, selectors, pages, Table, timeouts, 410', async () => {
    const list = await getJson(w0, '/api/v1/namespaces/default/services');
    const rv = list.metadata.resourceVersion ?? '';
    assert.match(rv, /^[1-9]\d*$/, 'a LIST carries metadata.resourceVersion');

    // A watch from the LIST's resourceVersion gets what changes after it, and nothing before.
    const fromRV = new RawWatch(w0, `/api/v1/namespaces/default/services?watch=1&resourceVersion=${rv}`);
    await fromRV.response;
    assert.equal(fromRV.status, 200, fromRV.body);
    await createService('wsem-a', { labels: { wsem: 'a' } });
    const added = await fromRV.next('ADDED wsem-a', (e) => e.object.metadata.name === 'wsem-a');
    assert.equal(added.type, 'ADDED');
    assert.ok(Number(added.object.metadata.resourceVersion) > Number(rv));
    assert.deepEqual(
      fromRV.events.map((e) => [e.type, e.object.metadata.name]),
      [['ADDED', 'wsem-a']],
    );
    fromRV.close();

    // A watch resumed from a resourceVersion gets the changes made while no watch was open, from the
    // history; and an object that leaves or enters a label selector is DELETED or ADDED for it.
    const gapRv = (await getJson(w0, '/api/v1/namespaces/default/services')).metadata.resourceVersion!;
    await patchUpstream('/api/v1/namespaces/default/services/wsem-a', {
      metadata: { labels: { wsem: 'gone' } },
    });
    await until('wsem-a relabelled in the wrapper', WAIT, async () =>
      (await getJson<Obj>(w0, '/api/v1/namespaces/default/services/wsem-a')).metadata.labels?.['wsem'] ===
      'gone'
        ? true
        : undefined,
    );
    const resumedSel = new RawWatch(
      w0,
      `/api/v1/namespaces/default/services?watch=1&resourceVersion=${gapRv}&labelSelector=wsem%3Da`,
    );
    await resumedSel.response;
    assert.equal(resumedSel.status, 200, resumedSel.body);
    const left = await resumedSel.next(
      'wsem-a leaving the selector',
      (e) => e.object.metadata.name === 'wsem-a',
    );
    assert.equal(left.type, 'DELETED', JSON.stringify(left));
    await patchUpstream('/api/v1/namespaces/default/services/wsem-a', {
      metadata: { labels: { wsem: 'a' } },
    });
    const back = await resumedSel.next(
      'wsem-a entering the selector again',
      (e) => e.object.metadata.name === 'wsem-a',
      resumedSel.events.indexOf(left) + 1,
    );
    assert.equal(back.type, 'ADDED', JSON.stringify(back));
    assert.deepEqual(
      resumedSel.events.map((e) => e.type),
      ['DELETED', 'ADDED'],
    );
    resumedSel.close();

    // allowWatchBookmarks: a watch that matches nothing still learns the newer resourceVersion.
    const rv2 = (await getJson(w0, '/api/v1/namespaces/default/services')).metadata.resourceVersion!;
    const bm = new RawWatch(
      w0,
      `/api/v1/namespaces/default/services?watch=1&resourceVersion=${rv2}&allowWatchBookmarks=true&labelSelector=wsem%3Dnone`,
    );
    await bm.response;
    await patchUpstream('/api/v1/namespaces/default/services/wsem-a', { metadata: { labels: { x: '1' } } });
    const bookmark = await bm.next('a BOOKMARK', (e) => e.type === 'BOOKMARK');
    assert.equal(bookmark.object.kind, 'Service');
    assert.ok(Number(bookmark.object.metadata.resourceVersion) > Number(rv2), JSON.stringify(bookmark));
    assert.ok(bm.events.every((e) => e.type === 'BOOKMARK'));
    bm.close();

    // sendInitialEvents: the current state as ADDED, then a BOOKMARK marking the end of it.
    const now = await getJson(w0, '/api/v1/namespaces/default/services');
    const wl = new RawWatch(
      w0,
      '/api/v1/namespaces/default/services?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true',
    );
    const end = await wl.next('the initial-events-end BOOKMARK', (e) => e.type === 'BOOKMARK');
    assert.equal(end.object.metadata.annotations?.['k8s.io/initial-events-end'], 'true');
    assert.ok(Number(end.object.metadata.resourceVersion) >= Number(now.metadata.resourceVersion));
    const initial = wl.events.slice(0, wl.events.indexOf(end));
    assert.ok(initial.every((e) => e.type === 'ADDED'));
    assert.deepEqual(
      sorted(initial.map((e) => e.object.metadata.name)),
      sorted(now.items.map((s) => s.metadata.name)),
    );
    wl.close();

    // kube-proxy's selectors. Three Services whose selector matches no pod: each gets an empty slice.
    await createService('sel-plain', { spec: { selector: { app: 'sel-none' } } });
    await createService('sel-headless', { spec: { selector: { app: 'sel-none' }, clusterIP: 'None' } });
    await createService('sel-proxied', {
      labels: { 'service.kubernetes.io/service-proxy-name': 'other-proxy' },
      spec: { selector: { app: 'sel-none' } },
    });
    const sliceOwners = (l: ObjList): string[] =>
      sorted(l.items.map((s) => s.metadata.labels?.[SVC_LABEL] ?? '').filter((n) => n.startsWith('sel-')));
    const selected = await until("the sel-* slices through node0's wrapper", WAIT, async () => {
      const all = await getJson(w0, '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices');
      return sliceOwners(all).length === 3 ? all : undefined;
    });
    const sliceRV = selected.metadata.resourceVersion!;
    const q = encodeURIComponent(PROXY_SELECTOR);
    const proxyView = await getJson(
      w0,
      `/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=${q}`,
    );
    assert.deepEqual(sliceOwners(proxyView), ['sel-plain']);
    assert.ok(proxyView.items.some((s) => s.metadata.labels?.[SVC_LABEL] === DEMO_SVC));
    const proxySvcs = await getJson(w0, `/api/v1/namespaces/default/services?labelSelector=${q}`);
    assert.ok(!proxySvcs.items.some((s) => s.metadata.name === 'sel-proxied'));
    assert.ok(proxySvcs.items.some((s) => s.metadata.name === 'sel-plain'));
    const byName = await getJson(
      w0,
      '/api/v1/namespaces/default/services?fieldSelector=metadata.name%3Dsel-plain',
    );
    assert.deepEqual(
      byName.items.map((s) => s.metadata.name),
      ['sel-plain'],
    );
    // A slice entering the selector arrives as ADDED on a watch with it.
    const selWatch = new RawWatch(
      w0,
      `/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?watch=1&resourceVersion=${sliceRV}&labelSelector=${q}`,
    );
    await selWatch.response;
    await patchUpstream('/api/v1/namespaces/default/services/sel-proxied', {
      metadata: { labels: { 'service.kubernetes.io/service-proxy-name': null } },
    });
    const entered = await selWatch.next(
      "sel-proxied's slice entering the selector",
      (e) => e.object.metadata.labels?.[SVC_LABEL] === 'sel-proxied',
    );
    assert.equal(entered.type, 'ADDED');
    assert.ok(
      selWatch.events.every((e) => e.object.metadata.labels?.[SVC_LABEL] !== 'sel-headless'),
      'the headless slice never matches',
    );
    selWatch.close();

    // limit/continue: pages at one resourceVersion that together are the whole list.
    const whole = await getJson(w0, '/api/v1/services');
    const pages: ObjList[] = [];
    let cont = '';
    do {
      const page = await getJson(
        w0,
        `/api/v1/services?limit=2${cont === '' ? '' : `&continue=${encodeURIComponent(cont)}`}`,
      );
      assert.ok(page.items.length <= 2);
      pages.push(page);
      cont = page.metadata.continue ?? '';
    } while (cont !== '');
    assert.ok(pages.length >= 3, `${pages.length} pages`);
    assert.ok(pages.every((p) => p.metadata.resourceVersion === pages[0]!.metadata.resourceVersion));
    assert.deepEqual(
      pages.flatMap((p) => p.items.map((s) => `${s.metadata.namespace}/${s.metadata.name}`)),
      whole.items.map((s) => `${s.metadata.namespace}/${s.metadata.name}`),
    );

    // kubectl's Table output.
    const table = await k0(['get', 'svc']);
    assert.match(table, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\s*$/m, table);
    assert.match(table, /^sel-headless\s+ClusterIP\s+None\s+<none>\s+80\/TCP\s+\S+\s*$/m, table);
    assert.match(table, /^kubernetes\s+ClusterIP\s+\d+\.\d+\.\d+\.\d+\s+<none>\s+443\/TCP\s+/m, table);

    // timeoutSeconds ends a watch cleanly.
    const t0 = Date.now();
    const short = new RawWatch(w0, `/api/v1/nodes?watch=1&timeoutSeconds=1&resourceVersion=${rv}`);
    assert.equal(await short.ended, 'end');
    assert.ok(Date.now() - t0 < 5_000, `${Date.now() - t0} ms`);

    // 410: node1's wrapper restarted has no history before its start (its watch cache's history, at most
    // 4 MiB and 10,000 events, begins when the cache does). Before the restart an outsider's token is
    // added to its token file (used by the security test).
    appendFileSync(
      path.join(w1.dataDir, 'pki', 'tokens.csv'),
      'outsider-token-0123456789,outsider,outsider-uid,"team:ops"\n',
    );
    const servicesAtRv = async (): Promise<string[]> =>
      sorted(
        (await getJson(w1, '/api/v1/namespaces/default/services')).items.map(
          (s) => `${s.metadata.name}@${s.metadata.resourceVersion}`,
        ),
      );
    const w1Before = await servicesAtRv();
    assert.equal(await w1.stop(), 0, 'the wrapper exits 0 on SIGTERM');
    w1 = await startWrapper(srv, 'node1', w1.dataDir, { port: w1.port });
    assert.deepEqual(
      await servicesAtRv(),
      w1Before,
      'a restarted wrapper serves the views it held, at their resourceVersions',
    );
    const old = new RawWatch(w1, '/api/v1/namespaces/default/services?watch=1&resourceVersion=1');
    await old.response;
    if (old.status === 200) {
      const gone = await old.next('an ERROR event', (e) => e.type === 'ERROR');
      assert.equal(gone.object.code, 410, JSON.stringify(gone));
      assert.equal(gone.object.reason, 'Expired');
      assert.equal(await old.ended, 'end');
    } else assert.equal(old.status, 410, old.body);

    // A crash (SIGKILL): every served write was committed before a client could see it, so the restarted
    // wrapper serves the same views at the same resourceVersions, and a watch resumes from the last one
    // a client saw (no relist).
    const seen = await getJson(w1, '/api/v1/namespaces/default/services');
    const seenAtRv = await servicesAtRv();
    const exited = new Promise((r) => w1.proc.once('exit', r));
    w1.proc.kill('SIGKILL');
    await exited;
    w1 = await startWrapper(srv, 'node1', w1.dataDir, { port: w1.port });
    assert.deepEqual(
      await servicesAtRv(),
      seenAtRv,
      'after a crash the wrapper serves the views clients saw, at their resourceVersions',
    );
    const resumed = new RawWatch(
      w1,
      `/api/v1/namespaces/default/services?watch=1&resourceVersion=${seen.metadata.resourceVersion}&timeoutSeconds=1`,
    );
    await resumed.response;
    assert.equal(resumed.status, 200, resumed.body);
    assert.equal(await resumed.ended, 'end');
    assert.ok(!resumed.events.some((e) => e.type === 'ERROR'), JSON.stringify(resumed.events));
  });

  it('watchers: 500 abandoned watches are unregistered; a watcher that never reads is closed', async () => {
    const registered = (): Promise<number> => metric(w0, 'apiserver_registered_watchers');
    await until('no watchers on node0 wrapper', 10_000, async () => (await registered()) === 0);
    const rv = (await getJson(w0, '/api/v1/nodes')).metadata.resourceVersion!;
    const agent = new Agent({ ca: w0.ca, keepAlive: false });
    const u = new URL(w0.url);
    const reqs: ClientRequest[] = [];
    let opened = 0;
    await Promise.all(
      Array.from(
        { length: 500 },
        () =>
          new Promise<void>((resolve, reject) => {
            const req = httpsRequest(
              {
                host: u.hostname,
                port: u.port,
                path: `/api/v1/nodes?watch=1&resourceVersion=${rv}`,
                agent,
                headers: { Authorization: `Bearer ${w0.token}` },
              },
              (res) => {
                if (res.statusCode === 200) opened++;
                resolve();
              },
            );
            req.on('error', (err) => (opened < 500 ? reject(err) : undefined));
            reqs.push(req);
            req.end();
          }),
      ),
    );
    assert.equal(opened, 500);
    await until('500 registered watchers', 10_000, async () => (await registered()) >= 500);
    for (const r of reqs) r.on('error', () => {}).destroy();
    agent.destroy();
    let left = -1;
    await until(
      () => `apiserver_registered_watchers back to 0 (still ${left})`,
      5_000,
      async () => (left = await registered()) === 0,
    );

    // A watcher that never reads: its queue outgrows the wrapper's 16 MiB limit (not configurable from
    // the command line), so ~40 MB of events: one Service, its 250 kB annotation changed again and again.
    const terminated = (): Promise<number> =>
      metric(w0, 'apiserver_terminated_watchers_total', 'resource="services"');
    const before = await terminated();
    await createService('slow-big');
    const rv2 = (await getJson(w0, '/api/v1/namespaces/default/services')).metadata.resourceVersion!;
    const slow = await new Promise<{ req: ClientRequest; res: IncomingMessage }>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: u.hostname,
          port: u.port,
          path: `/api/v1/namespaces/default/services?watch=1&resourceVersion=${rv2}&fieldSelector=metadata.name%3Dslow-big`,
          agent: new Agent({ ca: w0.ca, keepAlive: false }),
          headers: { Authorization: `Bearer ${w0.token}` },
        },
        (res) => {
          res.pause(); // never read, until the wrapper has given up on us
          resolve({ req, res });
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(slow.res.statusCode, 200);
    const filler = 'q'.repeat(250_000);
    let patches = 0;
    // What it has queued shows on /metrics while it lags (once past what the sockets' buffers take).
    let queuedMax = 0;
    for (; patches < 400; patches++) {
      await patchUpstream('/api/v1/namespaces/default/services/slow-big', {
        metadata: { annotations: { big: `${patches}-${filler}` } },
      });
      if (patches % 10 === 0)
        queuedMax = Math.max(queuedMax, await metric(w0, 'svcplane_wrapper_watch_queued_bytes_max'));
      if (patches >= 60 && patches % 10 === 0 && (await terminated()) > before) break;
    }
    await until(
      'apiserver_terminated_watchers_total to count it',
      10_000,
      async () => (await terminated()) > before,
    );
    assert.ok(queuedMax > 1_000_000, `svcplane_wrapper_watch_queued_bytes_max peaked at ${queuedMax}`);
    let text = '';
    slow.res.setEncoding('utf8');
    slow.res.on('data', (d: string) => (text += d));
    slow.res.resume();
    await new Promise<void>((resolve) => slow.res.once('end', () => resolve()));
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as WatchEvent);
    const last = lines.at(-1)!;
    assert.equal(last.type, 'ERROR', `${patches} patches`);
    assert.equal(last.object.code, 410);
    assert.match(String(last.object.message), /fell too far behind/);
    assert.ok(
      lines.slice(0, -1).every((e) => e.type === 'MODIFIED' && e.object.metadata.name === 'slow-big'),
    );
    assert.equal(await metric(w0, 'svcplane_wrapper_watch_queued_bytes'), 0, 'its queue is gone with it');
    const del = await call(srv, 'DELETE', '/api/v1/namespaces/default/services/slow-big');
    assert.equal(del.status, 200, del.text);
  });

  it('security: 401 without credentials, 403 outside the readers group and for anything but reads', async () => {
    const status = (text: string): { kind?: string; code?: number; reason?: string; message?: string } =>
      JSON.parse(text) as { kind?: string; code?: number; reason?: string; message?: string };

    const anon = await call(w1, 'GET', '/api/v1/services', { token: null });
    assert.equal(anon.status, 401);
    assert.deepEqual(
      [status(anon.text).kind, status(anon.text).code, status(anon.text).reason],
      ['Status', 401, 'Unauthorized'],
    );
    const bogus = await call(w1, 'GET', '/api/v1/services', { token: 'not-a-token' });
    assert.equal(bogus.status, 401);

    // A valid token of the wrapper's token file that is not in svcplane:wrapper-readers.
    const outsider = await call(w1, 'GET', '/api/v1/services', { token: 'outsider-token-0123456789' });
    assert.equal(outsider.status, 403, outsider.text);
    assert.equal(status(outsider.text).reason, 'Forbidden');
    assert.match(status(outsider.text).message ?? '', /only members of svcplane:wrapper-readers may read/);

    // Writes are refused and never forwarded: the upstream is unchanged, and saw no write of Services.
    const writesOf = async (verb: string): Promise<number> => {
      const text = (await call(srv, 'GET', '/metrics')).text;
      return text
        .split('\n')
        .filter(
          (l) =>
            l.startsWith('apiserver_request_total{') &&
            l.includes(`verb="${verb}"`) &&
            l.includes('resource="services"'),
        )
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    };
    const writesBefore = [await writesOf('DELETE'), await writesOf('POST'), await writesOf('PATCH')];
    await assert.rejects(k1(['delete', 'svc', 'sel-plain']), (err: Error) => {
      assert.match(err.message, /Forbidden/);
      assert.ok(err.message.includes(SERVED_MESSAGE), err.message);
      return true;
    });
    await assert.rejects(
      k1(['create', 'service', 'clusterip', 'via-wrapper', '--tcp=80:8080']),
      (err: Error) => {
        assert.ok(err.message.includes(SERVED_MESSAGE), err.message);
        return true;
      },
    );
    await assert.rejects(k1(['label', 'svc', 'sel-plain', 'via=wrapper']), /Forbidden/);
    const post = await call(w1, 'POST', '/api/v1/namespaces/default/services', {
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'via-wrapper' },
        spec: { ports: [{ port: 80 }] },
      },
    });
    assert.equal(post.status, 403, post.text);
    assert.equal(
      status(post.text).message,
      `services is forbidden: User "wrapper-reader" cannot create resource "services" in API group "" in the namespace "default": ${SERVED_MESSAGE}`,
    );
    assert.equal((await call(srv, 'GET', '/api/v1/namespaces/default/services/via-wrapper')).status, 404);
    const plain = await getJson<Obj>(srv, '/api/v1/namespaces/default/services/sel-plain');
    assert.equal(plain.metadata.labels?.['via'], undefined);
    assert.deepEqual(
      [await writesOf('DELETE'), await writesOf('POST'), await writesOf('PATCH')],
      writesBefore,
      'no write of Services reached the upstream',
    );

    // Resources the wrapper does not serve: not in discovery, and refused.
    await assert.rejects(k1(['get', 'pods']), /the server doesn't have a resource type "pods"/);
    const pods = await call(w1, 'GET', '/api/v1/namespaces/default/pods');
    assert.equal(pods.status, 403, pods.text);
    assert.ok(status(pods.text).message?.includes(SERVED_MESSAGE), pods.text);
    const svcStatus = await call(w1, 'GET', '/api/v1/namespaces/default/services/sel-plain/status');
    assert.equal(svcStatus.status, 403, svcStatus.text);

    // Plain HTTP to the HTTPS port: Go's 400.
    const plainHttp = await new Promise<{ code: number; body: string }>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port: w1.port, path: '/api/v1/services' }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(plainHttp.code, 400);
    assert.match(plainHttp.body, /Client sent an HTTP request to an HTTPS server/);

    // --insecure-bind-address: reads without credentials over plain HTTP, with a warning in the log; writes
    // are still refused.
    assert.ok(w0.httpUrl !== undefined);
    assert.match(w0.stderr(), /"level":"warn".*serving plain HTTP without authentication/);
    const viaHttp = (method: string, p: string, body?: string) =>
      new Promise<{ code: number; body: string }>((resolve, reject) => {
        const u = new URL(p, w0.httpUrl);
        const req = httpRequest(
          {
            host: u.hostname,
            port: u.port,
            path: u.pathname + u.search,
            method,
            headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
          },
          (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (text += d));
            res.on('end', () => resolve({ code: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    const insecureGet = await viaHttp('GET', '/api/v1/namespaces/default/services/sel-plain');
    assert.equal(insecureGet.code, 200, insecureGet.body);
    assert.equal((JSON.parse(insecureGet.body) as Obj).metadata.name, 'sel-plain');
    const insecureDelete = await viaHttp('DELETE', '/api/v1/namespaces/default/services/sel-plain');
    assert.equal(insecureDelete.code, 403, insecureDelete.body);
    assert.equal((await call(srv, 'GET', '/api/v1/namespaces/default/services/sel-plain')).status, 200);
  });

  it('default/kubernetes follows the superedge.io/local-endpoint and local-port annotations', async () => {
    const servedKubernetes = async (w: Wrapper) => ({
      ep: await getJson<{ subsets?: unknown[] }>(w, '/api/v1/namespaces/default/endpoints/kubernetes'),
      slice: await getJson<Slice>(
        w,
        '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes',
      ),
    });
    const local = (port: number) => ({
      subsets: [{ addresses: [{ ip: '127.0.0.1' }], ports: [{ name: 'https', port, protocol: 'TCP' }] }],
      endpoints: [['127.0.0.1']],
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    });
    const view = async (w: Wrapper) => {
      const { ep, slice } = await servedKubernetes(w);
      return {
        subsets: ep.subsets,
        endpoints: (slice.endpoints ?? []).map((e) => e.addresses),
        ports: slice.ports,
      };
    };
    for (const kind of ['endpoints', 'endpointslice']) {
      await k([
        'annotate',
        kind,
        'kubernetes',
        'superedge.io/local-endpoint=127.0.0.1',
        'superedge.io/local-port=51003',
      ]);
    }
    for (const w of [w0, w1]) {
      await until(`${w.node}'s wrapper serving 127.0.0.1:51003`, WAIT, async () =>
        isDeepStrictEqual(await view(w), local(51003)) ? true : undefined,
      );
      assert.deepEqual(await view(w), local(51003));
    }
    // Only the port annotation changes: the served objects follow at once.
    for (const kind of ['endpoints', 'endpointslice'])
      await k(['annotate', '--overwrite', kind, 'kubernetes', 'superedge.io/local-port=51004']);
    for (const w of [w0, w1])
      await until(`${w.node}'s wrapper serving 127.0.0.1:51004`, 5_000, async () =>
        isDeepStrictEqual(await view(w), local(51004)) ? true : undefined,
      );
    // Upstream is untouched: still the API server's own address.
    const upEp = await getJson<{ subsets: { ports: { port: number }[] }[] }>(
      srv,
      '/api/v1/namespaces/default/endpoints/kubernetes',
    );
    assert.equal(upEp.subsets[0]!.ports[0]!.port, srv.port);
    // A label the API server's kubernetes-service controller will put back (checked after the restart
    // below, where it reconciles at once): the annotations must survive that rewrite.
    await k(['label', 'endpoints', 'kubernetes', 'wrapper-e2e=drift']);
  });

  it('upstream down: the last good views are served, not ready, open watches stay; back: changes flow again', async () => {
    const svcs = await getJson(w0, '/api/v1/namespaces/default/services');
    const slicesBefore = await getJson(w0, '/apis/discovery.k8s.io/v1/endpointslices');
    const watch = new RawWatch(
      w0,
      `/api/v1/namespaces/default/services?watch=1&allowWatchBookmarks=true&resourceVersion=${svcs.metadata.resourceVersion}`,
    );
    await watch.response;
    assert.equal(watch.status, 200);
    const relistsBefore = await metric(w0, 'svcplane_wrapper_upstream_relists');
    const port = srv.port;
    await srv.stop();
    const atStop = watch.events.length;

    const readyz = await until('node0 wrapper /readyz failing', 15_000, async () => {
      const r = await call(w0, 'GET', '/readyz?verbose');
      return r.status === 503 ? r.text : undefined;
    });
    assert.match(readyz, /^\[-\]upstream-sync failed$/m);
    assert.match(readyz, /^\[\+\]watch-cache ok$/m);
    assert.match(readyz, /readyz check failed/);
    const healthz = await call(w0, 'GET', '/healthz');
    assert.equal(healthz.status, 200);
    assert.equal(healthz.text, 'ok');
    const key = (l: ObjList): string[] =>
      sorted(l.items.map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`));
    assert.deepEqual(key(await getJson(w0, '/api/v1/namespaces/default/services')), key(svcs));
    assert.deepEqual(key(await getJson(w0, '/apis/discovery.k8s.io/v1/endpointslices')), key(slicesBefore));
    assert.equal(
      (await getJson<Obj>(w0, '/api/v1/namespaces/default/endpoints/kubernetes')).kind,
      'Endpoints',
    );
    await new Promise((r) => setTimeout(r, 1_500));
    const during = watch.events.length;
    assert.ok(
      watch.events.every((e) => e.type === 'BOOKMARK'),
      `nothing but bookmarks while the upstream is away: ${JSON.stringify(watch.events.map((e) => e.type))}`,
    );
    // Bookmarks every interval (500 ms here), as kube's cacher sends them, so the client knows the watch
    // is alive while nothing can change.
    assert.ok(during - atStop >= 2, `bookmarks while the upstream is away: ${during - atStop}`);

    srv = await startUp({ dataDir: path.join(work, 'up'), args: ['--secure-port', String(port)] });
    await k(['label', 'svc', 'sel-plain', 'phase=after-restart']);
    const changed = await watch.next(
      'the change made after the restart',
      (e) =>
        e.object.metadata.name === 'sel-plain' && e.object.metadata.labels?.['phase'] === 'after-restart',
      during,
      WAIT,
    );
    assert.equal(changed.type, 'MODIFIED');
    await until(
      'node0 wrapper /readyz ok again',
      WAIT,
      async () => (await call(w0, 'GET', '/readyz')).status === 200,
    );
    assert.ok(
      watch.events.every((e) => e.type === 'BOOKMARK' || e === changed),
      `the reconnect emitted only what changed: ${JSON.stringify(watch.events.map((e) => [e.type, e.object.metadata.name]))}`,
    );
    // The reflectors relisted on reconnect (what they list is diffed against what is served): the
    // restarted upstream's history begins at its restart, so a watch resumed from before it gets 410.
    assert.ok(
      (await metric(w0, 'svcplane_wrapper_upstream_relists')) > relistsBefore,
      'svcplane_wrapper_upstream_relists went up on reconnect',
    );
    // A bookmark after a change the watch does not select (a Node) carries the revision past it.
    await k(['label', 'node', 'node1', 'phase=after-restart']);
    const nodeRev = await until('node1 relabelled in the wrapper', WAIT, async () => {
      const n = await getJson<Obj>(w0, '/api/v1/nodes/node1');
      return n.metadata.labels?.['phase'] === 'after-restart'
        ? Number(n.metadata.resourceVersion)
        : undefined;
    });
    await watch.next(
      'a BOOKMARK at or past the Node change',
      (e) => e.type === 'BOOKMARK' && Number(e.object.metadata.resourceVersion) >= nodeRev,
      watch.events.indexOf(changed),
    );
    assert.equal(await Promise.race([watch.ended, Promise.resolve('open')]), 'open');
    watch.close();

    // The kubernetes-service controller has reconciled on start: labels reset, annotations kept.
    await until('the drift label reset upstream', WAIT, async () => {
      const ep = await getJson<Obj>(srv, '/api/v1/namespaces/default/endpoints/kubernetes');
      return ep.metadata.labels?.['wrapper-e2e'] === undefined ? true : undefined;
    });
    const ep = await getJson<Obj>(srv, '/api/v1/namespaces/default/endpoints/kubernetes');
    assert.equal(ep.metadata.annotations?.['superedge.io/local-port'], '51004');
    const served = await getJson<{ subsets: { ports: { port: number }[] }[] }>(
      w0,
      '/api/v1/namespaces/default/endpoints/kubernetes',
    );
    assert.equal(served.subsets[0]!.ports[0]!.port, 51004);
  });
});
