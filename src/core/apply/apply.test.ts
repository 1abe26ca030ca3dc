import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import {
  apply,
  applyConflictError,
  conflictCauses,
  conflictMessage,
  updateManagedFields,
  type ApplyOptions,
  type ApplyResult,
  type Conflict,
} from './apply.js';
import { ApplyError } from './errors.js';
import { FieldSet } from './fieldset.js';
import { deploymentSchema, freeFormSchema, serviceSchema } from './testing/schemas.js';

const T0 = '2024-05-01T10:00:00Z';
const T1 = '2024-05-01T10:01:00Z';
const T2 = '2024-05-01T10:02:00Z';
const T3 = '2024-05-01T10:03:00Z';

const obj = (o: object): KObject => JSON.parse(JSON.stringify(o)) as KObject;

const service = (spec: object, metadata: object = {}): KObject =>
  obj({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'default', ...metadata },
    spec,
  });

/** A Deployment; without `spec` when none is given (an applied `spec: {}` is owned, as upstream). */
const deployment = (spec?: object, metadata: object = {}): KObject =>
  obj({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', ...metadata },
    ...(spec === undefined ? {} : { spec }),
  });

function applyOk(opts: Partial<ApplyOptions> & Pick<ApplyOptions, 'live' | 'applied' | 'manager'>): KObject {
  const r = applyTo(opts);
  if (!r.ok) assert.fail(`unexpected conflicts: ${conflictMessage(r.conflicts)}`);
  return r.object;
}

function applyTo(
  opts: Partial<ApplyOptions> & Pick<ApplyOptions, 'live' | 'applied' | 'manager'>,
): ApplyResult {
  const apiVersion = opts.applied.apiVersion ?? 'v1';
  const schema = apiVersion === 'apps/v1' ? deploymentSchema : serviceSchema;
  return apply({ force: false, apiVersion, now: T0, schema, ...opts });
}

function conflictsOf(r: ApplyResult): Conflict[] {
  if (r.ok) assert.fail('expected conflicts');
  return r.conflicts;
}

/** What the store adds after a write: server metadata, and the defaults kube-apiserver fills in. */
function persist(o: KObject, rv = '1'): KObject {
  const out = obj(o);
  out.metadata.uid ??= 'uid-1';
  out.metadata.creationTimestamp ??= T0;
  out.metadata.resourceVersion = rv;
  const spec = out['spec'] as { ports?: Array<Record<string, unknown>> } | undefined;
  for (const p of spec?.ports ?? []) p['protocol'] ??= 'TCP';
  return out;
}

/** `manager/Operation[/subresource]` → owned paths. */
function owners(o: KObject): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of o.metadata.managedFields ?? []) {
    const k = `${e.manager}/${e.operation}${e.subresource ? `/${e.subresource}` : ''}`;
    out[k] = decode(e.fieldsV1).toStrings();
  }
  return out;
}
const decode = (doc: unknown): FieldSet => FieldSet.fromFieldsV1(doc);

const body = (o: KObject): unknown => {
  const c = obj(o);
  delete c.metadata.managedFields;
  return c;
};

