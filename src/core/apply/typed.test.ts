import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Schema } from '../../api/schema/schema.js';
import type { Json } from '../patch/merge-patch.js';
import { fieldsOf } from './apply.js';
import { field, FieldSet, key } from './fieldset.js';
import {
  collectFields,
  compare,
  dropAppliedNulls,
  mergeObjects,
  removePaths,
  shapeOf,
  withNamedFieldsAsMembers,
  type JsonObject,
} from './typed.js';
import { deploymentSchema, serviceSchema } from './testing/schemas.js';

const o = (v: object): JsonObject => JSON.parse(JSON.stringify(v)) as JsonObject;

describe('shapes', () => {
  it('reads list types, falling back to the strategic-merge-patch hints', () => {
    assert.deepEqual(shapeOf({ type: 'array', items: {} }, []), {
      t: 'list',
      rel: 'atomic',
      keys: [],
      item: {},
    });
    const smp: Schema = {
      type: 'array',
      items: {},
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'name',
    };
    assert.deepEqual(shapeOf(smp, []), { t: 'list', rel: 'map', keys: ['name'], item: {} });
    const smpSet: Schema = { type: 'array', items: {}, 'x-kubernetes-patch-strategy': 'merge' };
    assert.equal((shapeOf(smpSet, []) as { rel: string }).rel, 'set');
    const declared: Schema = { ...smp, 'x-kubernetes-list-type': 'atomic' };
    assert.equal((shapeOf(declared, []) as { rel: string }).rel, 'atomic');
  });

  it('deduces free-form content from the value', () => {
    const free: Schema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    assert.equal(shapeOf(free, { a: 1 }).t, 'map');
    assert.deepEqual(shapeOf(free, [1]), { t: 'list', rel: 'atomic', keys: [], item: undefined });
    assert.equal(shapeOf(undefined, 'x').t, 'scalar');
    assert.equal(shapeOf({ 'x-kubernetes-int-or-string': true }, 'x').t, 'scalar');
  });
});

describe('fieldsOf', () => {
  it('gives the example Service its FieldsV1', () => {
    const svc = o({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'ns', uid: 'u', resourceVersion: '3', labels: { app: 'web' } },
      spec: { ports: [{ port: 80, protocol: 'TCP', targetPort: 8080 }] },
      status: { loadBalancer: {} },
    });
    const s = fieldsOf(svc, serviceSchema, { ignore: ['status'] });
    assert.equal(
      JSON.stringify(s.toFieldsV1()),
      JSON.stringify({
        'f:metadata': { 'f:labels': { 'f:app': {} } },
        'f:spec': {
          'f:ports': {
            'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:port': {}, 'f:protocol': {}, 'f:targetPort': {} },
          },
        },
      }),
    );
    // Without the ignore, the empty status struct below is owned too.
    assert.ok(fieldsOf(svc, serviceSchema).has([field('status'), field('loadBalancer')]));
    assert.ok(
      fieldsOf(svc, serviceSchema, { stripSystemFields: false }).has([field('metadata'), field('uid')]),
    );
  });

  it('owns atomic values whole, map keys and set values one by one', () => {
    const s = fieldsOf(
      o({
        spec: { selector: { a: '1' }, clusterIPs: ['x'], externalIPs: ['1.1.1.1'] },
        metadata: { finalizers: ['f'] },
      }),
      serviceSchema,
    );
    assert.deepEqual(s.toStrings(), [
      '.metadata.finalizers[="f"]',
      '.spec.clusterIPs',
      '.spec.externalIPs[="1.1.1.1"]',
      '.spec.selector',
    ]);
  });

  it('owns null and empty struct fields, not empty lists', () => {
    const s = fieldsOf(
      o({ spec: { strategy: {}, paused: null, template: { spec: { volumes: [] } } } }),
      deploymentSchema,
    );
    assert.deepEqual(s.toStrings(), ['.spec.paused', '.spec.strategy']);
  });

  it('is lenient with live objects: items without keys are skipped, duplicates counted once', () => {
    const s = collectFields(
      o({ spec: { ports: [{ name: 'x' }, { port: 1 }, { port: 1 }] } }),
      serviceSchema,
      false,
    );
    assert.deepEqual(s.toStrings(), [
      '.spec.ports[port=1,protocol="TCP"]',
      '.spec.ports[port=1,protocol="TCP"].port',
    ]);
  });
});

describe('compare', () => {
  it('reports added containers, modified leaves and removed items', () => {
    const before = o({
      spec: { replicas: 1, template: { spec: { containers: [{ name: 'a', image: 'x' }] } } },
    });
    const after = o({
      spec: {
        replicas: 2,
        strategy: { type: 'Recreate' },
        template: { spec: { containers: [{ name: 'b', image: 'x' }] } },
      },
    });
    const c = compare(before, after, deploymentSchema);
    assert.deepEqual(c.modified.toStrings(), ['.spec.replicas']);
    assert.deepEqual(c.added.toStrings(), [
      '.spec.strategy',
      '.spec.strategy.type',
      '.spec.template.spec.containers[name="b"]',
      '.spec.template.spec.containers[name="b"].image',
      '.spec.template.spec.containers[name="b"].name',
    ]);
    assert.deepEqual(c.removed.toStrings(), [
      '.spec.template.spec.containers[name="a"]',
      '.spec.template.spec.containers[name="a"].image',
      '.spec.template.spec.containers[name="a"].name',
    ]);
  });

  it('treats {} versus absent as a change, and {} versus {} as none', () => {
    assert.deepEqual(compare(o({}), o({ spec: {} }), deploymentSchema).added.toStrings(), ['.spec']);
    const c = compare(o({ spec: {} }), o({ spec: {} }), deploymentSchema);
    assert.ok(c.added.isEmpty() && c.modified.isEmpty() && c.removed.isEmpty());
  });

  it('finds nothing between equal objects (fast-check)', () => {
    const json = fc.jsonValue() as fc.Arbitrary<Json>;
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('spec', 'metadata', 'x'), json), (d) => {
        const c = compare(o(d), o(d), deploymentSchema);
        assert.ok(c.added.isEmpty() && c.modified.isEmpty() && c.removed.isEmpty());
      }),
    );
  });
});

