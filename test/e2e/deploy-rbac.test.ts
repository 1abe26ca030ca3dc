// deploy/ under RBAC, as a cluster runs it. `svcplane up` (Node,RBAC) gets deploy/'s identities with
// `kubectl apply -k deploy/rbac`; `svcplane controller-manager` and `svcplane wrapper` then run with the
// flags deploy/ gives them and tokens from `kubectl create token` for their ServiceAccounts, through a
// recording proxy, while a scenario makes every grid controller write path run (create, adopt, put back,
// delete, prune templates, status, Warning Events and their repeats, leader election and its release)
// and the wrapper serves a node's topology-filtered EndpointSlices. The server's answers prove it:
// none of their requests is refused (401 or 403), each of their requests is one deploy/'s roles grant,
// and each rule those roles grant is used, but for the one grant no request needs (`*/finalizers`,
// which the OwnerReferencesPermissionEnforcement admission plugin checks). The same tokens get 403 for
// what the components do not need. So a role that is too narrow, or wider than the code, fails here.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments, stringify } from 'yaml';
import { ruleAllows } from '../../src/core/rbac/rule-match.js';
import { freePort } from '../../src/storage/etcd/testing/etcd-server.js';
import { KUBECTL, kubectlFor, type Kubectl } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const DEPLOY = new URL('../../deploy', import.meta.url).pathname;
const NS = 'svcplane-system';

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}
interface Obj {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: Rule[];
  roleRef?: { kind: string; name: string };
  subjects?: { name: string; namespace?: string }[];
  spec?: { template: { spec: { serviceAccountName: string; containers: { args: string[] }[] } } };
}

/** kube-apiserver's request attributes of one request. */
interface Attrs {
  readonly verb: string;
  readonly group: string;
  /** resource[/subresource], as a role names it. */
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
  readonly name: string;
  readonly path: string;
}

/** A path and method as kube-apiserver's RequestInfoFactory reads them; undefined for a non-resource path. */
function attributesOf(method: string, url: string): Attrs | undefined {
  const u = new URL(url, 'http://x');
  const parts = u.pathname.split('/').filter((p) => p !== '');
  let rest: string[];
  let group: string;
  if (parts[0] === 'api' && parts.length >= 3) [group, rest] = ['', parts.slice(2)];
  else if (parts[0] === 'apis' && parts.length >= 4) [group, rest] = [parts[1]!, parts.slice(3)];
  else return undefined;
  let namespace = '';
  if (rest[0] === 'namespaces' && rest.length >= 3) [namespace, rest] = [rest[1]!, rest.slice(2)];
  const [resource, name = '', sub] = rest;
  const verb =
    method === 'GET'
      ? name !== ''
        ? 'get'
        : u.searchParams.get('watch') === 'true'
          ? 'watch'
          : 'list'
      : ({
          POST: 'create',
          PUT: 'update',
          PATCH: 'patch',
          DELETE: name === '' ? 'deletecollection' : 'delete',
        }[method] ?? method.toLowerCase());
  return {
    verb,
    group,
    resource: sub === undefined ? resource! : `${resource}/${sub}`,
    subresource: sub ?? '',
    namespace,
    name,
    path: `${method} ${u.pathname}`,
  };
}

/** The discovery paths every authenticated user may read (kube's system:discovery ClusterRole). */
const DISCOVERY = /^\/(api|apis)(\/[^/]+(\/[^/]+)?)?$|^\/version$/;

const ruleGrants = (r: Rule, a: Attrs): boolean =>
  ruleAllows(r, {
    verb: a.verb,
    resourceRequest: true,
    apiGroup: a.group,
    namespace: a.namespace,
    resource: a.resource.split('/')[0]!,
    subresource: a.subresource,
    name: a.name,
    path: a.path,
  });

/** The rules bound to a ServiceAccount: its ClusterRoles everywhere, its Roles in their namespace. */
function rulesFor(objs: Obj[], sa: string): { rule: Rule; namespace?: string; role: string }[] {
  const out: { rule: Rule; namespace?: string; role: string }[] = [];
  for (const b of objs.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')) {
    if (!b.subjects!.some((s) => s.name === sa && s.namespace === NS)) continue;
    const role = objs.find(
      (o) =>
        o.kind === b.roleRef!.kind &&
        o.metadata.name === b.roleRef!.name &&
        (o.kind === 'ClusterRole' || o.metadata.namespace === b.metadata.namespace),
    )!;
    for (const rule of role.rules!)
      out.push({
        rule,
        role: `${role.kind}/${role.metadata.name}`,
        ...(b.kind === 'RoleBinding' ? { namespace: b.metadata.namespace! } : {}),
      });
  }
  return out;
}

