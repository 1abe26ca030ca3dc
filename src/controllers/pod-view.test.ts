// The pod informer's view: the union of what the running controllers read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/object.js';
import { RESOURCES, type ResourceInfo } from '../api/resources.js';
import { controllerTransform } from '../runtime/informer.js';
import { podViewOf } from './pod-view.js';

const resource = (name: string): ResourceInfo => {
  const r = RESOURCES.find((x) => x.resource === name);
  assert.ok(r, name);
  return r;
};
const managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: {} }];

describe('podViewOf', () => {
  it("keeps of pods only the running controllers' view: the union of theirs, or whole pods if one has none", () => {
    const whole = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default', uid: 'u1', ownerReferences: [], managedFields },
      spec: {
        nodeName: 'n1',
        containers: [{ name: 'c', image: 'big/image:1', ports: [{ containerPort: 80 }], args: ['x'] }],
        tolerations: [{ key: 'k', operator: 'Exists' }],
      },
      status: { phase: 'Running', podIP: '10.0.0.1', startTime: 't', containerStatuses: [{ name: 'c' }] },
    } as unknown as KObject;
    const view = podViewOf(['endpoints', 'endpointslice', 'garbagecollector']);
    assert.ok(view !== undefined);
    assert.deepEqual(controllerTransform(resource('pods'), view)(whole), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'default', uid: 'u1', ownerReferences: [] },
      spec: { nodeName: 'n1', containers: [{ name: 'c', ports: [{ containerPort: 80 }] }] },
      status: { phase: 'Running', podIP: '10.0.0.1' },
    });
    // The garbage collector alone reads metadata only.
    const gcOnly = controllerTransform(resource('pods'), podViewOf(['garbagecollector']))(whole);
    assert.deepEqual(Object.keys(gcOnly), ['apiVersion', 'kind', 'metadata']);
    // A controller without a declared view (any future one) gets whole pods; other kinds are never projected.
    assert.equal(podViewOf(['endpoints', 'some-future-controller']), undefined);
    // The scheduler reads what places a pod: tolerations, and the containers' requests and host ports.
    const sched = controllerTransform(resource('pods'), podViewOf(['scheduler']))(whole);
    assert.deepEqual((sched['spec'] as { tolerations?: unknown }).tolerations, [
      { key: 'k', operator: 'Exists' },
    ]);
    assert.deepEqual((sched['spec'] as { containers?: unknown }).containers, [
      { name: 'c', ports: [{ containerPort: 80 }] },
    ]);
    const svc = { ...whole, kind: 'Service' } as KObject;
    assert.deepEqual(Object.keys(controllerTransform(resource('services'), view)(svc)), [
      'apiVersion',
      'kind',
      'metadata',
      'spec',
      'status',
    ]);
  });
});
