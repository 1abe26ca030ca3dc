// The ServiceGrid and DeploymentGrid controllers end to end, with the real kubectl: SuperEdge's ServiceGroup
// example verbatim against `svcplane up` (three nodes labelled into two units, the doc's DeploymentGrid and
// ServiceGrid), then drift put back, template changes, stray and adopted Services, a relabel moving a unit,
// an upper-case unit value, a missing templatePool entry and deleting the grids. The same core flow runs
// last with the controllers in `svcplane controller-manager` against a separate `svcplane apiserver`.
// The contract is SuperEdge's (its superedge.io/v1 CRDs and application-grid-controller) without its
// defects: names are always valid, the grids' specs are never written back, and every Service or
// Deployment a grid makes carries a controller ownerReference, so the garbage collector removes it with
// the grid.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { renderKubeconfig } from '../../src/apiserver/auth/kubeconfig.js';
import { kubectlFor, writeYaml, type Kubectl } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const FIXTURES = new URL('./fixtures/grids/', import.meta.url).pathname;
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-grids-'));
after(() => rmSync(work, { recursive: true, force: true }));

const GRID_SELECTOR = 'superedge.io/grid-selector';
const GRID_UNIQ_KEY = 'superedge.io/grid-uniq-key';
const GRID_UNIT = 'superedge.io/grid-unit';
const TEMPLATE_HASH = 'superedge.io/template-hash-key';

type Api = Pick<TestServer, 'url' | 'token' | 'ca'>;
type Labels = Record<string, string>;

interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}
interface Meta {
  name: string;
  uid: string;
  resourceVersion: string;
  generation?: number;
  labels?: Labels;
  annotations?: Labels;
  ownerReferences?: OwnerReference[];
}
interface ServicePort {
  name?: string;
  protocol?: string;
  port: number;
  targetPort?: number | string;
  nodePort?: number;
}
interface Service {
  metadata: Meta;
  spec: {
    type?: string;
    clusterIP?: string;
    selector?: Labels;
    ports?: ServicePort[];
    externalIPs?: string[];
  };
}
interface Deployment {
  metadata: Meta;
  spec: {
    replicas?: number;
    template: {
      metadata?: { labels?: Labels };
      spec: { nodeSelector?: Labels; containers: { name: string; image: string }[] };
    };
  };
}
interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface Grid {
  metadata: Meta;
  spec: Record<string, unknown>;
  status?: { conditions?: Condition[]; observedGeneration?: number; states?: Record<string, unknown> };
}

const PATHS = {
  svc: '/api/v1/namespaces/default/services',
  deploy: '/apis/apps/v1/namespaces/default/deployments',
  sg: '/apis/superedge.io/v1/namespaces/default/servicegrids',
  dg: '/apis/superedge.io/v1/namespaces/default/deploymentgrids',
} as const;

/** The object at `PATHS[kind]/name`, or undefined when it does not exist. */
async function getObj<T>(srv: Api, kind: keyof typeof PATHS, name: string): Promise<T | undefined> {
  const r = await call(srv, 'GET', `${PATHS[kind]}/${name}`);
  if (r.status === 404) return undefined;
  assert.equal(r.status, 200, r.text);
  return r.json<T>();
}

/** The Deployments a grid made (by its grid-selector label), sorted by name. */
async function gridDeployments(srv: Api, grid: string): Promise<Deployment[]> {
  const r = await call(
    srv,
    'GET',
    `${PATHS.deploy}?labelSelector=${encodeURIComponent(`${GRID_SELECTOR}=${grid}`)}`,
  );
  assert.equal(r.status, 200, r.text);
  return r.json<{ items: Deployment[] }>().items.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
}

const names = (objs: readonly { metadata: Meta }[]): string[] => objs.map((o) => o.metadata.name);
const byUnit = (ds: readonly Deployment[], unit: string): Deployment | undefined =>
  ds.find((d) => d.metadata.labels?.[GRID_UNIT] === unit);
const controllerRef = (o: { metadata: Meta }): OwnerReference | undefined =>
  o.metadata.ownerReferences?.find((r) => r.controller === true);
const podLabels = (d: Deployment): Labels => d.spec.template.metadata?.labels ?? {};
const images = (d: Deployment): string[] => d.spec.template.spec.containers.map((c) => c.image);
const condition = (g: Grid | undefined, type: string): Condition | undefined =>
  g?.status?.conditions?.find((c) => c.type === type);
const stateKeys = (g: Grid | undefined): string[] => Object.keys(g?.status?.states ?? {}).sort();

/** The template's ports and selector, as SuperEdge's servicegrid-demo declares them. */
const DEMO_PORTS: ServicePort[] = [{ protocol: 'TCP', port: 80, targetPort: 8080 }];
const DEMO_SELECTOR = { appGrid: 'echo' };
const matchesDemoTemplate = (s: Service | undefined): boolean =>
  s !== undefined &&
  isDeepStrictEqual(s.spec.ports, DEMO_PORTS) &&
  isDeepStrictEqual(s.spec.selector, DEMO_SELECTOR) &&
  (s.spec.externalIPs ?? []).length === 0;

/** A ServiceGrid over zone1 whose Service selects `app` on port 80 → 8080. */
const serviceGrid = (name: string, app: string): Record<string, unknown> => ({
  apiVersion: 'superedge.io/v1',
  kind: 'ServiceGrid',
  metadata: { name },
  spec: {
    gridUniqKey: 'zone1',
    template: { selector: { app }, ports: [{ protocol: 'TCP', port: 80, targetPort: 8080 }] },
  },
});

