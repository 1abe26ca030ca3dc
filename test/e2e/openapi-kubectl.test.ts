// The OpenAPI documents as the real kubectl reads them. A bare node:http server answers legacy
// discovery for services and servicegrids (hand-written here), serves /openapi/v3 and /openapi/v2
// from src/api/openapi, and records the writes kubectl sends. Each kubectl found on the machine is
// run against it: `explain` must print our fields and descriptions, `create` must leave validation
// to the server (fieldValidation=Strict), and `apply` of a changed Service must compute its
// strategic merge patch from our schema.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openAPIV2Protobuf } from '../../src/api/openapi/v2-protobuf.js';
import { openAPIV3Document, openAPIV3Index } from '../../src/api/openapi/v3.js';

const SDK = '/usr/lib/google-cloud-sdk/bin';
// 1.29 and later validate through /openapi/v3, 1.27 and 1.28 through the protobuf /openapi/v2.
const candidates = [33, 32, 31, 30, 29, 28, 27]
  .map((m) => `${SDK}/kubectl.1.${m}`)
  .filter((p) => existsSync(p));
const kubectls =
  candidates.length > 0 ? candidates : existsSync('/usr/bin/kubectl') ? ['/usr/bin/kubectl'] : [];
const minorOf = (bin: string): number => Number(/kubectl\.1\.(\d+)$/.exec(bin)?.[1] ?? '33');

interface Recorded {
  method: string;
  url: string;
  contentType: string | undefined;
  body: string;
}

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const resourceList = (groupVersion: string, resources: object[]): object => ({
  kind: 'APIResourceList',
  apiVersion: 'v1',
  groupVersion,
  resources,
});

