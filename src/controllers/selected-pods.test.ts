// selectedPods picks its candidates from the label index and must select exactly what a scan of the
// namespace with selectsPod selects, for any pods, labels and selectors (property test).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { KObject } from '../api/object.js';
import { mustFindResource } from '../api/resources.js';
import { selectsPod, type Pod, type Service } from '../core/endpoints/endpoints.js';
import type { Client } from '../runtime/client.js';
import { Informer } from '../runtime/informer.js';
import { podLabelIndexers, selectedPods } from './selected-pods.js';

const PODS = mustFindResource('', 'pods');
const informer = (): Informer => new Informer({} as Client, PODS, { indexers: podLabelIndexers });

const pod = (ns: string, name: string, labels: Record<string, string>): KObject =>
  ({ metadata: { namespace: ns, name, labels, resourceVersion: '1' } }) as unknown as KObject;
const service = (ns: string, selector: unknown): Service =>
  ({ metadata: { namespace: ns, name: 's' }, spec: { selector } }) as unknown as Service;
const names = (ps: readonly Pod[]): string[] => ps.map((p) => p.metadata.name ?? '').sort();

describe('selectedPods', () => {
  it('selects by every pair, within the namespace; {} selects the namespace; no selector selects nothing', () => {
    const inf = informer();
    inf.indexer.replace(
      [
        pod('a', 'web-1', { app: 'web', tier: 'fe' }),
        pod('a', 'web-2', { app: 'web', tier: 'be' }),
        pod('a', 'db', { app: 'db' }),
        pod('b', 'web-3', { app: 'web', tier: 'fe' }),
      ],
      '1',
    );
    assert.deepEqual(names(selectedPods(inf, service('a', { app: 'web' }))), ['web-1', 'web-2']);
    assert.deepEqual(names(selectedPods(inf, service('a', { app: 'web', tier: 'fe' }))), ['web-1']);
    assert.deepEqual(names(selectedPods(inf, service('a', { app: 'nope', tier: 'fe' }))), []);
    assert.deepEqual(names(selectedPods(inf, service('a', {}))), ['db', 'web-1', 'web-2']);
    assert.deepEqual(names(selectedPods(inf, service('a', undefined))), []);
    // A relabel moves the pod between index buckets.
    inf.indexer.apply('MODIFIED', pod('a', 'db', { app: 'web', tier: 'fe' }));
    assert.deepEqual(names(selectedPods(inf, service('a', { tier: 'fe' }))), ['db', 'web-1']);
    inf.indexer.apply('DELETED', pod('a', 'web-1', { app: 'web', tier: 'fe' }));
    assert.deepEqual(names(selectedPods(inf, service('a', { tier: 'fe' }))), ['db']);
  });

  it('agrees with a scan of the namespace for any pods and selectors', () => {
    const label = fc.record({ k: fc.constantFrom('a', 'b', 'c'), v: fc.constantFrom('1', '2') });
    const labels = fc
      .array(label, { maxLength: 3 })
      .map((ls) => Object.fromEntries(ls.map((l) => [l.k, l.v])));
    const ns = fc.constantFrom('x', 'y');
    fc.assert(
      fc.property(
        fc.array(fc.record({ ns, labels }), { maxLength: 30 }),
        ns,
        fc.option(labels, { nil: undefined }),
        (specs, svcNs, selector) => {
          const inf = informer();
          inf.indexer.replace(
            specs.map((s, i) => pod(s.ns, `p${i}`, s.labels)),
            '1',
          );
          const svc = service(svcNs, selector);
          const scan = (inf.indexer.list() as Pod[]).filter((p) => selectsPod(svc, p));
          assert.deepEqual(names(selectedPods(inf, svc)), names(scan));
        },
      ),
    );
  });
});