/** Warning Events about an object, through either Event API: `reason: message` each. */
async function warnings(k: Kubectl, kind: string, name: string): Promise<string[]> {
  interface CoreEvent {
    type?: string;
    reason?: string;
    message?: string;
    involvedObject?: { kind?: string; name?: string };
  }
  interface NewEvent {
    type?: string;
    reason?: string;
    note?: string;
    regarding?: { kind?: string; name?: string };
  }
  const core = JSON.parse(await k(['get', 'events', '-o', 'json'])) as { items: CoreEvent[] };
  const v1 = JSON.parse(await k(['get', 'events.v1.events.k8s.io', '-o', 'json'])) as { items: NewEvent[] };
  return [
    ...core.items
      .filter(
        (e) => e.type === 'Warning' && e.involvedObject?.kind === kind && e.involvedObject.name === name,
      )
      .map((e) => `${e.reason ?? ''}: ${e.message ?? ''}`),
    ...v1.items
      .filter((e) => e.type === 'Warning' && e.regarding?.kind === kind && e.regarding.name === name)
      .map((e) => `${e.reason ?? ''}: ${e.note ?? ''}`),
  ];
}

interface WatchEvent<T> {
  type: string;
  object: T;
}

/**
 * The watch events of the named object from `fromRV` (exclusive) up to the event that carries `toRV`:
 * every write the object saw in between, in order.
 */
function writesBetween<T extends { metadata: Meta }>(
  srv: Api,
  kind: keyof typeof PATHS,
  name: string,
  fromRV: string,
  toRV: string,
): Promise<WatchEvent<T>[]> {
  const u = new URL(
    `${PATHS[kind]}?watch=1&resourceVersion=${fromRV}&fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`,
    srv.url,
  );
  return new Promise((resolve, reject) => {
    const seen: WatchEvent<T>[] = [];
    let buf = '';
    const req = httpsRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: 'GET',
        ca: srv.ca,
        agent: new Agent({ ca: srv.ca, keepAlive: false }),
        headers: { Authorization: `Bearer ${srv.token}` },
      },
      (res) => {
        if (res.statusCode !== 200) {
          req.destroy();
          reject(new Error(`watch ${u.pathname}${u.search}: HTTP ${res.statusCode ?? 0}`));
          return;
        }
        res.on('data', (chunk: Buffer) => {
          buf += chunk.toString('utf8');
          for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line === '') continue;
            const ev = JSON.parse(line) as WatchEvent<T>;
            if (ev.type === 'BOOKMARK' || ev.object.metadata.name !== name) continue;
            seen.push(ev);
            if (ev.object.metadata.resourceVersion === toRV) {
              clearTimeout(deadline);
              req.destroy();
              resolve(seen);
              return;
            }
          }
        });
      },
    );
    const deadline = setTimeout(() => {
      req.destroy();
      reject(new Error(`the watch did not reach resourceVersion ${toRV}: ${JSON.stringify(seen)}`));
    }, 15_000);
    req.on('error', (err) => {
      clearTimeout(deadline);
      reject(err);
    });
    req.end();
  });
}

/** until(), with the tail of the controllers' log in the failure so a stuck controller explains itself. */
async function waitFor<T>(
  what: string | (() => string),
  log: () => string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  ms = 15_000,
): Promise<Exclude<T, false>> {
  try {
    return await until(what, ms, probe, 100);
  } catch (err) {
    throw new Error(`${String(err)}\n--- controller log (tail) ---\n${log().slice(-4000)}`, {
      cause: err,
    });
  }
}

/** The seed's steps verbatim: three nodes, `kubectl label` into two units, the doc's two grids. */
async function applySeed(k: Kubectl): Promise<{ dg: Grid; sg: Grid }> {
  await k(['apply', '-f', path.join(FIXTURES, 'nodes.yaml')]);
  await k(['label', 'node', 'node0', 'zone1=nodeunit1']);
  await k(['label', 'node', 'node1', 'zone1=nodeunit2']);
  await k(['label', 'node', 'node2', 'zone1=nodeunit2']);
  // The objects as the server stored them at create, before any controller could touch them.
  const dg = JSON.parse(
    await k(['apply', '-f', path.join(FIXTURES, 'deploymentgrid.yaml'), '-o', 'json']),
  ) as Grid;
  const sg = JSON.parse(
    await k(['apply', '-f', path.join(FIXTURES, 'servicegrid.yaml'), '-o', 'json']),
  ) as Grid;
  assert.equal(dg.metadata.name, 'deploymentgrid-demo');
  assert.equal(sg.metadata.name, 'servicegrid-demo');
  return { dg, sg };
}

/** The seed's Service and its two Deployments, once the controllers made them. */
async function seedConverged(
  srv: Api,
  sg: Grid,
  dg: Grid,
  log: () => string,
): Promise<{ svc: Service; deps: Deployment[] }> {
  const svc = await waitFor(
    'servicegrid-demo-svc, controlled by the grid, with a clusterIP',
    log,
    async () => {
      const s = await getObj<Service>(srv, 'svc', 'servicegrid-demo-svc');
      return s !== undefined && controllerRef(s)?.uid === sg.metadata.uid && (s.spec.clusterIP ?? '') !== ''
        ? s
        : undefined;
    },
  );
  const deps = await waitFor('a Deployment for nodeunit1 and one for nodeunit2', log, async () => {
    const ds = await gridDeployments(srv, 'deploymentgrid-demo');
    return ds.length === 2 && ds.every((d) => controllerRef(d)?.uid === dg.metadata.uid) ? ds : undefined;
  });
  return { svc, deps };
}

