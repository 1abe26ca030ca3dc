// The API server's side of workloads, end to end with the real kubectl against `svcplane up`:
// ReplicaSets (get, explain, -o wide), the Scale subresource of Deployments and ReplicaSets
// (`kubectl scale`), pods/binding, graceful pod deletion (timeline and watch events, force delete),
// deletion of a namespace that holds a bound pod, and what `kubectl rollout` needs from the server.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KObject } from '../../src/api/object.js';
import { kubectlFor, type Kubectl } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-workloads-api-'));
let srv: TestServer;
let kubectl: Kubectl;

before(async () => {
  srv = await startUp();
  kubectl = kubectlFor(srv, work);
});
after(async () => {
  await srv?.destroy();
  rmSync(work, { recursive: true, force: true });
});

const template = (app: string): Record<string, unknown> => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] },
});

const replicaSet = (name: string, replicas: number, ns = 'default'): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name, namespace: ns },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: template(name) },
});

const deployment = (name: string, ns = 'default'): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: ns },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: template(name) },
});

const node = (name: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name },
});

const pod = (name: string, ns: string, spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns },
  spec: { containers: [{ name: 'c', image: 'nginx:1.25' }], ...spec },
});

const create = (...docs: Record<string, unknown>[]): Promise<string> =>
  kubectl(['create', '-f', '-'], docs.map((d) => JSON.stringify(d)).join('\n'));

async function getPod(ns: string, name: string): Promise<KObject | undefined> {
  const r = await call(srv, 'GET', `/api/v1/namespaces/${ns}/pods/${name}`);
  if (r.status === 404) return undefined;
  assert.equal(r.status, 200, r.text);
  return r.json<KObject>();
}

const binding = (name: string, nodeName: string, kind = 'Node'): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Binding',
  metadata: { name },
  target: { kind, name: nodeName },
});

