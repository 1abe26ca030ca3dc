// The garbage collector end to end: kubectl against `svcplane up` (garbagecollector, endpoints and
// endpointslice controllers in-process), then `svcplane controller-manager --controllers garbagecollector`
// as its own process against `svcplane apiserver`. Deployments are only owners here (svcplane runs no
// deployment controller): the test makes their "pods" itself, with ownerReferences, as a controller would.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KObject, OwnerReference } from '../../src/api/object.js';
import { renderKubeconfig } from '../../src/apiserver/auth/kubeconfig.js';
import { kubectlFor } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const HOLD = 'example.com/hold';
const WAIT = 15_000;
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-gc-'));
after(() => rmSync(work, { recursive: true, force: true }));

type Srv = Pick<TestServer, 'url' | 'token' | 'ca' | 'kubeconfig'>;

const kubectl = (srv: Srv, args: string[], stdin?: string): Promise<string> =>
  kubectlFor(srv, work)(args, stdin);

const create = (srv: Srv, docs: object[]): Promise<string> =>
  kubectl(srv, ['create', '-f', '-'], docs.map((d) => JSON.stringify(d)).join('\n'));

const uidOf = async (srv: Srv, kind: string, name: string): Promise<string> => {
  const uid = await kubectl(srv, ['get', kind, name, '-o', 'jsonpath={.metadata.uid}']);
  assert.match(uid, /^[0-9a-f-]{36}$/);
  return uid;
};

const PATHS = {
  pod: '/api/v1/namespaces/default/pods/',
  'gc-other/pod': '/api/v1/namespaces/gc-other/pods/',
  deploy: '/apis/apps/v1/namespaces/default/deployments/',
  node: '/api/v1/nodes/',
  endpoints: '/api/v1/namespaces/default/endpoints/',
  svc: '/api/v1/namespaces/default/services/',
} as const;

/** The object as the server has it now, or undefined when it is not there. */
async function get(srv: Srv, kind: keyof typeof PATHS, name: string): Promise<KObject | undefined> {
  const r = await call(srv, 'GET', `${PATHS[kind]}${name}`);
  if (r.status === 404) return undefined;
  assert.equal(r.status, 200, r.text);
  return r.json<KObject>();
}

async function mustGet(srv: Srv, kind: keyof typeof PATHS, name: string): Promise<KObject> {
  const o = await get(srv, kind, name);
  assert.ok(o !== undefined, `${kind}/${name} is gone`);
  return o;
}

const goneAll = (srv: Srv, what: Array<[keyof typeof PATHS, string]>): Promise<true> =>
  until(
    () => `${what.map(([k, n]) => `${k}/${n}`).join(', ')} to be gone`,
    WAIT,
    async () => {
      for (const [k, n] of what) if ((await get(srv, k, n)) !== undefined) return undefined;
      return true;
    },
  );

const owner = (
  kind: 'Deployment' | 'Node' | 'Pod' | 'Widget',
  name: string,
  uid: string,
  extra: Partial<OwnerReference> = {},
): OwnerReference => ({
  apiVersion: { Deployment: 'apps/v1', Node: 'v1', Pod: 'v1', Widget: 'example.com/v1' }[kind],
  kind,
  name,
  uid,
  ...extra,
});

const pod = (
  name: string,
  ownerReferences: OwnerReference[] = [],
  meta: Record<string, unknown> = {},
  spec: Record<string, unknown> = {},
): object => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...(ownerReferences.length > 0 ? { ownerReferences } : {}), ...meta },
  spec: { containers: [{ name: 'c', image: 'x' }], ...spec },
});

const node = (name: string, ownerReferences: OwnerReference[] = []): object => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, ...(ownerReferences.length > 0 ? { ownerReferences } : {}) },
});

const uids = (o: KObject): string[] => (o.metadata.ownerReferences ?? []).map((r) => r.uid);

async function newDeployment(srv: Srv, name: string): Promise<string> {
  await kubectl(srv, ['create', 'deployment', name, '--image=x']);
  return uidOf(srv, 'deployment', name);
}