describe('apply: creating', () => {
  it('creates the object, owned by the applier, in the exact FieldsV1 shape', () => {
    const cfg = service(
      { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
      { labels: { app: 'web' } },
    );
    const out = applyOk({ live: undefined, applied: cfg, manager: 'kubectl' });
    assert.deepEqual(body(out), body(cfg));
    assert.deepEqual(out.metadata.managedFields, [
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {}, 'f:targetPort': {} } },
            'f:selector': {},
          },
        },
      },
    ]);
  });

  it('never records apiVersion, kind, name, namespace or server metadata, nor takes them from the config', () => {
    const cfg = service(
      { type: 'ClusterIP' },
      { uid: 'forged', resourceVersion: '99', creationTimestamp: null },
    );
    const out = applyOk({ live: undefined, applied: cfg, manager: 'm' });
    assert.deepEqual(out.metadata, {
      name: 'web',
      namespace: 'default',
      managedFields: out.metadata.managedFields,
    });
    assert.deepEqual(owners(out), { 'm/Apply': ['.spec.type'] });
  });

  it('ignores keys holding undefined, as JSON would', () => {
    const cfg = service({ type: 'ClusterIP' });
    (cfg['spec'] as Record<string, unknown>)['clusterIP'] = undefined;
    cfg.metadata.labels = undefined as unknown as Record<string, string>;
    const out = applyOk({ live: undefined, applied: cfg, manager: 'm' });
    assert.deepEqual(owners(out), { 'm/Apply': ['.spec.type'] });
    assert.equal(JSON.stringify(out['spec']), '{"type":"ClusterIP"}');
    const upd = updateManagedFields({
      old: undefined,
      updated: cfg,
      manager: 'u',
      now: T0,
      schema: serviceSchema,
    });
    assert.deepEqual(owners(upd), { 'u/Update': ['.spec', '.spec.type'] });
  });

  it('refuses a configuration that carries managedFields or names another version', () => {
    const withMF = service({}, { managedFields: [] });
    assert.throws(
      () => applyTo({ live: undefined, applied: withMF, manager: 'm' }),
      (e: unknown) =>
        e instanceof ApplyError &&
        e.kind === 'BadRequest' &&
        e.message === 'metadata.managedFields must be nil',
    );
    assert.throws(
      () =>
        apply({
          live: undefined,
          applied: service({}),
          manager: 'm',
          force: false,
          apiVersion: 'v2',
          now: T0,
          schema: serviceSchema,
        }),
      /Incorrect version specified in apply patch. Specified patch version: v1, expected: v2/,
    );
  });

  it('refuses list-map items without their keys, and duplicates; a key with a schema default may be left out', () => {
    assert.throws(
      () => applyTo({ live: undefined, applied: service({ ports: [{ targetPort: 80 }] }), manager: 'm' }),
      (e: unknown) =>
        e instanceof ApplyError &&
        e.kind === 'Invalid' &&
        e.message ===
          '.spec.ports: element 0: associative list with keys has an element that omits key field "port" (and doesn\'t have default value)',
    );
    assert.throws(
      () =>
        applyTo({
          live: undefined,
          applied: service({ ports: [{ port: 80 }, { port: 80, protocol: 'TCP', name: 'x' }] }),
          manager: 'm',
        }),
      { message: '.spec.ports: duplicate entries for key [port=80,protocol="TCP"]' },
    );
    assert.throws(
      () =>
        applyTo({ live: undefined, applied: service({ externalIPs: ['1.1.1.1', '1.1.1.1'] }), manager: 'm' }),
      { message: '.spec.externalIPs: duplicate entries for key [="1.1.1.1"]' },
    );
    applyOk({
      live: undefined,
      applied: service({ ports: [{ port: 80 }, { port: 80, protocol: 'UDP' }] }),
      manager: 'm',
    });
  });
});

