// The registry's workload rules: ReplicaSets (defaults, validation, generation, /status), the Scale
// subresource, pods/binding and graceful pod deletion, over an in-memory store.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import { StatusError } from '../../api/status.js';
import { MemoryStore } from '../../storage/memory/memory-store.js';
import { ensureSystemNamespaces } from '../namespace-lifecycle.js';
import { WatchCache } from '../watch-cache/watch-cache.js';
import { readBinding } from './binding.js';
import { Registry, type WriteContext } from './registry.js';

const RS = mustFindResource('apps', 'replicasets');
const DEPLOY = mustFindResource('apps', 'deployments');
const PODS = mustFindResource('', 'pods');
const ctx = (): WriteContext => ({
  dryRun: false,
  fieldManager: 'test',
  fieldValidation: 'Strict',
  warnings: [],
});

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const c of cleanups) await c();
});

const clock = Date.parse('2026-01-01T00:00:00Z');
async function registry(): Promise<{ reg: Registry; store: MemoryStore }> {
  const store = new MemoryStore();
  const cache = new WatchCache(store, {});
  cache.start();
  await cache.ready;
  const reg = new Registry(store, cache, { now: () => clock });
  await ensureSystemNamespaces(reg);
  cleanups.push(() => cache.stop());
  return { reg, store };
}

const replicaSet = (spec: Record<string, unknown> = {}, name = 'web'): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    ...spec,
  },
});

const pod = (name: string, spec: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec },
});

async function rejects(p: Promise<unknown>, code: number, message: string | RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof StatusError, String(err));
    assert.equal(err.status.code, code);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