describe('garbage collector: kubectl against svcplane up', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startUp();
  });
  after(async () => srv?.destroy());

  it('kubectl delete svc removes its EndpointSlices (owned, collected) and its Endpoints', async () => {
    await create(srv, [
      node('gc-web-node'),
      pod('gc-web-1', [], { labels: { app: 'gc-web' } }, { nodeName: 'gc-web-node' }),
      pod('gc-web-2', [], { labels: { app: 'gc-web' } }, { nodeName: 'gc-web-node' }),
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'gc-web' },
        spec: { selector: { app: 'gc-web' }, ports: [{ port: 80, targetPort: 8080 }] },
      },
    ]);
    for (const [name, ip] of [
      ['gc-web-1', '10.244.9.1'],
      ['gc-web-2', '10.244.9.2'],
    ] as const) {
      const status = {
        phase: 'Running',
        podIP: ip,
        podIPs: [{ ip }],
        conditions: [{ type: 'Ready', status: 'True' }],
      };
      await kubectl(srv, [
        'patch',
        'pod',
        name,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({ status }),
      ]);
    }
    const svcUID = await uidOf(srv, 'service', 'gc-web');
    const slicesPath =
      '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dgc-web';
    const slices = async (): Promise<KObject[]> => {
      const r = await call(srv, 'GET', slicesPath);
      assert.equal(r.status, 200, r.text);
      return r.json<{ items: KObject[] }>().items;
    };
    const [slice] = await until('a slice with both pods', WAIT, async () => {
      const items = await slices();
      const n = items.flatMap((s) => (s as { endpoints?: unknown[] }).endpoints ?? []).length;
      return items.length === 1 && n === 2 ? items : undefined;
    });
    assert.deepEqual(
      slice!.metadata.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.blockOwnerDeletion]),
      [['Service', 'gc-web', svcUID, true]],
    );
    await until('the Endpoints with both pods', WAIT, async () => {
      const ep = await get(srv, 'endpoints', 'gc-web');
      const subsets = (ep as { subsets?: { addresses?: unknown[] }[] } | undefined)?.subsets ?? [];
      return subsets.flatMap((s) => s.addresses ?? []).length === 2 ? true : undefined;
    });

    await kubectl(srv, ['delete', 'svc', 'gc-web']);
    await until('the slices to go', WAIT, async () => ((await slices()).length === 0 ? true : undefined));
    await goneAll(srv, [['endpoints', 'gc-web']]);
    await mustGet(srv, 'pod', 'gc-web-1'); // selected pods are not dependents
    await mustGet(srv, 'node', 'gc-web-node');
  });

  it('Background (kubectl delete deploy): the owned pods go, others stay', async () => {
    const d = await newDeployment(srv, 'gc-bg');
    const ref = owner('Deployment', 'gc-bg', d, { controller: true, blockOwnerDeletion: true });
    await create(srv, [pod('gc-bg-1', [ref]), pod('gc-bg-2', [ref]), pod('gc-bg-other')]);
    await kubectl(srv, ['delete', 'deploy', 'gc-bg']);
    assert.equal(await get(srv, 'deploy', 'gc-bg'), undefined, 'a background delete does not wait');
    await goneAll(srv, [
      ['pod', 'gc-bg-1'],
      ['pod', 'gc-bg-2'],
    ]);
    await mustGet(srv, 'pod', 'gc-bg-other');
  });

  it('Foreground: a blocking dependent held by a finalizer keeps the owner; releasing it lets both go', async () => {
    const d = await newDeployment(srv, 'gc-fg');
    await create(srv, [
      pod('gc-fg-held', [owner('Deployment', 'gc-fg', d, { blockOwnerDeletion: true })], {
        finalizers: [HOLD],
      }),
      pod('gc-fg-free', [owner('Deployment', 'gc-fg', d, { blockOwnerDeletion: false })]),
    ]);
    await kubectl(srv, ['delete', 'deploy', 'gc-fg', '--cascade=foreground', '--wait=false']);
    // The non-blocking dependent is deleted too; the held one is marked for deletion.
    await goneAll(srv, [['pod', 'gc-fg-free']]);
    const held = await until('the held pod to be marked for deletion', WAIT, async () => {
      const p = await mustGet(srv, 'pod', 'gc-fg-held');
      return p.metadata.deletionTimestamp !== undefined ? p : undefined;
    });
    assert.deepEqual(held.metadata.finalizers, [HOLD]);
    const dep = await mustGet(srv, 'deploy', 'gc-fg');
    assert.ok(dep.metadata.deletionTimestamp !== undefined);
    assert.deepEqual(dep.metadata.finalizers, ['foregroundDeletion']);

    await kubectl(srv, [
      'patch',
      'pod',
      'gc-fg-held',
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":null}}',
    ]);
    await goneAll(srv, [
      ['pod', 'gc-fg-held'],
      ['deploy', 'gc-fg'],
    ]);
  });

  it('Foreground through a chain: Deployment → pod A → (pod B, Endpoints); the Deployment goes last', async () => {
    const d = await newDeployment(srv, 'gc-ch');
    await create(srv, [pod('gc-ch-a', [owner('Deployment', 'gc-ch', d, { blockOwnerDeletion: true })])]);
    const a = await uidOf(srv, 'pod', 'gc-ch-a');
    const byA = owner('Pod', 'gc-ch-a', a, { blockOwnerDeletion: true });
    await create(srv, [
      pod('gc-ch-b', [byA], { finalizers: [HOLD] }),
      {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: { name: 'gc-ch-ep', ownerReferences: [byA] },
        subsets: [{ addresses: [{ ip: '192.0.2.7' }], ports: [{ port: 80 }] }],
      },
    ]);
    await kubectl(srv, ['delete', 'deploy', 'gc-ch', '--cascade=foreground', '--wait=false']);
    // A is deleted in the foreground in turn: its Endpoints go, B is marked and holds the chain.
    await goneAll(srv, [['endpoints', 'gc-ch-ep']]);
    await until('pod B to be marked for deletion', WAIT, async () =>
      (await mustGet(srv, 'pod', 'gc-ch-b')).metadata.deletionTimestamp !== undefined ? true : undefined,
    );
    const podA = await until('pod A to wait for its dependents', WAIT, async () => {
      const p = await mustGet(srv, 'pod', 'gc-ch-a');
      return p.metadata.deletionTimestamp !== undefined ? p : undefined;
    });
    assert.deepEqual(podA.metadata.finalizers, ['foregroundDeletion']);
    const dep = await mustGet(srv, 'deploy', 'gc-ch');
    assert.deepEqual(dep.metadata.finalizers, ['foregroundDeletion']);

    await kubectl(srv, ['patch', 'pod', 'gc-ch-b', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    // Read owner before dependents: deletions only go forward, so a gone owner with a dependent
    // still present would be a real inversion.
    await until(
      'the whole chain to go',
      WAIT,
      async () => {
        const [dd, aa, bb] = [
          await get(srv, 'deploy', 'gc-ch'),
          await get(srv, 'pod', 'gc-ch-a'),
          await get(srv, 'pod', 'gc-ch-b'),
        ];
        assert.ok(
          dd !== undefined || (aa === undefined && bb === undefined),
          'the Deployment went before its chain',
        );
        assert.ok(aa !== undefined || bb === undefined, 'pod A went before pod B');
        return dd === undefined ? true : undefined;
      },
      20,
    );
  });

  it('Orphan (kubectl delete --cascade=orphan): dependents stay, only the reference to the owner goes', async () => {
    const d = await newDeployment(srv, 'gc-or');
    await create(srv, [node('gc-or-node')]);
    const n = await uidOf(srv, 'node', 'gc-or-node');
    const byD = owner('Deployment', 'gc-or', d, { controller: true, blockOwnerDeletion: true });
    await create(srv, [pod('gc-or-1', [byD]), pod('gc-or-2', [owner('Node', 'gc-or-node', n), byD])]);
    await kubectl(srv, ['delete', 'deploy', 'gc-or', '--cascade=orphan']); // waits for the deployment to go
    await goneAll(srv, [['deploy', 'gc-or']]);
    const p1 = await mustGet(srv, 'pod', 'gc-or-1');
    assert.equal(p1.metadata.ownerReferences, undefined, JSON.stringify(p1.metadata));
    const p2 = await mustGet(srv, 'pod', 'gc-or-2');
    assert.deepEqual(p2.metadata.ownerReferences, [owner('Node', 'gc-or-node', n)]);
  });

  it('dangling from the start: a missing owner or a namesake is collected; the right uid holds until deleted', async () => {
    await create(srv, [node('gc-dg-node')]);
    const n = await uidOf(srv, 'node', 'gc-dg-node');
    const d = await newDeployment(srv, 'gc-dg-deploy');
    await create(srv, [
      pod('gc-dg-ok', [owner('Node', 'gc-dg-node', n)]),
      pod('gc-dg-missing', [owner('Node', 'gc-dg-ghost', randomUUID())]),
      pod('gc-dg-namesake', [owner('Node', 'gc-dg-node', randomUUID())]),
      // A cluster-scoped object cannot be owned by a namespaced one, even one that exists.
      node('gc-dg-node-owned', [owner('Deployment', 'gc-dg-deploy', d)]),
    ]);
    // Nor can a namespaced owner in another namespace own a pod: owners are looked up in its namespace.
    await kubectl(srv, ['create', 'namespace', 'gc-other']);
    await kubectl(
      srv,
      ['create', '-n', 'gc-other', '-f', '-'],
      JSON.stringify(pod('gc-dg-elsewhere', [owner('Deployment', 'gc-dg-deploy', d)])),
    );
    await goneAll(srv, [
      ['pod', 'gc-dg-missing'],
      ['pod', 'gc-dg-namesake'],
      ['node', 'gc-dg-node-owned'],
      ['gc-other/pod', 'gc-dg-elsewhere'],
    ]);
    assert.deepEqual(uids(await mustGet(srv, 'pod', 'gc-dg-ok')), [n]);
    await mustGet(srv, 'node', 'gc-dg-node'); // the namesake owner itself is untouched
    await mustGet(srv, 'deploy', 'gc-dg-deploy');

    await kubectl(srv, ['delete', 'node', 'gc-dg-node']);
    await goneAll(srv, [['pod', 'gc-dg-ok']]);
  });

  it('a dependent whose owners all dangle is deleted with the policy its finalizers ask for', async () => {
    const ghost = (): OwnerReference => owner('Node', 'gc-pol-ghost', randomUUID());
    // Each starts owned by a pod that stays, gets a dependent, then has its owner replaced by a ghost.
    // Orphan: the dependent's own dependent is orphaned, not deleted.
    await create(srv, [pod('gc-pol-orphan-keeper', [])]);
    const keeper = await uidOf(srv, 'pod', 'gc-pol-orphan-keeper');
    await create(srv, [
      pod('gc-pol-o', [owner('Pod', 'gc-pol-orphan-keeper', keeper)], { finalizers: ['orphan'] }),
    ]);
    const o = await uidOf(srv, 'pod', 'gc-pol-o');
    await create(srv, [pod('gc-pol-o-child', [owner('Pod', 'gc-pol-o', o, { blockOwnerDeletion: true })])]);
    await kubectl(srv, [
      'patch',
      'pod',
      'gc-pol-o',
      '--type=merge',
      '-p',
      JSON.stringify({ metadata: { ownerReferences: [ghost()] } }),
    ]);
    await goneAll(srv, [['pod', 'gc-pol-o']]);
    assert.equal((await mustGet(srv, 'pod', 'gc-pol-o-child')).metadata.ownerReferences, undefined);

    // Foreground: the dependent waits for its own blocking dependent, held by a finalizer.
    await create(srv, [
      pod('gc-pol-f', [owner('Pod', 'gc-pol-orphan-keeper', keeper)], { finalizers: ['foregroundDeletion'] }),
    ]);
    const f = await uidOf(srv, 'pod', 'gc-pol-f');
    await create(srv, [
      pod('gc-pol-f-child', [owner('Pod', 'gc-pol-f', f, { blockOwnerDeletion: true })], {
        finalizers: [HOLD],
      }),
    ]);
    await kubectl(srv, [
      'patch',
      'pod',
      'gc-pol-f',
      '--type=merge',
      '-p',
      JSON.stringify({ metadata: { ownerReferences: [ghost()] } }),
    ]);
    await until('the child to be marked for deletion', WAIT, async () =>
      (await mustGet(srv, 'pod', 'gc-pol-f-child')).metadata.deletionTimestamp !== undefined
        ? true
        : undefined,
    );
    const parent = await mustGet(srv, 'pod', 'gc-pol-f');
    assert.ok(parent.metadata.deletionTimestamp !== undefined);
    assert.deepEqual(parent.metadata.finalizers, ['foregroundDeletion']);
    await kubectl(srv, [
      'patch',
      'pod',
      'gc-pol-f-child',
      '--type=merge',
      '-p',
      '{"metadata":{"finalizers":null}}',
    ]);
    await goneAll(srv, [
      ['pod', 'gc-pol-f-child'],
      ['pod', 'gc-pol-f'],
    ]);
  });

  it('Foreground through a cycle of blocking references still completes; alone, at once', async () => {
    await create(srv, [pod('gc-cy-1'), pod('gc-cy-2')]);
    const [u1, u2] = [await uidOf(srv, 'pod', 'gc-cy-1'), await uidOf(srv, 'pod', 'gc-cy-2')];
    const ownedBy = (name: string, uid: string): string =>
      JSON.stringify({
        metadata: { ownerReferences: [owner('Pod', name, uid, { blockOwnerDeletion: true })] },
      });
    await kubectl(srv, ['patch', 'pod', 'gc-cy-1', '--type=merge', '-p', ownedBy('gc-cy-2', u2)]);
    await kubectl(srv, ['patch', 'pod', 'gc-cy-2', '--type=merge', '-p', ownedBy('gc-cy-1', u1)]);
    await kubectl(srv, ['delete', 'pod', 'gc-cy-1', '--cascade=foreground', '--wait=false']);
    await goneAll(srv, [
      ['pod', 'gc-cy-1'],
      ['pod', 'gc-cy-2'],
    ]);
    await newDeployment(srv, 'gc-cy-alone');
    await kubectl(srv, ['delete', 'deploy', 'gc-cy-alone', '--cascade=foreground', '--wait=false']);
    await goneAll(srv, [['deploy', 'gc-cy-alone']]);
  });

  it('an owner of a kind that is not served is never collected, nor its reference removed', async () => {
    const widget = owner('Widget', 'w', randomUUID(), { controller: true, blockOwnerDeletion: true });
    const ghost = owner('Node', 'gc-uk-ghost', randomUUID());
    await create(srv, [pod('gc-uk-1', [widget]), pod('gc-uk-2', [widget, ghost])]);
    // The dangling reference on gc-uk-2 is removed; after that, nothing is left to do for either pod.
    const p2 = await until('the dangling reference to go', WAIT, async () => {
      const p = await mustGet(srv, 'pod', 'gc-uk-2');
      return uids(p).length === 1 ? p : undefined;
    });
    assert.deepEqual(p2.metadata.ownerReferences, [widget]);
    await create(srv, [pod('gc-uk-sentinel', [owner('Node', 'gc-uk-ghost', randomUUID())])]);
    await goneAll(srv, [['pod', 'gc-uk-sentinel']]);
    const p1 = await mustGet(srv, 'pod', 'gc-uk-1');
    assert.deepEqual(p1.metadata.ownerReferences, [widget]);
    assert.equal(p1.metadata.deletionTimestamp, undefined);
  });

  it('an object whose owner is in the cache costs the server no request (kube checks only unknown owners)', async () => {
    const d = await newDeployment(srv, 'gc-quiet');
    // Wait until the collector has the Deployment: a dependent of it alone stays, a dangling one goes.
    await create(srv, [pod('gc-quiet-probe', [owner('Deployment', 'gc-quiet', d)])]);
    const podGets = async (): Promise<number> => {
      const text = (await call(srv, 'GET', '/metrics')).text;
      let n = 0;
      for (const m of text.matchAll(/^apiserver_request_total\{([^}]*)\} (\d+)$/gm)) {
        if (m[1]!.includes('verb="GET"') && m[1]!.includes('resource="pods"')) n += Number(m[2]);
      }
      return n;
    };
    const before = await podGets();
    const ref = owner('Deployment', 'gc-quiet', d, { controller: true, blockOwnerDeletion: true });
    await create(
      srv,
      Array.from({ length: 20 }, (_, i) => pod(`gc-quiet-${i}`, [ref])),
    );
    // A dangling Node queued after them: once it is gone, the collector has been through the pods.
    await create(srv, [node('gc-quiet-sentinel', [owner('Node', 'gc-quiet-ghost', randomUUID())])]);
    await goneAll(srv, [['node', 'gc-quiet-sentinel']]);
    assert.equal((await podGets()) - before, 0, 'the collector read owned pods whose owner it has cached');
    assert.ok((await get(srv, 'pod', 'gc-quiet-19')) !== undefined);
  });

  it('two owners, one deleted: the dependent stays and loses only that reference', async () => {
    const d = await newDeployment(srv, 'gc-two');
    await create(srv, [node('gc-two-node')]);
    const n = await uidOf(srv, 'node', 'gc-two-node');
    const refs = [
      owner('Deployment', 'gc-two', d, { controller: true, blockOwnerDeletion: true }),
      owner('Node', 'gc-two-node', n),
    ];
    await create(srv, [pod('gc-two-1', refs), pod('gc-two-2', refs)]);
    await kubectl(srv, ['delete', 'deploy', 'gc-two']);
    for (const name of ['gc-two-1', 'gc-two-2']) {
      const p = await until(`${name} to lose the deployment`, WAIT, async () => {
        const got = await mustGet(srv, 'pod', name);
        return uids(got).length === 1 ? got : undefined;
      });
      assert.deepEqual(p.metadata.ownerReferences, [refs[1]]);
    }
    // Foreground now, from the other side: the pod loses the waiting owner's reference instead.
    await create(srv, [node('gc-two-node2')]);
    const n2 = await uidOf(srv, 'node', 'gc-two-node2');
    const both = [
      owner('Node', 'gc-two-node2', n2, { blockOwnerDeletion: true }),
      owner('Node', 'gc-two-node', n),
    ];
    await create(srv, [pod('gc-two-3', both)]);
    await kubectl(srv, ['delete', 'node', 'gc-two-node2', '--cascade=foreground']);
    await goneAll(srv, [['node', 'gc-two-node2']]);
    assert.deepEqual((await mustGet(srv, 'pod', 'gc-two-3')).metadata.ownerReferences, [both[1]]);
  });
});