describe('apply: re-applying and sharing', () => {
  const cfgA = deployment({
    replicas: 3,
    template: { spec: { containers: [{ name: 'app', image: 'nginx:1' }] } },
  });

  it('re-applying the same configuration changes nothing, not even the entry time', () => {
    const live = persist(applyOk({ live: undefined, applied: cfgA, manager: 'a' }));
    const again = applyOk({ live, applied: cfgA, manager: 'a', now: T1 });
    assert.deepEqual(again, live);
  });

  it('two managers own different fields side by side', () => {
    const live = persist(applyOk({ live: undefined, applied: cfgA, manager: 'a' }));
    const cfgB = deployment(undefined, { labels: { team: 'x' } });
    const out = applyOk({ live, applied: cfgB, manager: 'b', now: T1 });
    assert.deepEqual(owners(out), {
      'a/Apply': [
        '.spec.replicas',
        '.spec.template.spec.containers[name="app"]',
        '.spec.template.spec.containers[name="app"].image',
        '.spec.template.spec.containers[name="app"].name',
      ],
      'b/Apply': ['.metadata.labels.team'],
    });
    assert.deepEqual(out.metadata.labels, { team: 'x' });
    // a re-applies its own configuration: b's label stays.
    const again = applyOk({ live: persist(out, '2'), applied: cfgA, manager: 'a', now: T2 });
    assert.deepEqual(again.metadata.labels, { team: 'x' });
    assert.equal((again.metadata.managedFields ?? []).length, 2);
  });

  it('setting a field another manager owns to a different value is a conflict', () => {
    const live = persist(applyOk({ live: undefined, applied: cfgA, manager: 'a' }));
    const r = applyTo({ live, applied: deployment({ replicas: 5 }), manager: 'b', now: T1 });
    const conflicts = conflictsOf(r);
    assert.deepEqual(
      conflicts.map(({ manager, operation, field, message }) => ({ manager, operation, field, message })),
      [{ manager: 'a', operation: 'Apply', field: '.spec.replicas', message: 'conflict with "a"' }],
    );
    assert.equal(
      conflictMessage(conflicts),
      'Apply failed with 1 conflict: conflict with "a": .spec.replicas',
    );
    assert.deepEqual(conflictCauses(conflicts), [
      { reason: 'FieldManagerConflict', message: 'conflict with "a"', field: '.spec.replicas' },
    ]);
    const err = applyConflictError(conflicts);
    assert.equal(err.code, 409);
    assert.equal(err.status.reason, 'Conflict');
    assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "a": .spec.replicas');
    assert.deepEqual(err.status.details?.causes, conflictCauses(conflicts));
  });

  it('force takes the field: the value changes and the other manager no longer owns it', () => {
    const live = persist(applyOk({ live: undefined, applied: cfgA, manager: 'a' }));
    const out = applyOk({ live, applied: deployment({ replicas: 5 }), manager: 'b', force: true, now: T1 });
    assert.equal((out['spec'] as { replicas: number }).replicas, 5);
    assert.deepEqual(owners(out)['a/Apply'], [
      '.spec.template.spec.containers[name="app"]',
      '.spec.template.spec.containers[name="app"].image',
      '.spec.template.spec.containers[name="app"].name',
    ]);
    assert.deepEqual(owners(out)['b/Apply'], ['.spec.replicas']);
    // a now conflicts with b, and no longer removes replicas when it stops setting it.
    const r = applyTo({ live: persist(out, '2'), applied: cfgA, manager: 'a', now: T2 });
    assert.equal(
      conflictMessage(conflictsOf(r)),
      'Apply failed with 1 conflict: conflict with "b": .spec.replicas',
    );
    const dropped = deployment({ template: { spec: { containers: [{ name: 'app', image: 'nginx:1' }] } } });
    const kept = applyOk({ live: persist(out, '2'), applied: dropped, manager: 'a', now: T2 });
    assert.equal((kept['spec'] as { replicas: number }).replicas, 5);
  });

  it('an entry left with nothing is removed', () => {
    const live = persist(applyOk({ live: undefined, applied: deployment({ replicas: 1 }), manager: 'a' }));
    const out = applyOk({ live, applied: deployment({ replicas: 2 }), manager: 'b', force: true, now: T1 });
    assert.deepEqual(Object.keys(owners(out)), ['b/Apply']);
  });

  it('the same value is shared, without conflict; the field goes only when its last owner drops it', () => {
    const live = persist(applyOk({ live: undefined, applied: cfgA, manager: 'a' }));
    const shared = applyOk({ live, applied: deployment({ replicas: 3 }), manager: 'b', now: T1 });
    assert.deepEqual(owners(shared)['b/Apply'], ['.spec.replicas']);
    assert.ok(owners(shared)['a/Apply']?.includes('.spec.replicas'));

    const aDrops = deployment({ template: { spec: { containers: [{ name: 'app', image: 'nginx:1' }] } } });
    const afterA = applyOk({ live: persist(shared, '2'), applied: aDrops, manager: 'a', now: T2 });
    assert.equal((afterA['spec'] as { replicas?: number }).replicas, 3, 'b still owns it');
    assert.ok(!owners(afterA)['a/Apply']?.includes('.spec.replicas'));

    const afterB = applyOk({ live: persist(afterA, '3'), applied: deployment(), manager: 'b', now: T3 });
    assert.equal((afterB['spec'] as { replicas?: number }).replicas, undefined, 'nobody owns it now');
    assert.deepEqual(Object.keys(owners(afterB)), ['a/Apply']);
  });

  it('reports every conflict, grouped by manager in kube-apiserver format', () => {
    let live = persist(
      applyOk({ live: undefined, applied: deployment({ replicas: 1, paused: false }), manager: 'a' }),
    );
    live = persist(
      updateManagedFields({
        old: live,
        updated: obj({ ...live, spec: { ...(live['spec'] as object), strategy: { type: 'Recreate' } } }),
        manager: 'kube-controller-manager',
        now: T1,
        schema: deploymentSchema,
      }),
      '2',
    );
    const r = applyTo({
      live,
      applied: deployment({ replicas: 2, paused: true, strategy: { type: 'RollingUpdate' } }),
      manager: 'c',
      now: T2,
    });
    const conflicts = conflictsOf(r);
    assert.deepEqual(
      conflicts.map((c) => [c.manager, c.field]),
      [
        ['a', '.spec.paused'],
        ['a', '.spec.replicas'],
        ['kube-controller-manager', '.spec.strategy.type'],
      ],
    );
    assert.equal(
      conflictMessage(conflicts),
      'Apply failed with 3 conflicts: conflicts with "a":\n- .spec.paused\n- .spec.replicas\n' +
        'conflicts with "kube-controller-manager" using apps/v1:\n- .spec.strategy.type',
    );
    assert.deepEqual(conflictCauses(conflicts)[2], {
      reason: 'FieldManagerConflict',
      message: 'conflict with "kube-controller-manager" using apps/v1',
      field: '.spec.strategy.type',
    });
  });
});

