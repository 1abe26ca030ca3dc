// Table tests for the offline rewrite of an Endpoints object, from upstream's endpoints controller
// (addresses for ready pods, notReadyAddresses for the others, repacked), for this node's pods only.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { pod, service, type PodOptions } from '../endpoints/testing/builders.js';
import type { Pod } from '../endpoints/types.js';
import { readOfflineMark } from './mark.js';
import { rewriteEndpoints } from './endpoints.js';

const NODE = 'edge-0';
const SINCE = '2026-12-06T14:00:00Z';
const localPod = (name: string, o: PodOptions = {}): Pod => pod({ name, nodeName: NODE, ...o });
const ctx = (...pods: Pod[]) => ({
  node: NODE,
  pods: new Map(pods.map((p) => [`default/${p.metadata.name}`, p])),
  since: SINCE,
});
const address = (name: string, ip: string, node: string) => ({
  ip,
  nodeName: node,
  targetRef: { kind: 'Pod', namespace: 'default', name, uid: `uid-${name}` },
});
const PORTS = [{ name: 'http', port: 8080, protocol: 'TCP' }];
const endpoints = (subsets: unknown[]): KObject => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { name: 'foo', namespace: 'default' },
  subsets,
});
const subsetsOf = (o: KObject) => o['subsets'];

describe('rewriteEndpoints', () => {
  const remote = address('r', '10.1.0.1', 'edge-1');
  const mine = address('a', '10.0.0.1', NODE);
  const base = endpoints([{ addresses: [mine, remote], ports: PORTS }]);

  it('is the identity when the kubelet agrees', () => {
    assert.equal(rewriteEndpoints(base, service(), ctx(localPod('a', { ip: '10.0.0.1' }))), base);
  });

  it('gives a local pod its new IP, keeping the other nodes', () => {
    const got = rewriteEndpoints(base, service(), ctx(localPod('a', { ip: '10.0.0.9' })));
    assert.deepEqual(subsetsOf(got), [{ addresses: [{ ...mine, ip: '10.0.0.9' }, remote], ports: PORTS }]);
    assert.deepEqual(readOfflineMark(got), { since: SINCE, endpoints: 1 });
  });

  it('moves a not-ready local pod to notReadyAddresses', () => {
    const got = rewriteEndpoints(base, service(), ctx(localPod('a', { ip: '10.0.0.1', ready: false })));
    assert.deepEqual(subsetsOf(got), [{ addresses: [remote], notReadyAddresses: [mine], ports: PORTS }]);
  });

  it('drops a local pod gone from the kubelet, or terminating (without publishNotReadyAddresses)', () => {
    for (const pods of [[], [localPod('a', { ip: '10.0.0.1', terminating: true })]]) {
      const got = rewriteEndpoints(base, service(), ctx(...pods));
      assert.deepEqual(subsetsOf(got), [{ addresses: [remote], ports: PORTS }]);
      assert.deepEqual(readOfflineMark(got), { since: SINCE, endpoints: 0 });
    }
  });

  it('adds a selected local pod it does not name; not one the Service does not select', () => {
    const got = rewriteEndpoints(
      endpoints([{ addresses: [remote], ports: PORTS }]),
      service(),
      ctx(localPod('n', { ip: '10.0.0.5' })),
    );
    assert.deepEqual(subsetsOf(got), [{ addresses: [address('n', '10.0.0.5', NODE), remote], ports: PORTS }]);
    const none = endpoints([{ addresses: [remote], ports: PORTS }]);
    assert.equal(rewriteEndpoints(none, service(), ctx(localPod('n', { labels: { app: 'db' } }))), none);
  });

  it('leaves the object alone without its Service, and a rewritten one is rewritten to itself', () => {
    assert.equal(rewriteEndpoints(base, undefined, ctx()), base);
    const c = ctx(localPod('a', { ip: '10.0.0.9' }));
    const once = rewriteEndpoints(base, service(), c);
    assert.equal(rewriteEndpoints(once, service(), { ...c, since: 'later' }), once);
  });
});