// kube's registry (deletionFinalizersForGarbageCollection) first drops orphan and foregroundDeletion,
// then adds back what an explicit propagationPolicy asks for: `kubectl delete` (Background) of an object
// carrying one of them deletes it in the background.
describe('garbage collector: an explicit Background delete overrides GC finalizers', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startUp();
  });
  after(async () => srv?.destroy());

  it('kubectl delete of an object with the orphan finalizer deletes it and collects its dependents', async () => {
    await create(srv, [pod('gc-bo-owner', [], { finalizers: ['orphan'] })]);
    const o = await uidOf(srv, 'pod', 'gc-bo-owner');
    await create(srv, [pod('gc-bo-child', [owner('Pod', 'gc-bo-owner', o)])]);
    await kubectl(srv, ['delete', 'pod', 'gc-bo-owner', '--wait=false']);
    // svcplane orphans the child instead: stop polling as soon as either outcome shows.
    const child = await until('the child to be collected or orphaned', WAIT, async () => {
      const c = await get(srv, 'pod', 'gc-bo-child');
      if (c === undefined) return 'collected';
      return c.metadata.ownerReferences === undefined ? 'orphaned' : undefined;
    });
    assert.equal(child, 'collected');
  });

  it('kubectl delete (Background) of an owner waiting in the foreground deletes it at once', async () => {
    const d = await newDeployment(srv, 'gc-bo-fg');
    await create(srv, [
      pod('gc-bo-held', [owner('Deployment', 'gc-bo-fg', d, { blockOwnerDeletion: true })], {
        finalizers: [HOLD],
      }),
    ]);
    await kubectl(srv, ['delete', 'deploy', 'gc-bo-fg', '--cascade=foreground', '--wait=false']);
    await until('the held pod to be marked for deletion', WAIT, async () =>
      (await mustGet(srv, 'pod', 'gc-bo-held')).metadata.deletionTimestamp !== undefined ? true : undefined,
    );
    await kubectl(srv, ['delete', 'deploy', 'gc-bo-fg', '--wait=false']);
    assert.equal(await get(srv, 'deploy', 'gc-bo-fg'), undefined, 'foregroundDeletion was dropped');
  });
});