describe('apply: removing what the applier no longer sets', () => {
  it('removes a dropped label, list item and field; keeps what others set', () => {
    const cfg1 = service(
      {
        selector: { app: 'web' },
        ports: [
          { port: 80, targetPort: 8080 },
          { port: 443, targetPort: 8443 },
        ],
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } },
      },
      { labels: { app: 'web', tier: 'fe' } },
    );
    let live = persist(applyOk({ live: undefined, applied: cfg1, manager: 'kubectl' }));
    // Someone else adds an annotation and a label; the server allocated a clusterIP.
    live = persist(
      updateManagedFields({
        old: live,
        updated: obj({
          ...live,
          metadata: {
            ...live.metadata,
            labels: { ...live.metadata.labels, extra: 'y' },
            annotations: { note: 'n' },
          },
          spec: { ...(live['spec'] as object), clusterIP: '10.0.0.1' },
        }),
        manager: 'other',
        now: T1,
        schema: serviceSchema,
      }),
      '2',
    );
    const cfg2 = service(
      { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
      { labels: { app: 'web' } },
    );
    const out = applyOk({ live, applied: cfg2, manager: 'kubectl', now: T2 });
    assert.deepEqual(out.metadata.labels, { app: 'web', extra: 'y' });
    assert.deepEqual(out.metadata.annotations, { note: 'n' });
    assert.deepEqual(out['spec'], {
      selector: { app: 'web' },
      ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }],
      clusterIP: '10.0.0.1',
    });
    assert.equal(out.metadata.uid, 'uid-1');
    assert.equal(out.metadata.resourceVersion, '2');
  });

  it('drops a struct that held only the removed fields, and an emptied map', () => {
    const cfg1 = service(
      { type: 'ClusterIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } },
      { labels: { a: '1' } },
    );
    const live = persist(applyOk({ live: undefined, applied: cfg1, manager: 'm' }));
    const out = applyOk({ live, applied: service({ type: 'ClusterIP' }), manager: 'm', now: T1 });
    assert.deepEqual(body(out), body(persist(service({ type: 'ClusterIP' }))));
  });

  it('removes a set-list value it added, keeping the values others added', () => {
    let live = persist(
      applyOk({ live: undefined, applied: service({ externalIPs: ['1.1.1.1', '2.2.2.2'] }), manager: 'a' }),
    );
    live = persist(
      applyOk({ live, applied: service({ externalIPs: ['3.3.3.3'] }), manager: 'b', now: T1 }),
      '2',
    );
    assert.deepEqual((live['spec'] as { externalIPs: string[] }).externalIPs, [
      '1.1.1.1',
      '2.2.2.2',
      '3.3.3.3',
    ]);
    const out = applyOk({ live, applied: service({ externalIPs: ['2.2.2.2'] }), manager: 'a', now: T2 });
    assert.deepEqual((out['spec'] as { externalIPs: string[] }).externalIPs, ['2.2.2.2', '3.3.3.3']);
  });

  it('a list item another manager also owns stays; its fields only the applier set go', () => {
    let live = persist(
      applyOk({
        live: undefined,
        applied: service({ ports: [{ port: 80, name: 'http', targetPort: 80 }] }),
        manager: 'a',
      }),
    );
    live = persist(
      applyOk({ live, applied: service({ ports: [{ port: 80, name: 'http' }] }), manager: 'b', now: T1 }),
      '2',
    );
    const out = applyOk({ live, applied: service({}), manager: 'a', now: T2 });
    assert.deepEqual((out['spec'] as { ports: unknown }).ports, [
      { port: 80, name: 'http', protocol: 'TCP' },
    ]);
  });

  it('a null in the configuration removes the field, owned by the applier', () => {
    const live = persist(
      applyOk({ live: undefined, applied: deployment({ replicas: 3, paused: true }), manager: 'a' }),
    );
    const out = applyOk({ live, applied: deployment({ replicas: 3, paused: null }), manager: 'a', now: T1 });
    assert.deepEqual(out['spec'], { replicas: 3 });
    assert.deepEqual(owners(out)['a/Apply'], ['.spec.paused', '.spec.replicas']);
  });
});