/** Each (group, resource, name, verb) a rule set grants. */
const tuples = (rules: { rule: Rule; role: string }[]): string[] =>
  rules.flatMap(({ rule, role }) =>
    (rule.apiGroups ?? []).flatMap((g) =>
      (rule.resources ?? []).flatMap((res) =>
        (rule.resourceNames ?? ['']).flatMap((n) =>
          rule.verbs.map((v) => `${role} ${g || 'core'} ${res} ${n || '*'} ${v}`),
        ),
      ),
    ),
  );

/** A plain-HTTP proxy to the server that records what each client asks, and the status it gets back. */
interface Seen {
  readonly request: string;
  status?: number;
}

async function recordingProxy(srv: TestServer, seen: Seen[]): Promise<{ url: string; server: Server }> {
  const target = new URL(srv.url);
  const server = createServer((req, res) => {
    const entry: Seen = { request: `${req.method} ${req.url}` };
    seen.push(entry);
    const up = httpsRequest(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
        ca: srv.ca,
      },
      (r) => {
        if (r.statusCode !== undefined) entry.status = r.statusCode;
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
    res.on('close', () => up.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function spawnSvcplane(args: string[]): { proc: ChildProcess; log: () => string } {
  let log = '';
  const proc = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  return { proc, log: () => log };
}

const stop = (p: ChildProcess): Promise<void> =>
  p.exitCode !== null
    ? Promise.resolve()
    : new Promise((r) => (p.once('exit', () => r()), p.kill('SIGTERM')));

/** deploy/'s flags for a workload, with the values that name things in a Pod put in `with`. */
function argsOf(objs: Obj[], kind: string, with_: Record<string, string>): string[] {
  const args = objs.find((o) => o.kind === kind)!.spec!.template.spec.containers[0]!.args;
  return args.map((a) => {
    const m = /^--([a-z-]+)=/.exec(a);
    return m !== null && with_[m[1]!] !== undefined ? `--${m[1]}=${with_[m[1]!]}` : a;
  });
}

const node = (name: string, labels: Record<string, string>): object => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels },
});

const deploymentSpec = (app: string): object => ({
  replicas: 1,
  selector: { matchLabels: { app } },
  template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
});

describe("deploy/'s roles against the components' requests", () => {
  const work = mkdtempSync(path.join(tmpdir(), 'svcplane-deploy-rbac-'));
  let srv: TestServer;
  let objs: Obj[];
  const seen = { cm: [] as Seen[], wrapper: [] as Seen[] };
  const proxies: Server[] = [];
  let kubectl: Kubectl;
  after(async () => {
    for (const p of proxies) p.close();
    await srv?.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  const post = async (p: string, body: object): Promise<Record<string, unknown>> => {
    const r = await call(srv, 'POST', p, { body });
    assert.equal(r.status, 201, r.text);
    return r.json();
  };
  const patch = async (p: string, body: object): Promise<void> => {
    const r = await call(srv, 'PATCH', p, { body, contentType: 'application/merge-patch+json' });
    assert.equal(r.status, 200, r.text);
  };
  const get = async (p: string): Promise<Record<string, unknown> | undefined> => {
    const r = await call(srv, 'GET', p);
    return r.status === 200 ? r.json() : undefined;
  };
  /** A token for one of deploy/'s ServiceAccounts, from `kubectl create token`. */
  const tokenOf = async (sa: string): Promise<string> =>
    (await kubectl(['-n', NS, 'create', 'token', sa, '--duration', '1h'])).trim();

  before(async () => {
    objs = parseAllDocuments(
      execFileSync(KUBECTL, ['kustomize', DEPLOY], { encoding: 'utf8', maxBuffer: 64 << 20 }),
    )
      .map((d) => (Array.isArray(d) ? undefined : (d.toJS() as Obj)))
      .filter((o): o is Obj => o !== undefined && o !== null);
    // svcplane up with its default authorization (Node,RBAC), and none of the controllers deploy/ runs
    // (they would race with the controller-manager under test).
    srv = await startUp({
      dataDir: path.join(work, 'up'),
      args: ['--controllers', '*,-servicegrid,-deploymentgrid,-servicetopology'],
    });
    kubectl = kubectlFor(srv, path.join(work, 'kubectl-home'));
    await kubectl(['apply', '-k', path.join(DEPLOY, 'rbac')]);
  });

  it('runs both components on their tokens: every request granted, every grant but */finalizers used', async () => {
    const cmProxy = await recordingProxy(srv, seen.cm);
    const wrapperProxy = await recordingProxy(srv, seen.wrapper);
    proxies.push(cmProxy.server, wrapperProxy.server);
    // Plain HTTP to the recording proxy; the token is what the proxy passes on.
    const tokens = {
      cm: await tokenOf('svcplane-controller-manager'),
      wrapper: await tokenOf('svcplane-wrapper'),
    };
    const kubeconfig = (name: 'cm' | 'wrapper', server: string): string => {
      const file = path.join(work, `${name}.kubeconfig`);
      writeFileSync(
        file,
        stringify({
          apiVersion: 'v1',
          kind: 'Config',
          // client-node takes plain HTTP only with TLS verification off.
          clusters: [{ name, cluster: { server, 'insecure-skip-tls-verify': true } }],
          users: [{ name, user: { token: tokens[name] } }],
          contexts: [{ name, context: { cluster: name, user: name } }],
          'current-context': name,
        }),
      );
      return file;
    };

    // The scenario's starting state: units u1 and u2; an unowned Service and Deployment with the names
    // the grids want (adopted: the grid is read again first); a Service with a topology annotation that
    // does not parse (a Warning Event).
    await post('/api/v1/nodes', node('node-a', { unit: 'u1' }));
    await post('/api/v1/nodes', node('node-b', { unit: 'u2' }));
    const svc = (name: string, extra: object = {}): object => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, ...extra },
      spec: { ports: [{ port: 80 }] },
    });
    await post('/api/v1/namespaces/default/services', svc('sg-svc'));
    await post(
      '/api/v1/namespaces/default/services',
      svc('bad-topology', { annotations: { topologyKeys: '[' } }),
    );
    await post('/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'dg-u1' },
      spec: deploymentSpec('web'),
    });
    const sg = await post('/apis/superedge.io/v1/namespaces/default/servicegrids', {
      apiVersion: 'superedge.io/v1',
      kind: 'ServiceGrid',
      metadata: { name: 'sg' },
      spec: { gridUniqKey: 'unit', template: { selector: { app: 'web' }, ports: [{ port: 80 }] } },
    });
    const owned = (o: Record<string, unknown>, kind: string): object => ({
      ownerReferences: [
        {
          apiVersion: 'superedge.io/v1',
          kind,
          name: (o['metadata'] as { name: string }).name,
          uid: (o['metadata'] as { uid: string }).uid,
          controller: true,
        },
      ],
    });
    // A grid whose Service does not exist yet: created.
    await post('/apis/superedge.io/v1/namespaces/default/servicegrids', {
      apiVersion: 'superedge.io/v1',
      kind: 'ServiceGrid',
      metadata: { name: 'sg2' },
      spec: { gridUniqKey: 'unit', template: { selector: { app: 'web' }, ports: [{ port: 81 }] } },
    });
    // Another Service the grid controls: deleted.
    await post('/api/v1/namespaces/default/services', svc('sg-extra', owned(sg, 'ServiceGrid')));
    await post('/apis/superedge.io/v1/namespaces/default/deploymentgrids', {
      apiVersion: 'superedge.io/v1',
      kind: 'DeploymentGrid',
      metadata: { name: 'dg' },
      spec: {
        gridUniqKey: 'unit',
        template: deploymentSpec('web'),
        // An unused pool entry (pruned: the grid's one spec write) and a unit whose template is missing
        // (UnitsFailed, a Warning Event).
        autoDeleteUnusedTemplate: true,
        templatePool: { unused: deploymentSpec('web') },
      },
    });

    const cm = spawnSvcplane(
      argsOf(objs, 'Deployment', {
        kubeconfig: kubeconfig('cm', cmProxy.url),
        'metrics-bind-address': '127.0.0.1:0',
      }),
    );
    const wrapperPorts = [await freePort(), await freePort()];
    const wrapper = spawnSvcplane(
      argsOf(objs, 'DaemonSet', {
        kubeconfig: kubeconfig('wrapper', wrapperProxy.url),
        hostname: 'node-a',
        'bind-address': `127.0.0.1:${wrapperPorts[0]}`,
        'insecure-bind-address': `127.0.0.1:${wrapperPorts[1]}`,
        'data-dir': path.join(work, 'wrapper'),
      }),
    );
    try {
      await until(
        () => `the leader\n${cm.log()}`,
        30_000,
        () => cm.log().includes('controllers started'),
      );
      // Adopted and put back; the other Service deleted; the pool pruned; both grids' status written.
      await until('the ServiceGrid converged', 20_000, async () => {
        const s = (await get('/api/v1/namespaces/default/services/sg-svc')) as {
          metadata: { ownerReferences?: unknown[] };
        };
        return (
          s.metadata.ownerReferences !== undefined &&
          (await get('/api/v1/namespaces/default/services/sg-extra')) === undefined &&
          (await get('/api/v1/namespaces/default/services/sg2-svc')) !== undefined &&
          ((await get('/apis/superedge.io/v1/namespaces/default/servicegrids/sg')) as { status?: object })
            .status !== undefined
        );
      });
      await until('the DeploymentGrid converged', 20_000, async () => {
        const dg = (await get('/apis/superedge.io/v1/namespaces/default/deploymentgrids/dg')) as {
          spec: { templatePool?: Record<string, unknown> };
          status?: object;
        };
        return (
          Object.keys(dg.spec.templatePool ?? {}).length === 0 &&
          dg.status !== undefined &&
          (await get('/apis/apps/v1/namespaces/default/deployments/dg-u2')) !== undefined &&
          (
            (await get('/apis/apps/v1/namespaces/default/deployments/dg-u1')) as {
              metadata: { ownerReferences?: unknown[] };
            }
          ).metadata.ownerReferences !== undefined
        );
      });
      // The wrapper serves node-a what its unit may use: of the grid Service's endpoints on node-a (u1)
      // and node-b (u2), only node-a's.
      await post('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'sg-svc-by-hand', labels: { 'kubernetes.io/service-name': 'sg-svc' } },
        addressType: 'IPv4',
        ports: [{ port: 80, protocol: 'TCP' }],
        endpoints: [
          { addresses: ['10.1.0.1'], nodeName: 'node-a', conditions: { ready: true } },
          { addresses: ['10.1.0.2'], nodeName: 'node-b', conditions: { ready: true } },
        ],
      });
      await until('the wrapper serving node-a its unit’s endpoints', 20_000, async () => {
        const r = await fetch(
          `http://127.0.0.1:${wrapperPorts[1]}/apis/discovery.k8s.io/v1/namespaces/default/endpointslices`,
        ).catch(() => undefined);
        if (r?.status !== 200) return undefined;
        const list = (await r.json()) as {
          items: { metadata: { name: string }; endpoints?: { addresses: string[] }[] | null }[];
        };
        const mine = list.items.find((i) => i.metadata.name === 'sg-svc-by-hand');
        const addresses = (mine?.endpoints ?? []).flatMap((e) => e.addresses);
        return addresses.length === 1 && addresses[0] === '10.1.0.1' ? true : undefined;
      });
      // A drifted Service is put back (update); a unit's last node leaves, so its Deployment goes.
      await patch('/api/v1/namespaces/default/services/sg-svc', { metadata: { labels: { drift: 'yes' } } });
      await patch('/api/v1/nodes/node-b', { metadata: { labels: { unit: null } } });
      // A unit whose template the pool lacks: UnitsFailed, a Warning Event.
      await patch('/apis/superedge.io/v1/namespaces/default/deploymentgrids/dg', {
        spec: { templates: { u1: 'missing' } },
      });
      await until('the Deployment of the empty unit deleted', 20_000, async () =>
        (await get('/apis/apps/v1/namespaces/default/deployments/dg-u2')) === undefined ? true : undefined,
      );
      // The same topology problem again on the same Service: the Event's count goes up (a PATCH).
      await until('the topology Warning', 20_000, () =>
        seen.cm.some((r) => r.request.startsWith('POST /api/v1/namespaces/default/events')),
      );
      await patch('/api/v1/namespaces/default/services/bad-topology', {
        metadata: { annotations: { topologyKeys: null } },
      });
      await new Promise((r) => setTimeout(r, 500));
      await patch('/api/v1/namespaces/default/services/bad-topology', {
        metadata: { annotations: { topologyKeys: '[' } },
      });
      await until('a repeated Event', 20_000, () =>
        seen.cm.some((r) => r.request.startsWith('PATCH /api/v1/namespaces/default/events/')),
      );
      // The wrapper watches its four resources once it has listed them.
      await until(
        () => `the wrapper watching\n${wrapper.log()}`,
        30_000,
        () =>
          new Set(
            seen.wrapper.filter((r) => r.request.includes('watch=true')).map((r) => r.request.split('?')[0]),
          ).size === 4,
      );
    } finally {
      await stop(cm.proc); // a clean stop releases the Lease (an update)
      await stop(wrapper.proc);
    }

    for (const [who, sa, requests] of [
      ['controller-manager', 'svcplane-controller-manager', seen.cm],
      ['wrapper', 'svcplane-wrapper', seen.wrapper],
    ] as const) {
      const rules = rulesFor(objs, sa);
      const used = new Set<string>();
      const denied: string[] = [];
      const refused = requests.filter((r) => r.status === 401 || r.status === 403).map((r) => r.request);
      assert.deepEqual(refused, [], `${who}: requests the server refused`);
      for (const { request: r } of requests) {
        const [method, url] = r.split(' ') as [string, string];
        const a = attributesOf(method, url);
        if (a === undefined) {
          assert.match(new URL(url, 'http://x').pathname, DISCOVERY, `${who}: a non-resource request ${r}`);
          continue;
        }
        const granting = rules.filter(
          (x) => (x.namespace === undefined || x.namespace === a.namespace) && ruleGrants(x.rule, a),
        );
        if (granting.length === 0)
          denied.push(`${a.verb} ${a.group || 'core'}/${a.resource} ${a.namespace}/${a.name} (${a.path})`);
        for (const g of granting)
          for (const t of tuples([g]))
            if (t.endsWith(` ${a.verb}`) && t.includes(` ${a.group || 'core'} ${a.resource} `)) used.add(t);
      }
      assert.deepEqual(denied, [], `${who}: requests deploy/'s roles do not grant`);
      const unused = tuples(rules).filter((t) => !used.has(t) && !/\/finalizers /.test(t));
      assert.deepEqual(unused, [], `${who}: grants no request of the scenario used`);
    }
  });

  it('gives the same tokens 403, with upstream’s message, for what the components do not need', async () => {
    const as = async (sa: string, args: string[]): Promise<string> => {
      const token = await tokenOf(sa);
      return kubectl([`--token=${token}`, ...args]).then(
        (out) => assert.fail(`kubectl ${args.join(' ')} as ${sa} was allowed: ${out}`),
        (err: Error) => err.message,
      );
    };
    const user = (sa: string): string => `User "system:serviceaccount:${NS}:${sa}"`;
    assert.match(
      await as('svcplane-wrapper', ['get', 'pods', '--all-namespaces']),
      new RegExp(
        `pods is forbidden: ${user('svcplane-wrapper')} cannot list resource "pods" in API group "" at the cluster scope`,
      ),
    );
    assert.match(
      await as('svcplane-controller-manager', ['delete', 'node', 'node-a']),
      new RegExp(
        `nodes "node-a" is forbidden: ${user('svcplane-controller-manager')} cannot delete resource "nodes" in API group "" at the cluster scope`,
      ),
    );
    assert.match(
      await as('svcplane-wrapper', ['create', 'service', 'clusterip', 'x', '--tcp=80:80', '-n', 'default']),
      new RegExp(
        `services is forbidden: ${user('svcplane-wrapper')} cannot create resource "services" in API group "" in the namespace "default"`,
      ),
    );
    assert.ok((await get('/api/v1/nodes/node-a')) !== undefined, 'node-a is still there');
  });
});
