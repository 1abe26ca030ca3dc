// Property tests for the offline rewrite: random slices and Endpoints over two nodes and a few pod names,
// random kubelet answers for this node. Rewriting is idempotent, never touches another node's endpoints,
// and is the identity when the kubelet agrees with what is served.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { pod, service } from '../endpointslices/testing/builders.js';
import type { Pod } from '../endpoints/types.js';
import { rewriteEndpoints } from './endpoints.js';
import { isLocalPodRef } from './mark.js';
import { rewriteServiceSlices, type OfflineContext } from './slices.js';

const NODE = 'n0';
const NAMES = ['a', 'b', 'c', 'd'];
const RUNS = 300;

const ref = (name: string) => ({ kind: 'Pod', namespace: 'default', name, uid: `uid-${name}` });
const ip = (i: number) => `10.0.0.${i}`;

const endpointArb = fc.record({
  name: fc.constantFrom(...NAMES),
  node: fc.constantFrom(NODE, 'n1'),
  ip: fc.integer({ min: 1, max: 6 }),
  ready: fc.boolean(),
});
const podArb = fc.record({
  name: fc.constantFrom(...NAMES),
  ip: fc.integer({ min: 1, max: 6 }),
  ready: fc.boolean(),
  terminating: fc.boolean(),
  app: fc.constantFrom('web', 'db'),
  phase: fc.constantFrom('Running', 'Running', 'Succeeded'),
});

type EndpointCase = typeof endpointArb extends fc.Arbitrary<infer T> ? T : never;
type PodCase = typeof podArb extends fc.Arbitrary<infer T> ? T : never;

const sliceOf = (name: string, eps: EndpointCase[]): KObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, namespace: 'default', labels: { 'kubernetes.io/service-name': 'foo' } },
  addressType: 'IPv4',
  // One endpoint per pod name, as a controller writes them.
  endpoints: [...new Map(eps.map((e) => [e.name, e])).values()].map((e) => ({
    addresses: [ip(e.ip)],
    conditions: { ready: e.ready, serving: e.ready, terminating: false },
    targetRef: ref(e.name),
    nodeName: e.node,
  })),
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
});

const ctxOf = (pods: PodCase[]): OfflineContext => ({
  node: NODE,
  since: '2026-12-06T14:00:00Z',
  pods: new Map(
    pods.map((p): [string, Pod] => [
      `default/${p.name}`,
      pod({
        name: p.name,
        nodeName: NODE,
        ip: ip(p.ip),
        ready: p.ready,
        terminating: p.terminating,
        labels: { app: p.app },
        phase: p.phase,
      }),
    ]),
  ),
});

const slicesArb = fc.array(fc.array(endpointArb, { maxLength: 5 }), { minLength: 1, maxLength: 3 });
const podsArb = fc.array(podArb, { maxLength: 4 });

const rewrite = (slices: KObject[], c: OfflineContext) =>
  rewriteServiceSlices({ namespace: 'default', service: 'foo', object: service(), slices }, c);
const present = (m: Map<string, KObject | null>) => [...m.values()].filter((s): s is KObject => s !== null);
const remote = (s: KObject) => (s['endpoints'] as unknown[]).filter((e) => !isLocalPodRef(e, NODE));

describe('offline rewrite properties', () => {
  it('slices: rewriting is idempotent and leaves other nodes’ endpoints as they were', () => {
    fc.assert(
      fc.property(slicesArb, podsArb, (raw, pods) => {
        const slices = raw.map((eps, i) => sliceOf(`foo-${i}`, eps));
        const c = ctxOf(pods);
        const once = rewrite(slices, c);
        for (const s of slices) assert.deepEqual(remote(once.get(s.metadata.name!)!), remote(s));
        const twice = rewrite(present(once), { ...c, since: 'later' });
        for (const [name, s] of twice) assert.equal(s, once.get(name), name);
      }),
      { numRuns: RUNS },
    );
  });

  it('slices: the identity when the kubelet lists exactly the served local pods', () => {
    fc.assert(
      fc.property(slicesArb, (raw) => {
        const slices = raw.map((eps, i) => sliceOf(`foo-${i}`, eps));
        const pods = new Map<string, Pod>();
        for (const s of slices)
          for (const e of s['endpoints'] as {
            addresses: string[];
            conditions: { ready: boolean };
            nodeName: string;
            targetRef: { name: string };
          }[])
            if (e.nodeName === NODE && !pods.has(`default/${e.targetRef.name}`))
              pods.set(
                `default/${e.targetRef.name}`,
                pod({
                  name: e.targetRef.name,
                  nodeName: NODE,
                  ip: e.addresses[0]!,
                  ready: e.conditions.ready,
                }),
              );
        // A pod named twice with different IPs cannot agree with both: only single names are checked.
        const names = slices.flatMap((s) =>
          (s['endpoints'] as { targetRef: { name: string }; nodeName: string }[])
            .filter((e) => e.nodeName === NODE)
            .map((e) => e.targetRef.name),
        );
        fc.pre(new Set(names).size === names.length);
        const out = rewrite(slices, { node: NODE, since: 'x', pods });
        for (const s of slices) assert.equal(out.get(s.metadata.name!), s);
        assert.equal(out.size, slices.length);
      }),
      { numRuns: RUNS },
    );
  });

  it('Endpoints: rewriting is idempotent and keeps other nodes’ addresses', () => {
    fc.assert(
      fc.property(fc.array(endpointArb, { maxLength: 6 }), podsArb, (eps, pods) => {
        const addresses = [...new Map(eps.map((e) => [e.name, e])).values()].map((e) => ({
          ip: ip(e.ip),
          nodeName: e.node,
          targetRef: ref(e.name),
        }));
        const obj: KObject = {
          apiVersion: 'v1',
          kind: 'Endpoints',
          metadata: { name: 'foo', namespace: 'default' },
          subsets:
            addresses.length === 0
              ? []
              : [{ addresses, ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }],
        };
        const c = ctxOf(pods);
        const once = rewriteEndpoints(obj, service(), c);
        const others = (o: KObject) =>
          (o['subsets'] as { addresses?: unknown[]; notReadyAddresses?: unknown[] }[])
            .flatMap((s) => [...(s.addresses ?? []), ...(s.notReadyAddresses ?? [])])
            .filter((a) => !isLocalPodRef(a, NODE))
            .map((a) => JSON.stringify(a))
            .sort();
        assert.deepEqual(others(once), others(obj));
        assert.equal(rewriteEndpoints(once, service(), { ...c, since: 'later' }), once);
      }),
      { numRuns: RUNS },
    );
  });
});