describe('merge', () => {
  it('keeps live items the config does not name where they were', () => {
    const live = o({ spec: { ports: [{ port: 1 }, { port: 2 }, { port: 3 }] } });
    const cfg = o({ spec: { ports: [{ port: 3 }, { port: 1 }] } });
    assert.deepEqual(
      mergeObjects(live, cfg, serviceSchema),
      o({ spec: { ports: [{ port: 2 }, { port: 3 }, { port: 1 }] } }),
    );
    const cfg2 = o({ spec: { ports: [{ port: 2 }, { port: 9 }, { port: 1 }] } });
    assert.deepEqual(
      mergeObjects(live, cfg2, serviceSchema),
      // 1 waits for its turn in the config's order; 3, not named, stays after 2 where it was.
      o({ spec: { ports: [{ port: 2 }, { port: 3 }, { port: 9 }, { port: 1 }] } }),
    );
  });

  it('an empty list or map in the config does not clear a granular one', () => {
    const live = o({ metadata: { labels: { a: '1' } }, spec: { ports: [{ port: 1 }] } });
    const cfg = o({ metadata: { labels: {} }, spec: { ports: [] } });
    assert.deepEqual(mergeObjects(live, cfg, serviceSchema), live);
  });

  it('is idempotent and keeps every config value (fast-check)', () => {
    const label = fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('1', '2'));
    const ports = fc.uniqueArray(
      fc.record({ port: fc.integer({ min: 1, max: 4 }), name: fc.constantFrom('x', 'y') }),
      { selector: (p) => p.port, maxLength: 4 },
    );
    const objArb = fc.record({ metadata: fc.record({ labels: label }), spec: fc.record({ ports }) });
    fc.assert(
      fc.property(objArb, objArb, (l, r) => {
        const live = o(l);
        const cfg = o(r);
        const once = mergeObjects(live, cfg, serviceSchema);
        assert.deepEqual(mergeObjects(once, cfg, serviceSchema), once);
        const labels = (once['metadata'] as { labels: Record<string, string> }).labels;
        for (const [k, v] of Object.entries(r.metadata.labels)) assert.equal(labels[k], v);
        const merged = (once['spec'] as { ports: Array<{ port: number; name: string }> }).ports;
        for (const p of r.spec.ports)
          assert.deepEqual(
            merged.find((x) => x.port === p.port),
            o(p),
          );
        assert.equal(merged.length, new Set([...l.spec.ports, ...r.spec.ports].map((p) => p.port)).size);
      }),
    );
  });

  it('drops the nulls the config sent once ownership is settled', () => {
    const merged = mergeObjects(
      o({ spec: { replicas: 1, paused: true } }),
      o({ spec: { paused: null } }),
      deploymentSchema,
    );
    assert.deepEqual(merged, o({ spec: { replicas: 1, paused: null } }));
    assert.deepEqual(
      dropAppliedNulls(merged, o({ spec: { paused: null } }), deploymentSchema),
      o({ spec: { replicas: 1 } }),
    );
  });
});

describe('removing paths', () => {
  it('removes members with their subtrees, and containers emptied unless kept', () => {
    const obj = o({
      metadata: { labels: { a: '1' } },
      spec: { ports: [{ port: 1, name: 'x' }, { port: 2 }] },
    });
    const port1 = key({ port: 1, protocol: 'TCP' });
    const rm = FieldSet.fromPaths([
      [field('metadata'), field('labels'), field('a')],
      [field('spec'), field('ports'), port1, field('name')],
      [field('spec'), field('ports'), key({ port: 2, protocol: 'TCP' })],
    ]);
    assert.deepEqual(removePaths(obj, rm, serviceSchema), o({ spec: { ports: [{ port: 1 }] } }));
    const keep = FieldSet.fromPaths([[field('metadata'), field('labels')]]);
    assert.deepEqual(
      removePaths(obj, rm, serviceSchema, keep),
      o({ metadata: { labels: {} }, spec: { ports: [{ port: 1 }] } }),
    );
  });

  it('makes struct fields members, not map keys or list items', () => {
    const s = FieldSet.fromPaths([
      [
        field('spec'),
        field('template'),
        field('spec'),
        field('containers'),
        key({ name: 'a' }),
        field('image'),
      ],
      [field('metadata'), field('labels'), field('x')],
    ]);
    assert.deepEqual(withNamedFieldsAsMembers(s, deploymentSchema).toStrings(), [
      '.metadata',
      '.metadata.labels',
      '.metadata.labels.x',
      '.spec',
      '.spec.template',
      '.spec.template.spec',
      '.spec.template.spec.containers',
      '.spec.template.spec.containers[name="a"].image',
    ]);
  });
});