describe('garbage collector: svcplane controller-manager --controllers garbagecollector', () => {
  it('collects against svcplane apiserver, which runs no controllers itself', async () => {
    const token = 'gc-e2e-admin-token';
    const tokenFile = path.join(work, 'tokens.csv');
    writeFileSync(tokenFile, `${token},admin,admin,"system:masters"\n`);
    const api = await startUp({ command: 'apiserver', args: ['--token-auth-file', tokenFile] });
    const kubeconfig = path.join(work, 'cm-kubeconfig');
    writeFileSync(kubeconfig, renderKubeconfig({ server: api.url, caPem: api.ca, user: 'admin', token }));
    const srv: Srv = { url: api.url, ca: api.ca, token, kubeconfig };
    let cm: ChildProcess | undefined;
    let log = '';
    try {
      const d = await newDeployment(srv, 'gc-cm');
      await create(srv, [
        pod('gc-cm-owned', [owner('Deployment', 'gc-cm', d, { blockOwnerDeletion: true })]),
        pod('gc-cm-dangling', [owner('Node', 'gc-cm-ghost', randomUUID())]),
      ]);
      await mustGet(srv, 'pod', 'gc-cm-dangling'); // nothing collects yet
      cm = spawn(
        process.execPath,
        [BIN, 'controller-manager', '--kubeconfig', kubeconfig, '--controllers', 'garbagecollector'],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      cm.stdout!.on('data', (b: Buffer) => (log += b.toString()));
      cm.stderr!.on('data', (b: Buffer) => (log += b.toString()));
      const fail = (err: unknown): never => {
        throw new Error(`${String(err)}\ncontroller-manager:\n${log}`);
      };
      await goneAll(srv, [['pod', 'gc-cm-dangling']]).catch(fail);
      await mustGet(srv, 'pod', 'gc-cm-owned');
      await kubectl(srv, ['delete', 'deploy', 'gc-cm', '--cascade=foreground']); // waits for the chain
      await goneAll(srv, [
        ['pod', 'gc-cm-owned'],
        ['deploy', 'gc-cm'],
      ]).catch(fail);
    } finally {
      if (cm !== undefined && cm.exitCode === null && cm.signalCode === null) {
        const exited = new Promise((r) => cm!.once('exit', r));
        cm.kill('SIGTERM');
        await exited;
      }
      await api.destroy();
    }
  });
});
