// The informer cache's transform: what controllers keep of each object, on adds, updates and relists.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/object.js';
import { RESOURCES, type ResourceInfo } from '../api/resources.js';
import { controllerTransform, Indexer } from './informer.js';

const resource = (name: string): ResourceInfo => {
  const r = RESOURCES.find((x) => x.resource === name);
  assert.ok(r, name);
  return r;
};

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: {} }];

const obj = (name: string, rv: string, annotations?: Record<string, string>): KObject =>
  ({
    metadata: {
      name,
      namespace: 'default',
      resourceVersion: rv,
      managedFields,
      ...(annotations === undefined ? {} : { annotations }),
    },
    spec: { nodeName: 'n1' },
  }) as unknown as KObject;

describe('controllerTransform', () => {
  it('drops managedFields from every kind, and last-applied from pods only', () => {
    const annotations = { [LAST_APPLIED]: '{"big":"manifest"}', keep: 'me' };
    const pod = controllerTransform(resource('pods'))(obj('p', '1', annotations));
    assert.equal(pod.metadata.managedFields, undefined);
    assert.deepEqual(pod.metadata.annotations, { keep: 'me' });
    assert.deepEqual((pod as unknown as { spec: unknown }).spec, { nodeName: 'n1' });
    // Endpoints and slices are written back from the cache: their annotations stay whole.
    const ep = controllerTransform(resource('endpoints'))(obj('e', '1', annotations));
    assert.equal(ep.metadata.managedFields, undefined);
    assert.deepEqual(ep.metadata.annotations, annotations);
  });

  it('leaves the object it was given unchanged, and returns an object without either as it is', () => {
    const t = controllerTransform(resource('pods'));
    const given = obj('p', '1', { [LAST_APPLIED]: 'x' });
    const copy = structuredClone(given);
    t(given);
    assert.deepEqual(given, copy);
    const plain = { metadata: { name: 'q', namespace: 'default' } } as KObject;
    assert.equal(t(plain), plain);
  });

  it('applies to what the indexer caches and hands to handlers, on adds, updates and relists', () => {
    const idx = new Indexer({}, controllerTransform(resource('pods')));
    const seen: KObject[] = [];
    idx.addHandlers({ onAdd: (o) => seen.push(o), onUpdate: (_old, o) => seen.push(o) });
    idx.apply('ADDED', obj('a', '1', { [LAST_APPLIED]: 'x' }));
    idx.apply('MODIFIED', obj('a', '2'));
    idx.replace([obj('a', '3'), obj('b', '3')], '3');
    assert.equal(seen.length, 4);
    for (const o of [...seen, ...idx.list()]) {
      assert.equal(o.metadata.managedFields, undefined);
      assert.equal(o.metadata.annotations?.[LAST_APPLIED], undefined);
    }
  });
});