describe('apply: merging', () => {
  it('merges list-map items by key, keeping unnamed live items in place and config order for the rest', () => {
    const live = persist(
      applyOk({
        live: undefined,
        applied: service({
          ports: [
            { port: 1, name: 'a' },
            { port: 2, name: 'b' },
            { port: 3, name: 'c' },
          ],
        }),
        manager: 'x',
      }),
    );
    const out = applyOk({
      live,
      applied: service({
        ports: [
          { port: 3, targetPort: 33 },
          { port: 4, name: 'd' },
          { port: 1, targetPort: 11 },
        ],
      }),
      manager: 'y',
      now: T1,
    });
    assert.deepEqual((out['spec'] as { ports: unknown[] }).ports, [
      { port: 2, name: 'b', protocol: 'TCP' },
      { port: 3, name: 'c', protocol: 'TCP', targetPort: 33 },
      { port: 4, name: 'd' },
      { port: 1, name: 'a', protocol: 'TCP', targetPort: 11 },
    ]);
  });

  it('replaces atomic lists and maps whole, merges granular maps key by key', () => {
    let live = persist(
      applyOk({
        live: undefined,
        applied: service(
          { selector: { a: '1', b: '2' }, clusterIPs: ['10.0.0.1', '10.0.0.2'] },
          { labels: { a: '1' } },
        ),
        manager: 'x',
      }),
    );
    live = persist(
      applyOk({
        live,
        applied: service(
          { selector: { a: '1', b: '2' }, clusterIPs: ['10.0.0.1', '10.0.0.2'] },
          { labels: { b: '2' } },
        ),
        manager: 'y',
        now: T1,
      }),
      '2',
    );
    assert.deepEqual(live.metadata.labels, { a: '1', b: '2' });
    const r = applyTo({ live, applied: service({ selector: { c: '3' } }), manager: 'z', now: T2 });
    assert.deepEqual(
      conflictsOf(r).map((c) => `${c.manager} ${c.field}`),
      ['x .spec.selector', 'y .spec.selector'],
    );
    const forced = applyOk({
      live,
      applied: service({ selector: { c: '3' } }),
      manager: 'z',
      now: T2,
      force: true,
    });
    assert.deepEqual((forced['spec'] as { selector: unknown }).selector, { c: '3' });
  });

  it('merges nested list maps (containers by name, env by name)', () => {
    const base = deployment({
      template: {
        spec: {
          containers: [
            { name: 'app', image: 'a:1', env: [{ name: 'A', value: '1' }], args: ['x'] },
            { name: 'side', image: 's:1' },
          ],
        },
      },
    });
    const live = persist(applyOk({ live: undefined, applied: base, manager: 'a' }));
    const patch = deployment({
      template: {
        spec: { containers: [{ name: 'app', env: [{ name: 'B', value: '2' }], args: ['y', 'z'] }] },
      },
    });
    const r = applyTo({ live, applied: patch, manager: 'b', now: T1 });
    assert.deepEqual(
      conflictsOf(r).map((c) => c.field),
      ['.spec.template.spec.containers[name="app"].args'],
    );
    const out = applyOk({ live, applied: patch, manager: 'b', now: T1, force: true });
    assert.deepEqual((out['spec'] as { template: unknown }).template, {
      spec: {
        containers: [
          {
            name: 'app',
            image: 'a:1',
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
            args: ['y', 'z'],
          },
          { name: 'side', image: 's:1' },
        ],
      },
    });
  });

  it('an empty struct value is owned, and replacing it removes it', () => {
    const v1 = deployment({ template: { spec: { volumes: [{ name: 'v', emptyDir: {} }] } } });
    const live = persist(applyOk({ live: undefined, applied: v1, manager: 'a' }));
    assert.deepEqual(owners(live)['a/Apply'], [
      '.spec.template.spec.volumes[name="v"]',
      '.spec.template.spec.volumes[name="v"].emptyDir',
      '.spec.template.spec.volumes[name="v"].name',
    ]);
    const v2 = deployment({ template: { spec: { volumes: [{ name: 'v', hostPath: { path: '/x' } }] } } });
    const out = applyOk({ live, applied: v2, manager: 'a', now: T1 });
    assert.deepEqual((out['spec'] as { template: unknown }).template, {
      spec: { volumes: [{ name: 'v', hostPath: { path: '/x' } }] },
    });
  });

  it('treats preserve-unknown-fields content as granular maps with atomic lists', () => {
    const cr = (spec: object): KObject =>
      obj({ apiVersion: 'x.io/v1', kind: 'Thing', metadata: { name: 't' }, spec });
    const opts = { force: false, apiVersion: 'x.io/v1', schema: freeFormSchema, now: T0, ignore: [] };
    const r1 = apply({ ...opts, live: undefined, applied: cr({ a: { b: 1 }, l: [1, 2] }), manager: 'a' });
    assert.ok(r1.ok);
    assert.deepEqual(owners(r1.object)['a/Apply'], ['.spec.a', '.spec.a.b', '.spec.l']);
    const r2 = apply({ ...opts, live: r1.object, applied: cr({ a: { c: 2 } }), manager: 'b', now: T1 });
    assert.ok(r2.ok);
    assert.deepEqual(r2.object['spec'], { a: { b: 1, c: 2 }, l: [1, 2] });
    const r3 = apply({ ...opts, live: r2.object, applied: cr({ l: [3] }), manager: 'b', now: T1 });
    assert.equal(
      conflictMessage(conflictsOf(r3)),
      'Apply failed with 1 conflict: conflict with "a": .spec.l',
    );
  });
});