describe('ServiceGrid and DeploymentGrid: kubectl against svcplane up', () => {
  let srv: TestServer;
  let k: Kubectl;
  let sg: Grid;
  let dg: Grid;
  const log = (): string => srv.stderr();
  before(async () => {
    srv = await startUp();
    const home = path.join(work, 'home-up');
    mkdirSync(home);
    k = kubectlFor(srv, home);
  });
  after(async () => srv?.destroy());

  it('the seed: three nodes in two units make one Service and a Deployment per unit, and status says so', async () => {
    ({ dg, sg } = await applySeed(k));
    const { svc, deps } = await seedConverged(srv, sg, dg, log);

    // The Service: <sg>-svc with the grid's labels and topologyKeys, the template's spec, an allocated
    // clusterIP, and a controller ownerReference to the grid.
    assert.match(
      await k(['get', 'svc']),
      /^servicegrid-demo-svc\s+ClusterIP\s+\d+\.\d+\.\d+\.\d+\s+<none>\s+80\/TCP\s+/m,
    );
    assert.equal(svc.metadata.labels?.[GRID_SELECTOR], 'servicegrid-demo');
    assert.equal(svc.metadata.labels?.[GRID_UNIQ_KEY], 'zone1');
    assert.equal(svc.metadata.annotations?.['topologyKeys'], '["zone1"]');
    assert.deepEqual(svc.spec.selector, DEMO_SELECTOR);
    assert.deepEqual(svc.spec.ports, DEMO_PORTS);
    assert.equal(svc.spec.type, 'ClusterIP');
    assert.match(svc.spec.clusterIP ?? '', /^\d+\.\d+\.\d+\.\d+$/);
    const svcOwners = (svc.metadata.ownerReferences ?? []).filter((r) => r.controller === true);
    assert.equal(svcOwners.length, 1, JSON.stringify(svc.metadata.ownerReferences));
    assert.deepEqual(
      { ...svcOwners[0]!, blockOwnerDeletion: undefined },
      {
        apiVersion: 'superedge.io/v1',
        kind: 'ServiceGrid',
        name: 'servicegrid-demo',
        uid: sg.metadata.uid,
        controller: true,
        blockOwnerDeletion: undefined,
      },
    );

    // The Deployments: exactly one per unit, named <dg>-<unit>, pinned to their unit.
    assert.deepEqual((await k(['get', 'deploy', '-o', 'name'])).trim().split('\n').sort(), [
      'deployment.apps/deploymentgrid-demo-nodeunit1',
      'deployment.apps/deploymentgrid-demo-nodeunit2',
    ]);
    assert.deepEqual(names(deps), ['deploymentgrid-demo-nodeunit1', 'deploymentgrid-demo-nodeunit2']);
    for (const unit of ['nodeunit1', 'nodeunit2']) {
      const d = deps.find((x) => x.metadata.name === `deploymentgrid-demo-${unit}`)!;
      assert.equal(d.metadata.labels?.[GRID_SELECTOR], 'deploymentgrid-demo');
      assert.equal(d.metadata.labels?.[GRID_UNIQ_KEY], 'zone1');
      assert.equal(d.metadata.labels?.[GRID_UNIT], unit);
      assert.deepEqual(d.spec.template.spec.nodeSelector, { zone1: unit });
      assert.equal(podLabels(d)['appGrid'], 'echo');
      assert.match(podLabels(d)[TEMPLATE_HASH] ?? '', /^\S+$/, 'the pod template carries the template hash');
      assert.equal(d.spec.replicas, 2);
      assert.deepEqual(images(d), ['superedge/echoserver:2.2']);
      const owners = (d.metadata.ownerReferences ?? []).filter((r) => r.controller === true);
      assert.equal(owners.length, 1, JSON.stringify(d.metadata.ownerReferences));
      assert.equal(owners[0]!.apiVersion, 'superedge.io/v1');
      assert.equal(owners[0]!.kind, 'DeploymentGrid');
      assert.equal(owners[0]!.name, 'deploymentgrid-demo');
      assert.equal(owners[0]!.uid, dg.metadata.uid);
    }
    assert.equal(
      podLabels(deps[0]!)[TEMPLATE_HASH],
      podLabels(deps[1]!)[TEMPLATE_HASH],
      'both units use the same template, so the same hash',
    );

    // Status: the ServiceGrid is Ready at its generation; the DeploymentGrid lists both units.
    const sgNow = await waitFor('servicegrid-demo Ready at its generation', log, async () => {
      const g = await getObj<Grid>(srv, 'sg', 'servicegrid-demo');
      return condition(g, 'Ready')?.status === 'True' &&
        g?.status?.observedGeneration === g?.metadata.generation
        ? g
        : undefined;
    });
    const dgNow = await waitFor('deploymentgrid-demo status with both units', log, async () => {
      const g = await getObj<Grid>(srv, 'dg', 'deploymentgrid-demo');
      return JSON.stringify(stateKeys(g)) === '["nodeunit1","nodeunit2"]' ? g : undefined;
    });
    const sgTable = await k(['get', 'sg']);
    assert.match(sgTable, /^NAME\s+GRID-KEY\s+SERVICE\s+AGE\s*$/m, sgTable);
    assert.match(sgTable, /^servicegrid-demo\s+zone1\s+servicegrid-demo-svc\s+\S+\s*$/m, sgTable);
    const dgTable = await k(['get', 'dg']);
    assert.match(dgTable, /^NAME\s+GRID-KEY\s+UNITS\s+READY\s+AGE\s*$/m, dgTable);
    assert.match(dgTable, /^deploymentgrid-demo\s+zone1\s+2\s+\S+\s+\S+\s*$/m, dgTable);

    // The grids' specs are the user's: the controllers never write them (SuperEdge wrote the template
    // hash back into the DeploymentGrid's spec).
    assert.deepEqual(dgNow.spec, dg.spec);
    assert.equal(dgNow.metadata.generation, dg.metadata.generation);
    assert.deepEqual(sgNow.spec, sg.spec);
    assert.equal(sgNow.metadata.generation, sg.metadata.generation);
  });

  it('drift is put back: Service ports, selector and externalIPs, Deployment replicas and image', async () => {
    const before = (await getObj<Service>(srv, 'svc', 'servicegrid-demo-svc'))!;
    const patched = JSON.parse(
      await k([
        'patch',
        'svc',
        'servicegrid-demo-svc',
        '--type=merge',
        '-p',
        JSON.stringify({
          spec: { ports: [{ protocol: 'TCP', port: 81, targetPort: 9999 }], selector: { appGrid: 'other' } },
        }),
        '-o',
        'json',
      ]),
    ) as Service;
    assert.equal(patched.spec.ports?.[0]?.port, 81, 'the drift was written');
    let svc = await waitFor('the ports and selector put back', log, async () => {
      const s = await getObj<Service>(srv, 'svc', 'servicegrid-demo-svc');
      return s !== undefined &&
        s.metadata.resourceVersion !== patched.metadata.resourceVersion &&
        matchesDemoTemplate(s)
        ? s
        : undefined;
    });
    assert.equal(svc.spec.clusterIP, before.spec.clusterIP, 'the allocated clusterIP is kept');
    assert.equal(svc.metadata.uid, before.metadata.uid, 'updated in place, not recreated');

    const withIPs = JSON.parse(
      await k([
        'patch',
        'svc',
        'servicegrid-demo-svc',
        '--type=merge',
        '-p',
        '{"spec":{"externalIPs":["192.0.2.10"]}}',
        '-o',
        'json',
      ]),
    ) as Service;
    assert.deepEqual(withIPs.spec.externalIPs, ['192.0.2.10'], 'the drift was written');
    svc = await waitFor('the externalIPs the template does not have removed', log, async () => {
      const s = await getObj<Service>(srv, 'svc', 'servicegrid-demo-svc');
      return s !== undefined &&
        s.metadata.resourceVersion !== withIPs.metadata.resourceVersion &&
        matchesDemoTemplate(s)
        ? s
        : undefined;
    });
    assert.equal(svc.spec.clusterIP, before.spec.clusterIP);

    await k([
      'patch',
      'deploy',
      'deploymentgrid-demo-nodeunit1',
      '--type=merge',
      '-p',
      '{"spec":{"replicas":5}}',
    ]);
    await k(['set', 'image', 'deploy/deploymentgrid-demo-nodeunit2', 'echo=busybox:1.36']);
    await waitFor('replicas 2 and image echoserver:2.2 back on both Deployments', log, async () => {
      const ds = await gridDeployments(srv, 'deploymentgrid-demo');
      return ds.length === 2 &&
        ds.every((d) => d.spec.replicas === 2 && JSON.stringify(images(d)) === '["superedge/echoserver:2.2"]')
        ? ds
        : undefined;
    });
  });

  it('a template change reaches the Service in one update, and the Deployments; the hash follows the template, not replicas', async () => {
    const before = (await getObj<Service>(srv, 'svc', 'servicegrid-demo-svc'))!;
    await k([
      'patch',
      'sg',
      'servicegrid-demo',
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: {
          template: {
            type: 'NodePort',
            ports: [
              { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 },
              { name: 'metrics', protocol: 'TCP', port: 9090, targetPort: 9090 },
            ],
          },
        },
      }),
    ]);
    const svc = await waitFor('a NodePort Service with both ports', log, async () => {
      const s = await getObj<Service>(srv, 'svc', 'servicegrid-demo-svc');
      return s?.spec.type === 'NodePort' && s.spec.ports?.length === 2 ? s : undefined;
    });
    assert.equal(svc.spec.clusterIP, before.spec.clusterIP, 'the clusterIP is kept');
    assert.deepEqual(
      svc.spec.ports!.map((p) => ({ ...p, nodePort: undefined })),
      [
        { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080, nodePort: undefined },
        { name: 'metrics', protocol: 'TCP', port: 9090, targetPort: 9090, nodePort: undefined },
      ],
    );
    const nodePorts = svc.spec.ports!.map((p) => p.nodePort ?? 0);
    assert.ok(
      nodePorts.every((p) => p >= 30000 && p <= 32767) && nodePorts[0] !== nodePorts[1],
      `nodePorts allocated: ${JSON.stringify(nodePorts)}`,
    );
    const writes = await writesBetween<Service>(
      srv,
      'svc',
      'servicegrid-demo-svc',
      before.metadata.resourceVersion,
      svc.metadata.resourceVersion,
    );
    assert.deepEqual(
      writes.map((w) => `${w.type} ${w.object.spec.type ?? ''} ${w.object.spec.ports?.length ?? 0}`),
      ['MODIFIED NodePort 2'],
      'the Service went from the old template to the new one in a single write',
    );
    await waitFor('servicegrid-demo Ready at its new generation', log, async () => {
      const g = await getObj<Grid>(srv, 'sg', 'servicegrid-demo');
      return g !== undefined &&
        g.metadata.generation !== sg.metadata.generation &&
        g.status?.observedGeneration === g.metadata.generation &&
        condition(g, 'Ready')?.status === 'True'
        ? g
        : undefined;
    });

    const hashBefore = podLabels((await gridDeployments(srv, 'deploymentgrid-demo'))[0]!)[TEMPLATE_HASH];
    await k([
      'patch',
      'dg',
      'deploymentgrid-demo',
      '--type=merge',
      '-p',
      '{"spec":{"template":{"replicas":3}}}',
    ]);
    const scaled = await waitFor('replicas 3 on both Deployments', log, async () => {
      const ds = await gridDeployments(srv, 'deploymentgrid-demo');
      return ds.length === 2 && ds.every((d) => d.spec.replicas === 3) ? ds : undefined;
    });
    for (const d of scaled)
      assert.equal(
        podLabels(d)[TEMPLATE_HASH],
        hashBefore,
        `${d.metadata.name}: replicas are not in the hash`,
      );

    await k([
      'patch',
      'dg',
      'deploymentgrid-demo',
      '--type=json',
      '-p',
      '[{"op":"replace","path":"/spec/template/template/spec/containers/0/image","value":"superedge/echoserver:2.3"}]',
    ]);
    const rolled = await waitFor('image echoserver:2.3 on both Deployments', log, async () => {
      const ds = await gridDeployments(srv, 'deploymentgrid-demo');
      return ds.length === 2 && ds.every((d) => JSON.stringify(images(d)) === '["superedge/echoserver:2.3"]')
        ? ds
        : undefined;
    });
    const hashAfter = podLabels(rolled[0]!)[TEMPLATE_HASH];
    assert.ok(
      hashAfter !== undefined && hashAfter !== hashBefore,
      `the hash changes with the image: ${hashAfter}`,
    );
    assert.equal(podLabels(rolled[1]!)[TEMPLATE_HASH], hashAfter);
    assert.ok(rolled.every((d) => d.spec.replicas === 3));
    const dgNow = (await getObj<Grid>(srv, 'dg', 'deploymentgrid-demo'))!;
    assert.equal(
      (dgNow.spec['template'] as { template: { metadata?: { labels?: Labels } } }).template.metadata
        ?.labels?.[TEMPLATE_HASH],
      undefined,
      'the hash is not written back into the grid',
    );
  });

  it('a stray Service the grid controls is deleted; a labelled one nobody owns is left alone', async () => {
    const sgNow = (await getObj<Grid>(srv, 'sg', 'servicegrid-demo'))!;
    const labelled = (name: string, owners: OwnerReference[]): Record<string, unknown> => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name,
        labels: { [GRID_SELECTOR]: 'servicegrid-demo' },
        ...(owners.length === 0 ? {} : { ownerReferences: owners }),
      },
      spec: { selector: { app: name }, ports: [{ protocol: 'TCP', port: 7070, targetPort: 7070 }] },
    });
    // The unowned one first: when the controller has handled the owned one, it has seen both.
    await k(['apply', '-f', writeYaml(work, 'stray-unowned.yaml', [labelled('stray-unowned', [])])]);
    const unowned = (await getObj<Service>(srv, 'svc', 'stray-unowned'))!;
    await k([
      'apply',
      '-f',
      writeYaml(work, 'stray-owned.yaml', [
        labelled('stray-owned', [
          {
            apiVersion: 'superedge.io/v1',
            kind: 'ServiceGrid',
            name: 'servicegrid-demo',
            uid: sgNow.metadata.uid,
            controller: true,
            blockOwnerDeletion: true,
          },
        ]),
      ]),
    ]);
    await waitFor('the stray Service the grid controls deleted', log, async () =>
      (await getObj<Service>(srv, 'svc', 'stray-owned')) === undefined ? true : undefined,
    );
    const unownedNow = await getObj<Service>(srv, 'svc', 'stray-unowned');
    assert.ok(unownedNow !== undefined, 'a labelled Service nobody owns is not deleted');
    assert.equal(unownedNow.metadata.resourceVersion, unowned.metadata.resourceVersion, 'nor changed');
    assert.equal(unownedNow.metadata.ownerReferences, undefined, 'nor adopted');
  });

  it('an unowned <sg>-svc that exists before its grid is adopted: it gains the ownerReference and the template', async () => {
    const pre = JSON.parse(
      await k([
        'create',
        '-f',
        writeYaml(work, 'adopt-demo-svc.yaml', [
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: 'adopt-demo-svc' },
            spec: { selector: { app: 'old' }, ports: [{ protocol: 'TCP', port: 8081, targetPort: 8081 }] },
          },
        ]),
        '-o',
        'json',
      ]),
    ) as Service;
    const adoptGrid = JSON.parse(
      await k([
        'apply',
        '-f',
        writeYaml(work, 'adopt-demo.yaml', [serviceGrid('adopt-demo', 'adopt')]),
        '-o',
        'json',
      ]),
    ) as Grid;
    const adopted = await waitFor('adopt-demo-svc adopted with the template spec', log, async () => {
      const s = await getObj<Service>(srv, 'svc', 'adopt-demo-svc');
      return s !== undefined &&
        controllerRef(s)?.uid === adoptGrid.metadata.uid &&
        isDeepStrictEqual(s.spec.selector, { app: 'adopt' }) &&
        isDeepStrictEqual(s.spec.ports, DEMO_PORTS)
        ? s
        : undefined;
    });
    assert.equal(adopted.metadata.uid, pre.metadata.uid, 'adopted in place, not recreated');
    assert.equal(adopted.spec.clusterIP, pre.spec.clusterIP);
    assert.equal(controllerRef(adopted)?.kind, 'ServiceGrid');
    assert.equal(controllerRef(adopted)?.apiVersion, 'superedge.io/v1');
    assert.equal(adopted.metadata.labels?.[GRID_SELECTOR], 'adopt-demo');
    assert.equal(adopted.metadata.annotations?.['topologyKeys'], '["zone1"]');
  });

  it('a <sg>-svc another controller owns is left alone, and the grid says so: Ready=False and a Warning', async () => {
    // other-demo-svc is controlled by another object (a Lease here, so the garbage collector keeps it).
    const lease = JSON.parse(
      await k([
        'apply',
        '-f',
        writeYaml(work, 'lease.yaml', [
          {
            apiVersion: 'coordination.k8s.io/v1',
            kind: 'Lease',
            metadata: { name: 'other-owner' },
            spec: { holderIdentity: 'someone-else' },
          },
        ]),
        '-o',
        'json',
      ]),
    ) as { metadata: Meta };
    const other = JSON.parse(
      await k([
        'create',
        '-f',
        writeYaml(work, 'other-demo-svc.yaml', [
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: {
              name: 'other-demo-svc',
              ownerReferences: [
                {
                  apiVersion: 'coordination.k8s.io/v1',
                  kind: 'Lease',
                  name: 'other-owner',
                  uid: lease.metadata.uid,
                  controller: true,
                },
              ],
            },
            spec: { selector: { app: 'theirs' }, ports: [{ protocol: 'TCP', port: 8082, targetPort: 8082 }] },
          },
        ]),
        '-o',
        'json',
      ]),
    ) as Service;
    await k(['apply', '-f', writeYaml(work, 'other-demo.yaml', [serviceGrid('other-demo', 'mine')])]);
    const otherGrid = await waitFor('other-demo Ready=False', log, async () => {
      const g = await getObj<Grid>(srv, 'sg', 'other-demo');
      return condition(g, 'Ready')?.status === 'False' ? g : undefined;
    });
    const warned = await waitFor('a Warning event about other-demo', log, async () => {
      const w = await warnings(k, 'ServiceGrid', 'other-demo');
      return w.length > 0 ? w : undefined;
    });
    const otherNow = (await getObj<Service>(srv, 'svc', 'other-demo-svc'))!;
    assert.equal(
      otherNow.metadata.resourceVersion,
      other.metadata.resourceVersion,
      `another controller's Service is left alone (condition: ${JSON.stringify(condition(otherGrid, 'Ready'))}; events: ${warned.join('; ')})`,
    );
  });

  it('a unit Deployment another controller owns is reported and not counted; once it is deleted the grid makes its own', async () => {
    const lease = JSON.parse(
      await k([
        'apply',
        '-f',
        writeYaml(work, 'dg-owner.yaml', [
          { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'dg-owner' }, spec: {} },
        ]),
        '-o',
        'json',
      ]),
    ) as { metadata: Meta };
    const template = {
      replicas: 1,
      selector: { matchLabels: { app: 'taken' } },
      template: {
        metadata: { labels: { app: 'taken' } },
        spec: { containers: [{ name: 'c', image: 'nginx' }] },
      },
    };
    await k([
      'create',
      '-f',
      writeYaml(work, 'taken-nodeunit1.yaml', [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: {
            name: 'taken-nodeunit1',
            ownerReferences: [
              {
                apiVersion: 'coordination.k8s.io/v1',
                kind: 'Lease',
                name: 'dg-owner',
                uid: lease.metadata.uid,
                controller: true,
              },
            ],
          },
          spec: template,
        },
      ]),
    ]);
    await k([
      'apply',
      '-f',
      writeYaml(work, 'taken.yaml', [
        {
          apiVersion: 'superedge.io/v1',
          kind: 'DeploymentGrid',
          metadata: { name: 'taken' },
          spec: { gridUniqKey: 'zone1', template },
        },
      ]),
    ]);
    const reported = await waitFor("taken reports nodeunit1 as another controller's", log, async () => {
      const g = await getObj<Grid>(srv, 'dg', 'taken');
      return condition(g, 'UnitsFailed')?.reason === 'OwnedByAnotherController' && stateKeys(g).length === 1
        ? g
        : undefined;
    });
    assert.deepEqual(stateKeys(reported), ['nodeunit2'], 'only the unit the grid serves is in its status');
    assert.match(condition(reported, 'UnitsFailed')?.message ?? '', /nodeunit1/);
    await k(['delete', 'deploy', 'taken-nodeunit1']);
    const mine = await waitFor('taken-nodeunit1 made by the grid', log, async () => {
      const d = await getObj<Deployment>(srv, 'deploy', 'taken-nodeunit1');
      return d !== undefined && controllerRef(d)?.kind === 'DeploymentGrid' ? d : undefined;
    });
    assert.equal(mine.metadata.labels?.[GRID_UNIT], 'nodeunit1');
  });

  it('a missing templatePool entry fails only its unit; the others reconcile, with the template nodeSelector merged', async () => {
    const podTemplate = (image: string, disktype: string): Record<string, unknown> => ({
      replicas: 1,
      selector: { matchLabels: { app: 'pool' } },
      template: {
        metadata: { labels: { app: 'pool' } },
        // zone1 here is overridden by each unit's own value.
        spec: { nodeSelector: { disktype, zone1: 'everywhere' }, containers: [{ name: 'web', image }] },
      },
    });
    const pool = JSON.parse(
      await k([
        'apply',
        '-f',
        writeYaml(work, 'pool-demo.yaml', [
          {
            apiVersion: 'superedge.io/v1',
            kind: 'DeploymentGrid',
            metadata: { name: 'pool-demo' },
            spec: {
              gridUniqKey: 'zone1',
              template: podTemplate('nginx:1.25', 'hdd'),
              templatePool: { canary: podTemplate('nginx:1.27', 'ssd') },
              templates: { nodeunit1: 'canary', nodeunit2: 'missing' },
            },
          },
        ]),
        '-o',
        'json',
      ]),
    ) as Grid;
    assert.deepEqual(
      pool.spec['templates'],
      { nodeunit1: 'canary', nodeunit2: 'missing' },
      'the server keeps spec.templates',
    );
    const deps = await waitFor('pool-demo-nodeunit1 from the canary template', log, async () => {
      const ds = await gridDeployments(srv, 'pool-demo');
      return byUnit(ds, 'nodeunit1') !== undefined ? ds : undefined;
    });
    const canary = byUnit(deps, 'nodeunit1')!;
    assert.equal(canary.metadata.name, 'pool-demo-nodeunit1');
    assert.deepEqual(images(canary), ['nginx:1.27']);
    assert.deepEqual(canary.spec.template.spec.nodeSelector, { disktype: 'ssd', zone1: 'nodeunit1' });
    const named = await waitFor('a condition naming nodeunit2', log, async () => {
      const g = await getObj<Grid>(srv, 'dg', 'pool-demo');
      return g?.status?.conditions?.find((c) => `${c.reason ?? ''} ${c.message ?? ''}`.includes('nodeunit2'));
    });
    assert.ok(
      !(named.type === 'Ready' && named.status === 'True'),
      `a problem, not Ready: ${JSON.stringify(named)}`,
    );
    await waitFor('a Warning event about pool-demo', log, async () => {
      const w = await warnings(k, 'DeploymentGrid', 'pool-demo');
      return w.length > 0 ? w : undefined;
    });
    assert.deepEqual(
      names(await gridDeployments(srv, 'pool-demo')),
      ['pool-demo-nodeunit1'],
      'nodeunit2 gets none',
    );
  });

  it('relabelling a node moves it between units; deleting nodes keeps a unit that still has one; an upper-case unit gets a valid name', async () => {
    await k(['label', 'node', 'node0', 'zone1=nodeunit2', '--overwrite']);
    await waitFor('deploymentgrid-demo-nodeunit1 deleted', log, async () => {
      const ds = await gridDeployments(srv, 'deploymentgrid-demo');
      return JSON.stringify(names(ds)) === '["deploymentgrid-demo-nodeunit2"]' ? ds : undefined;
    });
    await waitFor('deploymentgrid-demo status with one unit', log, async () => {
      const g = await getObj<Grid>(srv, 'dg', 'deploymentgrid-demo');
      return JSON.stringify(stateKeys(g)) === '["nodeunit2"]' ? g : undefined;
    });
    await waitFor('kubectl get dg showing 1 unit', log, async () =>
      /^deploymentgrid-demo\s+zone1\s+1\s+/m.test(await k(['get', 'dg'])) ? true : undefined,
    );
    await waitFor('pool-demo-nodeunit1 deleted too', log, async () =>
      (await gridDeployments(srv, 'pool-demo')).length === 0 ? true : undefined,
    );

    // node2 goes while node0 and node1 stay in nodeunit2; then node3 joins as Unit_A. When Unit_A's
    // Deployment shows up the controller has seen node2's deletion too (one informer, in order).
    await k(['delete', 'node', 'node2']);
    await k([
      'apply',
      '-f',
      writeYaml(work, 'node3.yaml', [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node3' } }]),
    ]);
    await k(['label', 'node', 'node3', 'zone1=Unit_A']);
    const deps = await waitFor('a Deployment for Unit_A', log, async () => {
      const ds = await gridDeployments(srv, 'deploymentgrid-demo');
      return byUnit(ds, 'Unit_A') !== undefined ? ds : undefined;
    });
    assert.equal(deps.length, 2, JSON.stringify(names(deps)));
    assert.equal(
      byUnit(deps, 'nodeunit2')?.metadata.name,
      'deploymentgrid-demo-nodeunit2',
      'nodeunit2 stays',
    );
    const upper = byUnit(deps, 'Unit_A')!;
    assert.match(upper.metadata.name, /^deploymentgrid-demo-unit-a-[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    assert.ok(upper.metadata.name.length <= 253);
    assert.deepEqual(upper.spec.template.spec.nodeSelector, { zone1: 'Unit_A' });
    assert.match(await k(['get', 'deploy', upper.metadata.name, '-o', 'name']), /^deployment\.apps\//);
    await waitFor('deploymentgrid-demo status with Unit_A and nodeunit2', log, async () => {
      const g = await getObj<Grid>(srv, 'dg', 'deploymentgrid-demo');
      return JSON.stringify(stateKeys(g)) === '["Unit_A","nodeunit2"]' ? g : undefined;
    });

    // pool-demo's Unit_A has no templates entry: the default template, its nodeSelector merged.
    const poolUpper = await waitFor('pool-demo Deployment for Unit_A', log, async () =>
      byUnit(await gridDeployments(srv, 'pool-demo'), 'Unit_A'),
    );
    assert.match(poolUpper.metadata.name, /^pool-demo-unit-a-[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    assert.deepEqual(images(poolUpper), ['nginx:1.25']);
    assert.deepEqual(poolUpper.spec.template.spec.nodeSelector, { disktype: 'hdd', zone1: 'Unit_A' });
  });

  it('deleting the grids deletes every Service and Deployment they made, and nothing else', async () => {
    await k(['delete', 'sg,dg', '--all']);
    await waitFor("the grids' Services and Deployments gone", log, async () => {
      const deps = await call(srv, 'GET', PATHS.deploy);
      const svcs = await call(srv, 'GET', PATHS.svc);
      const left = [
        ...deps.json<{ items: Deployment[] }>().items,
        ...svcs
          .json<{ items: Service[] }>()
          .items.filter((s) => s.metadata.ownerReferences?.some((r) => r.kind === 'ServiceGrid')),
      ];
      return left.length === 0 ? true : undefined;
    });
    for (const name of ['servicegrid-demo-svc', 'adopt-demo-svc'])
      assert.equal(await getObj<Service>(srv, 'svc', name), undefined, name);
    assert.ok(await getObj<Service>(srv, 'svc', 'stray-unowned'), 'the unowned labelled Service stays');
    assert.ok(await getObj<Service>(srv, 'svc', 'other-demo-svc'), "another owner's Service stays");
    assert.equal((await k(['get', 'deploy', '-o', 'name'])).trim(), '');
  });
});

describe('ServiceGrid and DeploymentGrid: svcplane controller-manager against svcplane apiserver', () => {
  it('the seed converges, a relabel removes a unit, deleting the grids removes everything', async () => {
    const TOKEN = 'grids-e2e-admin-token';
    const dir = path.join(work, 'cm');
    mkdirSync(dir);
    const tokenFile = path.join(dir, 'tokens.csv');
    writeFileSync(tokenFile, `${TOKEN},admin,admin,"system:masters"\n`);
    const api = await startUp({ command: 'apiserver', args: ['--token-auth-file', tokenFile] });
    const srv: Api = { url: api.url, ca: api.ca, token: TOKEN };
    const kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      renderKubeconfig({ server: api.url, caPem: api.ca, user: 'admin', token: TOKEN }),
    );
    const home = path.join(dir, 'home');
    mkdirSync(home);
    const k = kubectlFor({ kubeconfig }, home);
    let cmLog = '';
    const cm: ChildProcess = spawn(
      process.execPath,
      [
        BIN,
        'controller-manager',
        '--kubeconfig',
        kubeconfig,
        '--controllers',
        'servicegrid,deploymentgrid,garbagecollector',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    cm.stdout!.on('data', (d: Buffer) => (cmLog += d.toString()));
    cm.stderr!.on('data', (d: Buffer) => (cmLog += d.toString()));
    const log = (): string => `${cmLog}\n--- apiserver ---\n${api.stderr()}`;
    try {
      const { dg, sg } = await applySeed(k);
      const { svc, deps } = await seedConverged(srv, sg, dg, log);
      assert.equal(svc.metadata.annotations?.['topologyKeys'], '["zone1"]');
      assert.deepEqual(svc.spec.ports, DEMO_PORTS);
      assert.deepEqual(names(deps), ['deploymentgrid-demo-nodeunit1', 'deploymentgrid-demo-nodeunit2']);
      assert.deepEqual(
        deps.map((d) => d.spec.template.spec.nodeSelector),
        [{ zone1: 'nodeunit1' }, { zone1: 'nodeunit2' }],
      );

      await k(['label', 'node', 'node0', 'zone1=nodeunit2', '--overwrite']);
      await waitFor('deploymentgrid-demo-nodeunit1 deleted', log, async () =>
        JSON.stringify(names(await gridDeployments(srv, 'deploymentgrid-demo'))) ===
        '["deploymentgrid-demo-nodeunit2"]'
          ? true
          : undefined,
      );

      await k(['delete', 'sg,dg', '--all']);
      await waitFor('the Service and Deployments gone with their grids', log, async () =>
        (await getObj<Service>(srv, 'svc', 'servicegrid-demo-svc')) === undefined &&
        (await gridDeployments(srv, 'deploymentgrid-demo')).length === 0
          ? true
          : undefined,
      );
      assert.equal((await k(['get', 'deploy', '-o', 'name'])).trim(), '');
    } finally {
      if (cm.exitCode === null && cm.signalCode === null) cm.kill('SIGTERM');
      await api.destroy();
    }
  });
});
