// The service topology controller's reconcile over a cache filled by hand and a recorder that remembers:
// each problem is reported once per Service UID, again after it goes away and comes back, and never for a
// clean Service.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import type { Client } from '../../runtime/client.js';
import type { EventRegarding } from '../../runtime/events.js';
import { SharedInformerFactory } from '../../runtime/informer.js';
import { ServiceTopologyController } from './servicetopology-controller.js';

const SERVICES = mustFindResource('', 'services');

interface Recorded {
  readonly about: EventRegarding;
  readonly type: string;
  readonly reason: string;
  readonly message: string;
}

function setup() {
  const factory = new SharedInformerFactory({} as Client); // never started: the test fills the cache
  const recorded: Recorded[] = [];
  const c = new ServiceTopologyController(factory, {
    events: {
      record: (about, type, reason, message) => {
        recorded.push({ about, type, reason, message });
        return Promise.resolve();
      },
    },
  });
  const cache = factory.informer(SERVICES).indexer;
  let rv = 0;
  const put = (uid: string, annotations: Record<string, string>, spec: Record<string, unknown> = {}): void =>
    cache.apply('MODIFIED', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default', uid, resourceVersion: String(++rv), annotations },
      spec: { ports: [{ port: 80 }], ...spec },
    } as KObject);
  const del = (): void =>
    cache.apply('DELETED', { metadata: { name: 'web', namespace: 'default' } } as KObject);
  return { c, recorded, put, del };
}

const BAD = { topologyKeys: 'not json' };

describe('ServiceTopologyController', () => {
  it('reports each problem once per UID, again when it comes back, and nothing for a clean Service', async () => {
    const { c, recorded, put, del } = setup();

    put('u1', {});
    await c.sync('default/web');
    assert.equal(recorded.length, 0, 'a clean Service');

    put('u1', BAD);
    await c.sync('default/web');
    assert.equal(recorded.length, 1);
    const [first] = recorded;
    assert.equal(first!.type, 'Warning');
    assert.equal(first!.reason, 'InvalidTopologyAnnotation');
    assert.match(first!.message, /^metadata\.annotations\[topologyKeys\]: not valid JSON/);
    assert.deepEqual(
      { kind: first!.about.kind, name: first!.about.name, ns: first!.about.namespace, uid: first!.about.uid },
      { kind: 'Service', name: 'web', ns: 'default', uid: 'u1' },
    );

    await c.sync('default/web'); // a resync
    put('u1', { ...BAD, unrelated: 'x' }); // an unrelated change
    await c.sync('default/web');
    assert.equal(recorded.length, 1, 'not reported again');

    put('u1', {}); // fixed
    await c.sync('default/web');
    put('u1', BAD); // broken again
    await c.sync('default/web');
    assert.equal(recorded.length, 2, 'reported again after it went away');

    put('u2', BAD); // deleted and recreated under the same name
    await c.sync('default/web');
    assert.equal(recorded.length, 3, 'reported again for a new UID');
    assert.equal(recorded[2]!.about.uid, 'u2');

    del();
    await c.sync('default/web');
    put('u2', BAD); // a deleted Service is forgotten
    await c.sync('default/web');
    assert.equal(recorded.length, 4);
  });

  it('reports every problem of a Service, one Event each', async () => {
    const { c, recorded, put } = setup();
    put('u1', { topologyKeys: '["unit"]' }, { topologyKeys: ['kubernetes.io/hostname'] });
    await c.sync('default/web');
    assert.deepEqual(
      recorded.map((r) => [r.reason, r.message]),
      [
        [
          'TopologyRuleConflict',
          'spec.topologyKeys decides which endpoints each node uses; annotation topologyKeys is ignored',
        ],
      ],
    );
    put('u1', { 'service.svcplane.io/topology-keys': '["*","topology.kubernetes.io/zone"]', ...BAD });
    await c.sync('default/web');
    assert.deepEqual(
      recorded.slice(1).map((r) => r.reason),
      ['InvalidTopologyAnnotation', 'InvalidTopologyAnnotation'],
    );
    await c.sync('default/web');
    assert.equal(recorded.length, 3);
  });

  it('forgets a Service that is gone', async () => {
    const { c, recorded } = setup();
    await c.sync('default/missing');
    assert.equal(recorded.length, 0);
  });
});