describe('apply after other writes (kubectl e2e)', () => {
  const cfg = deployment({
    replicas: 1,
    template: { spec: { containers: [{ name: 'app', image: 'nginx:1' }] } },
  });

  it('kubectl apply --server-side conflicts with a field kubectl edit changed, until --force-conflicts', () => {
    const created = persist(applyOk({ live: undefined, applied: cfg, manager: 'kubectl' }));
    const edited = obj(created);
    (edited['spec'] as { replicas: number }).replicas = 4;
    const afterEdit = persist(
      updateManagedFields({
        old: created,
        updated: edited,
        manager: 'kubectl-edit',
        now: T1,
        schema: deploymentSchema,
      }),
      '2',
    );
    assert.deepEqual(owners(afterEdit), {
      'kubectl/Apply': [
        '.spec.template.spec.containers[name="app"]',
        '.spec.template.spec.containers[name="app"].image',
        '.spec.template.spec.containers[name="app"].name',
      ],
      'kubectl-edit/Update': ['.spec.replicas'],
    });

    const r = applyTo({ live: afterEdit, applied: cfg, manager: 'kubectl', now: T2 });
    const err = applyConflictError(conflictsOf(r));
    assert.equal(
      err.message,
      'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas',
    );

    const forced = applyOk({ live: afterEdit, applied: cfg, manager: 'kubectl', force: true, now: T2 });
    assert.equal((forced['spec'] as { replicas: number }).replicas, 1);
    assert.deepEqual(Object.keys(owners(forced)), ['kubectl/Apply'], 'kubectl-edit owned nothing else');
    assert.equal(forced.metadata.managedFields?.[0]?.time, T2);
  });

  it('an apply to an object nobody owns yet conflicts with "before-first-apply"', () => {
    const legacy = persist(deployment({ replicas: 2, paused: false }));
    const r = applyTo({ live: legacy, applied: deployment({ replicas: 3 }), manager: 'kubectl' });
    assert.equal(
      conflictMessage(conflictsOf(r)),
      'Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: .spec.replicas',
    );
    const same = applyOk({ live: legacy, applied: deployment({ replicas: 2 }), manager: 'kubectl' });
    assert.deepEqual(owners(same), {
      'kubectl/Apply': ['.spec.replicas'],
      'before-first-apply/Update': ['.spec', '.spec.paused', '.spec.replicas'],
    });
  });

  it('a client-side apply (Update) entry is another manager than the Apply entry of the same name', () => {
    const created = persist(
      updateManagedFields({
        old: undefined,
        updated: cfg,
        manager: 'kubectl',
        now: T0,
        schema: deploymentSchema,
      }),
    );
    const r = applyTo({ live: created, applied: deployment({ replicas: 9 }), manager: 'kubectl', now: T1 });
    assert.equal(
      conflictMessage(conflictsOf(r)),
      'Apply failed with 1 conflict: conflict with "kubectl" using apps/v1: .spec.replicas',
    );
  });
});