describe('ReplicaSets', () => {
  it('default replicas to 1 and the template to the pod defaults, and start at generation 1 without status', async () => {
    const { reg } = await registry();
    const rs = await reg.create(RS, 'default', { ...replicaSet(), status: { replicas: 3 } }, ctx());
    const spec = rs.spec as { replicas: number; template: { spec: Record<string, unknown> } };
    assert.equal(spec.replicas, 1);
    assert.equal(spec.template.spec['restartPolicy'], 'Always');
    assert.equal(spec.template.spec['terminationGracePeriodSeconds'], 30);
    assert.equal(rs.metadata.generation, 1);
    assert.equal(rs.status, undefined);
  });

  it('refuse an empty selector, one that misses the template labels, and negative replicas', async () => {
    const { reg } = await registry();
    await rejects(
      reg.create(RS, 'default', replicaSet({ selector: {} }), ctx()),
      422,
      /spec\.selector: Invalid value: .*: empty selector is invalid for deployment/,
    );
    await rejects(
      reg.create(RS, 'default', replicaSet({ selector: { matchLabels: { app: 'other' } } }), ctx()),
      422,
      /spec\.template\.metadata\.labels: Invalid value: .*`selector` does not match template `labels`/,
    );
    await rejects(
      reg.create(RS, 'default', replicaSet({ replicas: -1 }), ctx()),
      422,
      'ReplicaSet.apps "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    );
  });

  it('bump generation on a spec change only, keep status on updates, and keep the selector immutable', async () => {
    const { reg } = await registry();
    const rs = await reg.create(RS, 'default', replicaSet(), ctx());
    const annotated = await reg.patch(
      RS,
      'default',
      'web',
      'merge',
      { metadata: { annotations: { a: 'b' } } },
      ctx(),
      {
        subresource: '',
        force: false,
      },
    );
    assert.equal(annotated.object.metadata.generation, 1);
    const scaled = await reg.patch(RS, 'default', 'web', 'merge', { spec: { replicas: 3 } }, ctx(), {
      subresource: '',
      force: false,
    });
    assert.equal(scaled.object.metadata.generation, 2);
    await rejects(
      reg.patch(
        RS,
        'default',
        'web',
        'merge',
        { spec: { selector: { matchLabels: { app: 'web', x: 'y' } } } },
        ctx(),
        { subresource: '', force: false },
      ),
      422,
      /spec\.selector: Invalid value: .*field is immutable/,
    );
    assert.ok(rs.metadata.uid);
  });

  it('take status and labels through /status but reset spec, without moving generation', async () => {
    const { reg } = await registry();
    await reg.create(RS, 'default', replicaSet(), ctx());
    const { object } = await reg.patch(
      RS,
      'default',
      'web',
      'merge',
      { metadata: { labels: { l: 'v' } }, spec: { replicas: 9 }, status: { replicas: 1, readyReplicas: 1 } },
      ctx(),
      { subresource: 'status', force: false },
    );
    assert.deepEqual(object.status, { replicas: 1, readyReplicas: 1 });
    assert.equal((object.spec as { replicas: number }).replicas, 1);
    assert.deepEqual(object.metadata.labels, { l: 'v' });
    assert.equal(object.metadata.generation, 1);
    await rejects(
      reg.patch(RS, 'default', 'web', 'merge', { status: { replicas: 1, readyReplicas: 2 } }, ctx(), {
        subresource: 'status',
        force: false,
      }),
      422,
      /status\.readyReplicas: Invalid value: 2: cannot be greater than status\.replicas/,
    );
  });
});

describe('Deployments through /status', () => {
  it('take annotations (the revision) but not labels or spec', async () => {
    const { reg } = await registry();
    const d = replicaSet({}, 'd');
    await reg.create(DEPLOY, 'default', { ...d, kind: 'Deployment' }, ctx());
    const { object } = await reg.patch(
      DEPLOY,
      'default',
      'd',
      'merge',
      {
        metadata: { labels: { l: 'v' }, annotations: { 'deployment.kubernetes.io/revision': '1' } },
        status: { observedGeneration: 1 },
      },
      ctx(),
      { subresource: 'status', force: false },
    );
    assert.deepEqual(object.metadata.annotations, { 'deployment.kubernetes.io/revision': '1' });
    assert.equal(object.metadata.labels, undefined);
    assert.equal(object.metadata.generation, 1);
  });
});

describe('the Scale subresource', () => {
  it('shows spec.replicas, status.replicas and the selector as a string', async () => {
    const { reg } = await registry();
    await reg.create(
      RS,
      'default',
      replicaSet({
        replicas: 2,
        selector: {
          matchLabels: { app: 'web' },
          matchExpressions: [
            { key: 'tier', operator: 'In', values: ['b', 'a'] },
            { key: 'canary', operator: 'DoesNotExist' },
          ],
        },
        template: {
          metadata: { labels: { app: 'web', tier: 'a' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      }),
      ctx(),
    );
    const scale = await reg.getScale(RS, 'default', 'web');
    assert.deepEqual(scale.spec, { replicas: 2 });
    assert.deepEqual(scale.status, { replicas: 0, selector: 'app=web,!canary,tier in (a,b)' });
    assert.equal(scale.kind, 'Scale');
    assert.equal(scale.apiVersion, 'autoscaling/v1');
  });

  it('changes spec.replicas only, bumps generation, and checks resourceVersion and replicas', async () => {
    const { reg } = await registry();
    await reg.create(RS, 'default', replicaSet(), ctx());
    const before = await reg.getScale(RS, 'default', 'web');
    const after = await reg.updateScale(RS, 'default', 'web', ctx(), (s) => ({
      ...s,
      spec: { replicas: 4 },
      status: { replicas: 99 },
    }));
    assert.equal(after.spec.replicas, 4);
    assert.equal(after.status.replicas, 0);
    const rs = await reg.get(RS, 'default', 'web');
    assert.equal(rs.metadata.generation, 2);
    assert.equal(
      rs.metadata.managedFields?.some((m) => m['subresource'] === 'scale'),
      true,
    );
    await rejects(
      reg.updateScale(RS, 'default', 'web', ctx(), () => ({ ...before, spec: { replicas: 1 } })),
      409,
      /^Operation cannot be fulfilled on replicasets\.apps "web": the object has been modified/,
    );
    await rejects(
      reg.updateScale(RS, 'default', 'web', ctx(), (s) => ({
        spec: { replicas: -1 },
        metadata: { name: s.metadata.name },
      })),
      422,
      'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0',
    );
    await rejects(reg.getScale(DEPLOY, 'default', 'nope'), 404, 'deployments/scale.apps "nope" not found');
  });
});

describe('pods/binding', () => {
  const bind = (
    name: string,
    node: string,
    extra: Record<string, unknown> = {},
  ): ReturnType<typeof readBinding> =>
    readBinding({
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, ...extra },
      target: { kind: 'Node', name: node },
    });

  it('sets nodeName, the annotations and PodScheduled once, then refuses as upstream', async () => {
    const { reg } = await registry();
    await reg.create(PODS, 'default', pod('p'), ctx());
    await reg.bind('default', bind('p', 'n1', { annotations: { a: 'b' } }), ctx());
    const bound = await reg.get(PODS, 'default', 'p');
    assert.equal((bound.spec as { nodeName: string }).nodeName, 'n1');
    assert.equal(bound.metadata.annotations?.['a'], 'b');
    const cond = (bound.status as { conditions: Record<string, unknown>[] }).conditions;
    assert.deepEqual(
      cond.map((c) => [c['type'], c['status']]),
      [['PodScheduled', 'True']],
    );
    await rejects(
      reg.bind('default', bind('p', 'n2'), ctx()),
      409,
      'Operation cannot be fulfilled on pods/binding "p": pod p is already assigned to node "n1"',
    );
    await rejects(reg.bind('default', bind('gone', 'n1'), ctx()), 404, 'pods "gone" not found');
  });

  it('refuses a terminating pod and a stale uid', async () => {
    const { reg } = await registry();
    await reg.create(PODS, 'default', pod('p'), ctx());
    await rejects(
      reg.bind('default', bind('p', 'n1', { uid: 'nope' }), ctx()),
      409,
      /Precondition failed: UID/,
    );
    await reg.patch(PODS, 'default', 'p', 'merge', { metadata: { finalizers: ['x/y'] } }, ctx(), {
      subresource: '',
      force: false,
    });
    await reg.delete(PODS, 'default', 'p', {}, ctx());
    await rejects(
      reg.bind('default', bind('p', 'n1'), ctx()),
      409,
      'Operation cannot be fulfilled on pods/binding "p": pod p is being deleted, cannot be assigned to a host',
    );
  });

  it('validates the target as ValidatePodBinding does', () => {
    assert.throws(
      () => readBinding({ metadata: { name: 'p' }, target: { kind: 'Pod', name: 'x' } }),
      (err: unknown) =>
        err instanceof StatusError &&
        err.status.code === 422 &&
        err.message ===
          'Binding "p" is invalid: target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>"',
    );
    assert.throws(
      () => readBinding({ metadata: { name: 'p' }, target: {} }),
      (err: unknown) => err instanceof StatusError && /target\.name: Required value/.test(err.message),
    );
  });
});

describe('graceful pod deletion', () => {
  it('marks a bound pod, keeps it, and removes it on a DELETE with grace 0 (MODIFIED then DELETED)', async () => {
    const { reg, store } = await registry();
    await reg.create(PODS, 'default', pod('p', { nodeName: 'n1', terminationGracePeriodSeconds: 20 }), ctx());
    const first = await reg.delete(PODS, 'default', 'p', {}, ctx());
    assert.equal(first.deleted, false);
    assert.equal(first.object.metadata.deletionTimestamp, '2026-01-01T00:00:20Z');
    assert.equal(first.object.metadata.deletionGracePeriodSeconds, 20);
    const again = await reg.delete(PODS, 'default', 'p', {}, ctx());
    assert.equal(again.deleted, false);
    assert.equal(again.object.metadata.resourceVersion, first.object.metadata.resourceVersion);
    const revBefore = await store.currentRevision();
    const last = await reg.delete(PODS, 'default', 'p', { gracePeriodSeconds: 0 }, ctx());
    assert.equal(last.deleted, true);
    assert.equal(last.object.metadata.deletionGracePeriodSeconds, 0);
    // Two writes: the update to grace 0, then the removal.
    assert.equal((await store.currentRevision()) - revBefore, 2);
    await rejects(reg.get(PODS, 'default', 'p'), 404, 'pods "p" not found');
  });

  it('removes an unscheduled pod at once, and keeps a bound pod whose finalizer goes during its grace', async () => {
    const { reg } = await registry();
    await reg.create(PODS, 'default', pod('u'), ctx());
    assert.equal((await reg.delete(PODS, 'default', 'u', {}, ctx())).deleted, true);
    await reg.create(
      PODS,
      'default',
      { ...pod('f', { nodeName: 'n1' }), metadata: { name: 'f', finalizers: ['x/y'] } },
      ctx(),
    );
    await reg.delete(PODS, 'default', 'f', {}, ctx());
    await reg.patch(PODS, 'default', 'f', 'json', [{ op: 'remove', path: '/metadata/finalizers' }], ctx(), {
      subresource: '',
      force: false,
    });
    const still = await reg.get(PODS, 'default', 'f');
    assert.equal(still.metadata.deletionGracePeriodSeconds, 30);
    assert.equal((await reg.delete(PODS, 'default', 'f', { gracePeriodSeconds: 0 }, ctx())).deleted, true);
  });

  it('takes a propagationPolicy on a second DELETE of a terminating pod', async () => {
    const { reg } = await registry();
    await reg.create(PODS, 'default', pod('q', { nodeName: 'n1' }), ctx());
    await reg.delete(PODS, 'default', 'q', {}, ctx());
    const fg = await reg.delete(PODS, 'default', 'q', { propagationPolicy: 'Foreground' }, ctx());
    assert.deepEqual(fg.object.metadata.finalizers, ['foregroundDeletion']);
    assert.equal(fg.deleted, false);
    const stored: KObject = await reg.get(PODS, 'default', 'q');
    assert.deepEqual(stored.metadata.finalizers, ['foregroundDeletion']);
    assert.equal(stored.metadata.deletionGracePeriodSeconds, 30, 'the grace period is unchanged');
    const orphan = await reg.delete(PODS, 'default', 'q', { propagationPolicy: 'Orphan' }, ctx());
    assert.deepEqual(orphan.object.metadata.finalizers, ['orphan']);
  });

  it('shortens the grace period of a terminating pod but never lengthens it', async () => {
    const { reg } = await registry();
    await reg.create(PODS, 'default', pod('p', { nodeName: 'n1' }), ctx());
    await reg.delete(PODS, 'default', 'p', {}, ctx());
    const longer = await reg.delete(PODS, 'default', 'p', { gracePeriodSeconds: 60 }, ctx());
    assert.equal(longer.object.metadata.deletionGracePeriodSeconds, 30);
    const shorter = await reg.delete(PODS, 'default', 'p', { gracePeriodSeconds: 5 }, ctx());
    assert.equal(shorter.object.metadata.deletionGracePeriodSeconds, 5);
    assert.equal(shorter.object.metadata.deletionTimestamp, '2026-01-01T00:00:05Z');
    const obj: KObject = await reg.get(PODS, 'default', 'p');
    assert.equal(obj.metadata.deletionGracePeriodSeconds, 5);
  });
});