class FakeAPIServer {
  readonly requests: Recorded[] = [];
  /** Objects GET and PATCH answer for, by path; other item paths answer 404. */
  readonly live = new Map<string, Record<string, unknown>>();
  private server: Server | undefined;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://x');
    const method = req.method ?? 'GET';
    this.requests.push({ method, url: req.url ?? '', contentType: req.headers['content-type'], body });
    const send = (code: number, data: unknown, type = 'application/json'): void => {
      const payload = data instanceof Uint8Array ? data : JSON.stringify(data);
      res.writeHead(code, { 'Content-Type': type });
      res.end(payload);
    };
    const notFound = (): void =>
      send(404, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'not found',
        reason: 'NotFound',
        code: 404,
      });
    const p = url.pathname;
    if (p === '/version') return send(200, { major: '1', minor: '33', gitVersion: 'v1.33.0' });
    if (p === '/api')
      return send(200, {
        kind: 'APIVersions',
        versions: ['v1'],
        serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: `127.0.0.1:${this.port}` }],
      });
    if (p === '/apis') {
      const gv = { groupVersion: 'superedge.io/v1', version: 'v1' };
      return send(200, {
        kind: 'APIGroupList',
        apiVersion: 'v1',
        groups: [{ name: 'superedge.io', versions: [gv], preferredVersion: gv }],
      });
    }
    if (p === '/api/v1')
      return send(
        200,
        resourceList('v1', [
          {
            name: 'services',
            singularName: 'service',
            namespaced: true,
            kind: 'Service',
            verbs: VERBS,
            shortNames: ['svc'],
            categories: ['all'],
          },
        ]),
      );
    if (p === '/apis/superedge.io/v1')
      return send(
        200,
        resourceList('superedge.io/v1', [
          {
            name: 'servicegrids',
            singularName: 'servicegrid',
            namespaced: true,
            kind: 'ServiceGrid',
            verbs: VERBS,
            shortNames: ['sg'],
          },
        ]),
      );
    if (p === '/openapi/v3') return send(200, openAPIV3Index());
    if (p.startsWith('/openapi/v3/')) {
      const doc = openAPIV3Document(p.slice('/openapi/v3/'.length));
      if (doc === undefined) return notFound();
      res.writeHead(200, { 'Content-Type': 'application/json' });
      return void res.end(doc.json);
    }
    if (p === '/openapi/v2') return send(200, openAPIV2Protobuf(), 'application/octet-stream');
    if (method === 'POST') return send(201, JSON.parse(body));
    const live = this.live.get(p);
    if (live !== undefined && (method === 'GET' || method === 'PATCH')) return send(200, live);
    return notFound();
  }

  writes(): Recorded[] {
    return this.requests.filter((r) => r.method === 'POST' || r.method === 'PATCH' || r.method === 'PUT');
  }
}

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-openapi-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run kubectl with a fresh home and cache, so every run fetches discovery and OpenAPI. */
function kubectl(bin: string, server: FakeAPIServer, ...args: string[]): Promise<Run> {
  const home = mkdtempSync(path.join(work, 'home-'));
  const kubeconfig = path.join(home, 'config');
  writeFileSync(kubeconfig, '');
  const argv = [
    `--server=http://127.0.0.1:${server.port}`,
    `--cache-dir=${path.join(home, 'cache')}`,
    ...args,
  ];
  return new Promise((resolve) => {
    execFile(
      bin,
      argv,
      { env: { PATH: process.env['PATH'] ?? '', HOME: home, KUBECONFIG: kubeconfig }, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Live metadata carrying the last-applied annotation, as a previous `kubectl apply` leaves it. */
const liveMeta = (lastApplied: { metadata: object }): Record<string, unknown> => ({
  ...lastApplied.metadata,
  uid: 'u1',
  resourceVersion: '7',
  annotations: { 'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify(lastApplied) },
});

const svcYAML = (extra: string): string => `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: default
spec:
  selector:
    app: web
  ports:
  - name: http
    port: 80
    targetPort: 8080
${extra}`;

describe('OpenAPI documents read by the real kubectl', () => {
  it('has a kubectl to run (scripts/ensure-deps.sh installs one; this suite never skips)', () => {
    assert.ok(kubectls.length > 0, 'no kubectl found: run scripts/ensure-deps.sh as root');
  });
  const server = new FakeAPIServer();
  before(() => server.start());
  after(() => server.stop());

  for (const bin of kubectls) {
    const minor = minorOf(bin);
    describe(path.basename(bin), () => {
      it('explain service.spec.ports prints our fields with their descriptions', async () => {
        const r = await kubectl(bin, server, 'explain', 'service.spec.ports');
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /KIND:\s+Service/);
        assert.match(r.stdout, /FIELD: ports <\[\]ServicePort>/);
        assert.match(r.stdout, /targetPort\s+<IntOrString>\n\s+Port on the selected pods/);
        assert.match(r.stdout, /nodePort\s+<integer>\n\s+Port opened on every node/);
        assert.match(r.stdout, /port\s+<integer> -required-/);
      });

      it('explain service.spec prints the spec fields, topologyKeys included', async () => {
        const r = await kubectl(bin, server, 'explain', 'service.spec');
        assert.equal(r.code, 0, r.stderr);
        for (const f of [
          'clusterIP',
          'externalTrafficPolicy',
          'ipFamilyPolicy',
          'sessionAffinityConfig',
          'topologyKeys',
        ])
          assert.match(r.stdout, new RegExp(`\\n  ${f}\\s+<`), f);
        assert.match(r.stdout, /selector\s+<map\[string\]string>/);
        assert.match(r.stdout, /\n {2}type\s+<string>/);
        // Older explain templates do not print enums.
        if (minor >= 30)
          assert.match(r.stdout, /type\s+<string>\n\s+enum: ClusterIP, ExternalName, LoadBalancer, NodePort/);
      });

      it('explain servicegrid.spec.template reaches the embedded ServiceSpec', async () => {
        const r = await kubectl(bin, server, 'explain', 'servicegrid.spec.template.ports');
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /GROUP:\s+superedge\.io/);
        assert.match(r.stdout, /targetPort\s+<IntOrString>/);
      });

      it('create with the default --validate=strict sends fieldValidation=Strict', async () => {
        server.requests.length = 0;
        const file = path.join(work, `create-${minor}.yaml`);
        writeFileSync(file, svcYAML(''));
        const r = await kubectl(bin, server, 'create', '-f', file);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /service\/web created/);
        const [post, ...more] = server.writes();
        assert.equal(more.length, 0);
        assert.ok(post !== undefined);
        assert.match(post.url, /[?&]fieldValidation=Strict(&|$)/, post.url);
        const fetched = server.requests.map((q) => q.url.split('?')[0]);
        if (minor >= 29) assert.ok(fetched.includes('/openapi/v3/api/v1'), fetched.join(' '));
        else assert.ok(fetched.includes('/openapi/v2'), fetched.join(' '));
      });

      it('apply of a changed Service builds its strategic merge patch from our schema', async () => {
        // kubectl's compiled-in types lack spec.topologyKeys: patching it works only from our schema.
        server.requests.length = 0;
        const lastApplied = {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web', namespace: 'default' },
          spec: {
            selector: { app: 'web' },
            ports: [{ name: 'http', port: 80, targetPort: 9090 }],
            topologyKeys: ['*'],
          },
        };
        const itemPath = '/api/v1/namespaces/default/services/web';
        server.live.set(itemPath, {
          ...lastApplied,
          metadata: { ...liveMeta(lastApplied) },
          spec: {
            ...lastApplied.spec,
            ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 9090 }],
            clusterIP: '10.96.0.10',
            type: 'ClusterIP',
          },
        });
        const file = path.join(work, `apply-${minor}.yaml`);
        writeFileSync(file, svcYAML('  topologyKeys:\n  - kubernetes.io/hostname\n'));
        try {
          const r = await kubectl(bin, server, 'apply', '-f', file);
          assert.equal(r.code, 0, r.stderr);
          assert.doesNotMatch(r.stderr, /warning/i);
          const [patch, ...more] = server.writes();
          assert.equal(more.length, 0);
          assert.ok(patch !== undefined);
          assert.equal(patch.method, 'PATCH');
          assert.equal(patch.contentType, 'application/strategic-merge-patch+json');
          assert.match(patch.url, /[?&]fieldValidation=Strict(&|$)/);
          const body = JSON.parse(patch.body) as { spec: Record<string, unknown> };
          assert.deepEqual(body.spec['topologyKeys'], ['kubernetes.io/hostname']);
          assert.deepEqual(body.spec['$setElementOrder/ports'], [{ port: 80 }]);
          assert.deepEqual(body.spec['ports'], [{ port: 80, targetPort: 8080 }]);
        } finally {
          server.live.delete(itemPath);
        }
      });

      it('apply of a changed ServiceGrid sends a JSON merge patch, as for a CRD', async () => {
        server.requests.length = 0;
        const lastApplied = {
          apiVersion: 'superedge.io/v1',
          kind: 'ServiceGrid',
          metadata: { name: 'web', namespace: 'default' },
          spec: { gridUniqKey: 'zone', template: { ports: [{ port: 80 }], selector: { app: 'web' } } },
        };
        const itemPath = '/apis/superedge.io/v1/namespaces/default/servicegrids/web';
        server.live.set(itemPath, { ...lastApplied, metadata: liveMeta(lastApplied) });
        const file = path.join(work, `sg-${minor}.yaml`);
        writeFileSync(
          file,
          JSON.stringify({
            ...lastApplied,
            spec: { ...lastApplied.spec, template: { ports: [{ port: 81 }] } },
          }),
        );
        try {
          const r = await kubectl(bin, server, 'apply', '-f', file);
          assert.equal(r.code, 0, r.stderr);
          assert.doesNotMatch(r.stderr, /warning/i);
          const [patch, ...more] = server.writes();
          assert.equal(more.length, 0);
          assert.ok(patch !== undefined);
          assert.equal(patch.contentType, 'application/merge-patch+json');
          assert.match(patch.url, /[?&]fieldValidation=Strict(&|$)/);
          const body = JSON.parse(patch.body) as { spec: unknown };
          assert.deepEqual(body.spec, { template: { ports: [{ port: 81 }], selector: null } });
        } finally {
          server.live.delete(itemPath);
        }
      });
    });
  }
});