describe('apply: status and other subresources', () => {
  it('ignores status on the main resource: neither merged nor owned', () => {
    const first = applyOk({ live: undefined, applied: service({ type: 'ClusterIP' }), manager: 'm' });
    const live = persist(obj({ ...first, status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } } }));
    const withStatus = obj({ ...service({ type: 'NodePort' }), status: { loadBalancer: {} } });
    const out = applyOk({ live, applied: withStatus, manager: 'm' });
    assert.deepEqual(out['status'], { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } });
    assert.deepEqual(owners(out)['m/Apply'], ['.spec.type']);
    const created = applyOk({ live: undefined, applied: withStatus, manager: 'm' });
    assert.equal(created['status'], undefined);
  });

  it('applies through the status subresource: its own entry, spec ignored', () => {
    const live = persist(
      applyOk({ live: undefined, applied: service({ type: 'LoadBalancer' }), manager: 'kubectl' }),
    );
    const st = obj({
      ...service({ type: 'ClusterIP' }),
      status: { loadBalancer: { ingress: [{ ip: '5.6.7.8' }] } },
    });
    const out = applyOk({ live, applied: st, manager: 'lb-controller', subresource: 'status', now: T1 });
    assert.deepEqual(out['spec'], { type: 'LoadBalancer' });
    assert.deepEqual(out['status'], { loadBalancer: { ingress: [{ ip: '5.6.7.8' }] } });
    const lbEntry = out.metadata.managedFields?.find((e) => e.manager === 'lb-controller');
    assert.deepEqual(lbEntry, {
      manager: 'lb-controller',
      operation: 'Apply',
      apiVersion: 'v1',
      time: T1,
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:status': { 'f:loadBalancer': { 'f:ingress': {} } } },
      subresource: 'status',
    });
    // Another status writer conflicts, and is told the subresource.
    const r = applyTo({
      live: persist(out, '2'),
      applied: obj({ ...service({}), status: { loadBalancer: { ingress: [] } } }),
      manager: 'other',
      subresource: 'status',
      now: T2,
    });
    assert.equal(
      conflictMessage(conflictsOf(r)),
      'Apply failed with 1 conflict: conflict with "lb-controller" with subresource "status": .status.loadBalancer.ingress',
    );
  });
});

