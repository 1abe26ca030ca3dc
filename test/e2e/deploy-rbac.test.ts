// deploy/'s roles against what the components really ask for. `svcplane controller-manager` and
// `svcplane wrapper`, started with the flags deploy/ gives them, reach `svcplane apiserver` through a
// recording proxy while a scenario makes every grid controller write path run (create, adopt, put back,
// delete, prune templates, status, Warning Events and their repeats, leader election and its release).
// Each request becomes kube-apiserver's authorization attributes (verb, group, resource, subresource,
// namespace, name, as its RequestInfoFactory reads a path) and must be granted by the roles deploy/
// binds to that component; and each rule those roles grant must have been used, but for the one grant
// no request needs (`*/finalizers`, which the OwnerReferencesPermissionEnforcement admission plugin
// checks). So a role that is too narrow, or wider than the code, fails here.
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
import { freePort } from '../../src/storage/etcd/testing/etcd-server.js';
import { KUBECTL } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const DEPLOY = new URL('../../deploy', import.meta.url).pathname;
const TOKEN = 'deploy-rbac-admin-token';
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
  readonly resource: string;
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
    namespace,
    name,
    path: `${method} ${u.pathname}`,
  };
}

/** The discovery paths every authenticated user may read (kube's system:discovery ClusterRole). */
const DISCOVERY = /^\/(api|apis)(\/[^/]+(\/[^/]+)?)?$|^\/version$/;

const ruleGrants = (r: Rule, a: Attrs): boolean =>
  (r.apiGroups ?? []).some((g) => g === a.group || g === '*') &&
  (r.resources ?? []).some((x) => x === a.resource || x === '*') &&
  r.verbs.some((v) => v === a.verb || v === '*') &&
  (r.resourceNames === undefined || r.resourceNames.length === 0 || r.resourceNames.includes(a.name));

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

/** A plain-HTTP proxy to the server that records what each client asks (by its port's name). */
async function recordingProxy(srv: TestServer, seen: string[]): Promise<{ url: string; server: Server }> {
  const target = new URL(srv.url);
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
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
  const seen = { cm: [] as string[], wrapper: [] as string[] };
  const proxies: Server[] = [];
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

  before(async () => {
    objs = parseAllDocuments(
      execFileSync(KUBECTL, ['kustomize', DEPLOY], { encoding: 'utf8', maxBuffer: 64 << 20 }),
    )
      .map((d) => (Array.isArray(d) ? undefined : (d.toJS() as Obj)))
      .filter((o): o is Obj => o !== undefined && o !== null);
    const tokenFile = path.join(work, 'tokens.csv');
    writeFileSync(tokenFile, `${TOKEN},admin,admin,"system:masters"\n`);
    const port = await freePort();
    srv = {
      ...(await startUp({
        command: 'apiserver',
        dataDir: path.join(work, 'api'),
        args: ['--token-auth-file', tokenFile, '--secure-port', String(port)],
      })),
      token: TOKEN,
    };
    await post('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });

  it('every request is granted, and every grant but */finalizers is used', async () => {
    const cmProxy = await recordingProxy(srv, seen.cm);
    const wrapperProxy = await recordingProxy(srv, seen.wrapper);
    proxies.push(cmProxy.server, wrapperProxy.server);
    // Plain HTTP to the recording proxy; the token is what the proxy passes on.
    const kubeconfig = (name: string, server: string): string => {
      const file = path.join(work, `${name}.kubeconfig`);
      writeFileSync(
        file,
        stringify({
          apiVersion: 'v1',
          kind: 'Config',
          // client-node takes plain HTTP only with TLS verification off.
          clusters: [{ name, cluster: { server, 'insecure-skip-tls-verify': true } }],
          users: [{ name, user: { token: TOKEN } }],
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
        seen.cm.some((r) => r.startsWith('POST /api/v1/namespaces/default/events')),
      );
      await patch('/api/v1/namespaces/default/services/bad-topology', {
        metadata: { annotations: { topologyKeys: null } },
      });
      await new Promise((r) => setTimeout(r, 500));
      await patch('/api/v1/namespaces/default/services/bad-topology', {
        metadata: { annotations: { topologyKeys: '[' } },
      });
      await until('a repeated Event', 20_000, () =>
        seen.cm.some((r) => r.startsWith('PATCH /api/v1/namespaces/default/events/')),
      );
      // The wrapper watches its four resources once it has listed them.
      await until(
        () => `the wrapper watching\n${wrapper.log()}`,
        30_000,
        () =>
          new Set(seen.wrapper.filter((r) => r.includes('watch=true')).map((r) => r.split('?')[0])).size ===
          4,
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
      for (const r of requests) {
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
});