describe('workloads: the API server side', () => {
  it('serves ReplicaSets: api-resources, get (and -o wide), explain', async () => {
    const resources = await kubectl(['api-resources', '--api-group=apps']);
    assert.match(resources, /^replicasets\s+rs\s+apps\/v1\s+true\s+ReplicaSet$/m);
    await create(replicaSet('web', 0));
    const table = await kubectl(['get', 'rs', 'web']);
    assert.match(table, /^NAME\s+DESIRED\s+CURRENT\s+READY\s+AGE\n/);
    assert.match(table, /^web\s+0\s+0\s+0\s+\d+s$/m);
    const wide = await kubectl(['get', 'rs', 'web', '-o', 'wide']);
    assert.match(wide, /CONTAINERS\s+IMAGES\s+SELECTOR/);
    assert.match(wide, /^web\s+0\s+0\s+0\s+\S+\s+c\s+nginx:1\.25\s+app=web$/m);
    const explain = await kubectl(['explain', 'rs.spec']);
    assert.match(explain, /KIND:\s+ReplicaSet/);
    assert.match(explain, /replicas\s+<integer>/);
    assert.match(explain, /template\s+<PodTemplateSpec>/);
    const rs = JSON.parse(await kubectl(['get', 'rs', 'web', '-o', 'json'])) as KObject;
    assert.equal(rs.metadata.generation, 1);
    // status.replicas is always written (the ReplicaSet controller may have filled in the rest).
    assert.equal((rs.status as { replicas?: unknown }).replicas, 0);
  });

  it('refuses a ReplicaSet whose selector misses its template labels', async () => {
    const bad = replicaSet('bad', 1);
    (bad['spec'] as Record<string, unknown>)['selector'] = { matchLabels: { app: 'other' } };
    await assert.rejects(
      create(bad),
      /The ReplicaSet "bad" is invalid: spec.template.metadata.labels: Invalid value: .*`selector` does not match template `labels`/,
    );
  });

  it('scales Deployments and ReplicaSets through /scale, listed by discovery', async () => {
    const apps = await call(srv, 'GET', '/apis/apps/v1');
    const names = apps.json<{ resources: { name: string; group?: string; kind: string }[] }>().resources;
    for (const n of ['deployments/scale', 'replicasets/scale']) {
      const r = names.find((x) => x.name === n);
      assert.deepEqual([r?.group, r?.kind], ['autoscaling', 'Scale'], n);
    }
    await create(deployment('dep'));
    assert.equal(await kubectl(['scale', 'deploy/dep', '--replicas=5']), 'deployment.apps/dep scaled\n');
    assert.equal(await kubectl(['scale', 'rs/web', '--replicas=2']), 'replicaset.apps/web scaled\n');
    const dep = JSON.parse(await kubectl(['get', 'deploy', 'dep', '-o', 'json'])) as KObject;
    assert.equal((dep.spec as { replicas: number }).replicas, 5);
    assert.equal(dep.metadata.generation, 2);

    const scale = await call(srv, 'GET', '/apis/apps/v1/namespaces/default/deployments/dep/scale');
    assert.equal(scale.status, 200, scale.text);
    const s = scale.json<Record<string, Record<string, unknown>>>();
    assert.equal(s['kind'] as unknown, 'Scale');
    assert.equal(s['apiVersion'] as unknown, 'autoscaling/v1');
    assert.deepEqual(Object.keys(s['metadata']!).sort(), [
      'creationTimestamp',
      'name',
      'namespace',
      'resourceVersion',
      'uid',
    ]);
    assert.deepEqual(s['spec'], { replicas: 5 });
    // status.replicas is the Deployment's own (its controller may be at work meanwhile).
    const depNow = JSON.parse(await kubectl(['get', 'deploy', 'dep', '-o', 'json'])) as KObject;
    assert.equal(s['status']!['selector'], 'app=dep');
    assert.equal(typeof s['status']!['replicas'], 'number');
    assert.ok(
      (s['status']!['replicas'] as number) <=
        ((depNow.status as { replicas?: number } | undefined)?.replicas ?? 0),
    );

    // A resourceVersion in the body is a precondition.
    const stale = await call(srv, 'PUT', '/apis/apps/v1/namespaces/default/deployments/dep/scale', {
      body: { ...s, metadata: { ...s['metadata'], resourceVersion: '1' }, spec: { replicas: 3 } },
    });
    assert.equal(stale.status, 409, stale.text);
    const put = await call(srv, 'PUT', '/apis/apps/v1/namespaces/default/deployments/dep/scale', {
      body: { ...s, spec: { replicas: 3 } },
    });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json<Record<string, unknown>>()['spec'], { replicas: 3 });

    for (const [type, body] of [
      ['application/merge-patch+json', { spec: { replicas: 4 } }],
      ['application/strategic-merge-patch+json', { spec: { replicas: 6 } }],
      ['application/json-patch+json', [{ op: 'replace', path: '/spec/replicas', value: 7 }]],
    ] as const) {
      const r = await call(srv, 'PATCH', '/apis/apps/v1/namespaces/default/replicasets/web/scale', {
        body,
        contentType: type,
      });
      assert.equal(r.status, 200, `${type}: ${r.text}`);
    }
    const rs = JSON.parse(await kubectl(['get', 'rs', 'web', '-o', 'json'])) as KObject;
    assert.equal((rs.spec as { replicas: number }).replicas, 7);

    const negative = await call(srv, 'PATCH', '/apis/apps/v1/namespaces/default/deployments/dep/scale', {
      body: { spec: { replicas: -1 } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(negative.status, 422, negative.text);
    assert.equal(
      negative.json<{ message: string }>().message,
      'Scale.autoscaling "dep" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    );
    const missing = await call(srv, 'GET', '/apis/apps/v1/namespaces/default/replicasets/nope/scale');
    assert.equal(missing.status, 404, missing.text);
  });

  it('binds a pod once through pods/binding, and refuses as upstream does', async () => {
    const core = await call(srv, 'GET', '/api/v1');
    const names = core.json<{ resources: { name: string }[] }>().resources.map((r) => r.name);
    assert.ok(names.includes('pods/binding'), names.join(' '));
    await create(node('bind-node'), pod('b1', 'default'), pod('b2', 'default'));
    const ok = await call(srv, 'POST', '/api/v1/namespaces/default/pods/b1/binding', {
      body: binding('b1', 'bind-node'),
    });
    assert.equal(ok.status, 201, ok.text);
    assert.deepEqual(ok.json(), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      code: 201,
    });
    const wide = await kubectl(['get', 'pods', 'b1', '-o', 'wide']);
    assert.match(wide, /^b1\s+0\/1\s+Pending\s+0\s+\S+\s+<none>\s+bind-node\s+/m);

    const again = await call(srv, 'POST', '/api/v1/namespaces/default/pods/b1/binding', {
      body: binding('b1', 'other'),
    });
    assert.equal(again.status, 409, again.text);
    assert.equal(
      again.json<{ message: string }>().message,
      'Operation cannot be fulfilled on pods/binding "b1": pod b1 is already assigned to node "bind-node"',
    );
    const wrongKind = await call(srv, 'POST', '/api/v1/namespaces/default/pods/b2/binding', {
      body: binding('b2', 'bind-node', 'Pod'),
    });
    assert.equal(wrongKind.status, 422, wrongKind.text);
    const mismatch = await call(srv, 'POST', '/api/v1/namespaces/default/pods/b2/binding', {
      body: binding('b1', 'bind-node'),
    });
    assert.equal(mismatch.status, 400, mismatch.text);
    assert.equal(
      mismatch.json<{ message: string }>().message,
      'name in URL does not match name in Binding object',
    );
    // The legacy collection takes the pod's name from the body.
    const legacy = await call(srv, 'POST', '/api/v1/namespaces/default/bindings', {
      body: binding('b2', 'bind-node'),
    });
    assert.equal(legacy.status, 201, legacy.text);
    assert.equal(((await getPod('default', 'b2'))?.spec as { nodeName?: string }).nodeName, 'bind-node');

    // A terminating pod cannot be bound.
    await create({
      ...pod('b3', 'default'),
      metadata: { name: 'b3', namespace: 'default', finalizers: ['example.com/hold'] },
    });
    await kubectl(['delete', 'pod', 'b3', '--wait=false']);
    const terminating = await call(srv, 'POST', '/api/v1/namespaces/default/pods/b3/binding', {
      body: binding('b3', 'bind-node'),
    });
    assert.equal(terminating.status, 409, terminating.text);
    assert.equal(
      terminating.json<{ message: string }>().message,
      'Operation cannot be fulfilled on pods/binding "b3": pod b3 is being deleted, cannot be assigned to a host',
    );
    await kubectl([
      'patch',
      'pod',
      'b3',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    ]);
    await until('b3 to go', 10_000, async () => (await getPod('default', 'b3')) === undefined);
  });

  it('deletes a bound pod gracefully: deletionTimestamp, still there, gone on grace 0; watch sees MODIFIED then DELETED', async () => {
    await create(
      node('grace-node'),
      pod('g1', 'default', { nodeName: 'grace-node', terminationGracePeriodSeconds: 60 }),
    );
    const created = await getPod('default', 'g1');
    const from = created!.metadata.resourceVersion!;
    const started = Date.now();
    const first = await call(srv, 'DELETE', '/api/v1/namespaces/default/pods/g1');
    assert.equal(first.status, 200, first.text);
    const marked = first.json<KObject>();
    assert.equal(marked.kind, 'Pod');
    assert.equal(marked.metadata.deletionGracePeriodSeconds, 60);
    const deadline = Date.parse(marked.metadata.deletionTimestamp!);
    assert.ok(Math.abs(deadline - (started + 60_000)) < 5_000, marked.metadata.deletionTimestamp!);
    const still = await getPod('default', 'g1');
    assert.equal(still?.metadata.deletionTimestamp, marked.metadata.deletionTimestamp);
    assert.match(await kubectl(['get', 'pod', 'g1']), /^g1\s+0\/1\s+Terminating\s+/m);
    // A longer grace changes nothing; a shorter one moves the deadline.
    const longer = await call(srv, 'DELETE', '/api/v1/namespaces/default/pods/g1', {
      body: { gracePeriodSeconds: 120 },
    });
    assert.equal(longer.json<KObject>().metadata.deletionGracePeriodSeconds, 60);
    const shorter = await call(srv, 'DELETE', '/api/v1/namespaces/default/pods/g1', {
      body: { gracePeriodSeconds: 30 },
    });
    assert.equal(shorter.json<KObject>().metadata.deletionGracePeriodSeconds, 30);
    assert.equal(Date.parse(shorter.json<KObject>().metadata.deletionTimestamp!), deadline - 30_000);

    const last = await call(srv, 'DELETE', '/api/v1/namespaces/default/pods/g1', {
      body: { gracePeriodSeconds: 0 },
    });
    assert.equal(last.status, 200, last.text);
    assert.equal(await getPod('default', 'g1'), undefined);

    const w = await call(
      srv,
      'GET',
      `/api/v1/namespaces/default/pods?watch=true&resourceVersion=${from}&fieldSelector=metadata.name%3Dg1&timeoutSeconds=1`,
    );
    const events = w.text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as { type: string; object: KObject });
    assert.deepEqual(
      events.map((e) => [e.type, e.object.metadata.deletionGracePeriodSeconds]),
      [
        ['MODIFIED', 60],
        ['MODIFIED', 30],
        ['MODIFIED', 0],
        ['DELETED', 0],
      ],
    );
  });

  it('kubectl delete --grace-period=0 --force removes a bound pod at once; an unbound pod goes at once anyway', async () => {
    await create(pod('f1', 'default', { nodeName: 'grace-node' }), pod('f2', 'default'));
    const out = await kubectl(['delete', 'pod', 'f1', '--grace-period=0', '--force']);
    assert.match(out, /pod "f1" force deleted/);
    assert.equal(await getPod('default', 'f1'), undefined);
    await kubectl(['delete', 'pod', 'f2', '--wait=false']);
    assert.equal(await getPod('default', 'f2'), undefined);
  });

  it('deletes a namespace that holds bound pods: each is deleted gracefully, then forced once its grace runs out', async () => {
    await kubectl(['create', 'namespace', 'wl-ns']);
    await create(
      pod('q1', 'wl-ns', { nodeName: 'grace-node', terminationGracePeriodSeconds: 2 }),
      pod('q2', 'wl-ns', { nodeName: 'no-such-node' }),
    );
    await kubectl(['delete', 'namespace', 'wl-ns', '--wait=false']);
    // The pod on a node that exists is given its grace period first.
    const q1 = await until('q1 to be terminating', 5_000, async () => {
      const p = await getPod('wl-ns', 'q1');
      return p?.metadata.deletionTimestamp !== undefined ? p : undefined;
    });
    assert.equal(q1.metadata.deletionGracePeriodSeconds, 2);
    await until('the namespace to go', 20_000, async () => {
      const r = await call(srv, 'GET', '/api/v1/namespaces/wl-ns');
      return r.status === 404;
    });
  });

  it('kubectl rollout restart and rollout history work against hand-made objects', async () => {
    await create(deployment('roll'));
    const dep = JSON.parse(await kubectl(['get', 'deploy', 'roll', '-o', 'json'])) as KObject;
    const owner = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'roll',
      uid: dep.metadata.uid!,
      controller: true,
      blockOwnerDeletion: true,
    };
    for (const [hash, rev] of [
      ['aaaa1', '1'],
      ['bbbb2', '2'],
    ] as const) {
      const rs = replicaSet(`roll-${hash}`, 0);
      const labels = { app: 'roll', 'pod-template-hash': hash };
      await create({
        ...rs,
        metadata: {
          name: `roll-${hash}`,
          namespace: 'default',
          labels,
          annotations: { 'deployment.kubernetes.io/revision': rev },
          ownerReferences: [owner],
        },
        spec: {
          replicas: 0,
          selector: { matchLabels: labels },
          template: { ...template('roll'), metadata: { labels } },
        },
      });
    }
    const history = await kubectl(['rollout', 'history', 'deploy/roll']);
    assert.match(history, /REVISION\s+CHANGE-CAUSE\n1\s+<none>\n2\s+<none>/);
    assert.equal(await kubectl(['rollout', 'restart', 'deploy/roll']), 'deployment.apps/roll restarted\n');
    const after = JSON.parse(await kubectl(['get', 'deploy', 'roll', '-o', 'json'])) as KObject;
    const annotations = ((after.spec as { template: KObject }).template.metadata.annotations ?? {}) as Record<
      string,
      string
    >;
    assert.ok(annotations['kubectl.kubernetes.io/restartedAt'], JSON.stringify(after.spec));
    assert.equal(after.metadata.generation, 2);
  });
});