describe('updateManagedFields', () => {
  it('a create owns everything it sets, containers included (the way custom resources are tracked)', () => {
    const created = updateManagedFields({
      old: undefined,
      updated: deployment({ replicas: 1 }, { labels: { app: 'web' } }),
      manager: 'kubectl-create',
      now: T0,
      schema: deploymentSchema,
    });
    assert.deepEqual(created.metadata.managedFields, [
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'apps/v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          'f:spec': { '.': {}, 'f:replicas': {} },
        },
      },
    ]);
  });

  it('takes changed fields from their owners and drops removed fields from every owner', () => {
    const cfg = service(
      { type: 'NodePort', ports: [{ port: 80, nodePort: 30080 }] },
      { labels: { a: '1', b: '2' } },
    );
    const live = persist(applyOk({ live: undefined, applied: cfg, manager: 'kubectl' }));
    const next = obj(live);
    next.metadata.labels = { a: 'changed' };
    const out = updateManagedFields({
      old: live,
      updated: next,
      manager: 'Go-http-client',
      now: T1,
      schema: serviceSchema,
    });
    assert.deepEqual(owners(out), {
      'kubectl/Apply': [
        '.spec.ports[port=80,protocol="TCP"]',
        '.spec.ports[port=80,protocol="TCP"].nodePort',
        '.spec.ports[port=80,protocol="TCP"].port',
        '.spec.type',
      ],
      'Go-http-client/Update': ['.metadata.labels.a'],
    });
    assert.equal(out.metadata.managedFields?.[1]?.time, T1);
    assert.deepEqual(body(out), body(next));
  });

  it('a write that changes nothing leaves the entries (and their times) alone', () => {
    const live = persist(
      updateManagedFields({
        old: undefined,
        updated: deployment({ replicas: 1 }),
        manager: 'a',
        now: T0,
        schema: deploymentSchema,
      }),
    );
    const same = updateManagedFields({
      old: live,
      updated: obj(live),
      manager: 'b',
      now: T1,
      schema: deploymentSchema,
    });
    assert.deepEqual(same.metadata.managedFields, live.metadata.managedFields);
    const more = obj(live);
    (more['spec'] as { paused?: boolean }).paused = true;
    const again = updateManagedFields({
      old: live,
      updated: more,
      manager: 'a',
      now: T2,
      schema: deploymentSchema,
    });
    assert.deepEqual(owners(again), { 'a/Update': ['.spec', '.spec.paused', '.spec.replicas'] });
    assert.equal(again.metadata.managedFields?.[0]?.time, T2);
  });

  it('accepts managedFields the request sets, resets on [] or [{}], keeps the stored ones when absent or invalid', () => {
    const live = persist(
      updateManagedFields({
        old: undefined,
        updated: deployment({ replicas: 1 }),
        manager: 'a',
        now: T0,
        schema: deploymentSchema,
      }),
    );
    const custom = [
      {
        manager: 'someone',
        operation: 'Apply' as const,
        apiVersion: 'apps/v1',
        time: T0,
        fieldsType: 'FieldsV1' as const,
        fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      },
    ];
    const rewritten = updateManagedFields({
      old: live,
      updated: obj({ ...live, metadata: { ...live.metadata, managedFields: custom } }),
      manager: 'editor',
      now: T1,
      schema: deploymentSchema,
    });
    assert.deepEqual(rewritten.metadata.managedFields, custom);

    for (const reset of [[], [{}]]) {
      const out = updateManagedFields({
        old: live,
        updated: obj({ ...live, metadata: { ...live.metadata, managedFields: reset } }),
        manager: 'editor',
        now: T1,
        schema: deploymentSchema,
      });
      assert.equal(out.metadata.managedFields, undefined, JSON.stringify(reset));
    }
    const resetAndChange = updateManagedFields({
      old: live,
      updated: obj({ ...live, metadata: { ...live.metadata, managedFields: [] }, spec: { replicas: 2 } }),
      manager: 'editor',
      now: T1,
      schema: deploymentSchema,
    });
    assert.deepEqual(owners(resetAndChange), { 'editor/Update': ['.spec.replicas'] });

    const bad = [
      { manager: 'x', operation: 'Patch', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: {} },
    ];
    for (const mf of [undefined, null, bad]) {
      const u = obj(live);
      if (mf === undefined) delete u.metadata.managedFields;
      else (u.metadata as Record<string, unknown>)['managedFields'] = mf;
      const out = updateManagedFields({
        old: live,
        updated: u,
        manager: 'editor',
        now: T1,
        schema: deploymentSchema,
      });
      assert.deepEqual(out.metadata.managedFields, live.metadata.managedFields, JSON.stringify(mf));
    }
  });

  it('through a subresource: its own entry, request managedFields ignored, spec ignored', () => {
    const live = persist(
      updateManagedFields({
        old: undefined,
        updated: deployment({ replicas: 1 }),
        manager: 'a',
        now: T0,
        schema: deploymentSchema,
      }),
    );
    const next = obj({
      ...live,
      metadata: { ...live.metadata, managedFields: [] },
      spec: { replicas: 7 },
      status: { replicas: 1 },
    });
    const out = updateManagedFields({
      old: live,
      updated: next,
      manager: 'kube-controller-manager',
      now: T1,
      schema: deploymentSchema,
      subresource: 'status',
    });
    assert.deepEqual(owners(out), {
      'a/Update': ['.spec', '.spec.replicas'],
      'kube-controller-manager/Update/status': ['.status', '.status.replicas'],
    });
  });

  it('ignores status on the main resource', () => {
    const live = persist(
      updateManagedFields({
        old: undefined,
        updated: deployment({ replicas: 1 }),
        manager: 'a',
        now: T0,
        schema: deploymentSchema,
      }),
    );
    const out = updateManagedFields({
      old: live,
      updated: obj({ ...live, status: { replicas: 3 } }),
      manager: 'b',
      now: T1,
      schema: deploymentSchema,
    });
    assert.deepEqual(Object.keys(owners(out)), ['a/Update']);
  });

  it('keeps at most ten Update entries, folding the oldest into "ancient-changes"', () => {
    let live = persist(
      updateManagedFields({
        old: undefined,
        updated: service({}, { labels: {} }),
        manager: 'm0',
        now: T0,
        schema: serviceSchema,
      }),
    );
    for (let i = 1; i <= 12; i++) {
      const next = obj(live);
      next.metadata.labels = { ...next.metadata.labels, [`l${i}`]: 'x' };
      const now = `2024-05-01T11:${String(i).padStart(2, '0')}:00Z`;
      live = persist(
        updateManagedFields({ old: live, updated: next, manager: `m${i}`, now, schema: serviceSchema }),
        String(i + 1),
      );
    }
    const entries = live.metadata.managedFields ?? [];
    assert.equal(entries.length, 10);
    const ancient = entries.find((e) => e.manager === 'ancient-changes');
    assert.ok(ancient);
    // The oldest entry of the version (m0) became the bucket; m1–m3 were folded into it.
    assert.deepEqual(decode(ancient.fieldsV1).toStrings(), [
      '.metadata.labels',
      '.metadata.labels.l1',
      '.metadata.labels.l2',
      '.metadata.labels.l3',
      '.spec',
    ]);
    assert.equal(ancient.time, '2024-05-01T11:03:00Z');
    assert.deepEqual(
      entries.map((e) => e.manager),
      ['ancient-changes', 'm4', 'm5', 'm6', 'm7', 'm8', 'm9', 'm10', 'm11', 'm12'],
    );
  });
});
