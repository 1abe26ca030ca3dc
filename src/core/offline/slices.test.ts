// Table tests for the offline rewrite of a Service's slices, from upstream's EndpointSlice semantics
// (podToEndpoint, getEndpointPorts, FindPort) applied to the endpoints of this node's pods only.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { pod, service, type PodOptions } from '../endpointslices/testing/builders.js';
import type { Pod, Service } from '../endpoints/types.js';
import { slice as topologySlice } from '../topology/testing/builders.js';
import { OFFLINE_ANNOTATION, OFFLINE_MANAGED_BY, readOfflineMark } from './mark.js';
import { rewriteServiceSlices, type OfflineContext } from './slices.js';

const NODE = 'edge-0';
const SINCE = '2026-12-06T14:00:00Z';

function endpoint(name: string, ip: string, node: string, ready = true): Record<string, unknown> {
  return {
    addresses: [ip],
    conditions: { ready, serving: ready, terminating: false },
    targetRef: { kind: 'Pod', namespace: 'default', name, uid: `uid-${name}` },
    nodeName: node,
  };
}

const slice = (
  name: string,
  endpoints: Record<string, unknown>[],
  o: { addressType?: 'IPv4' | 'IPv6'; port?: number } = {},
) =>
  topologySlice(name, endpoints, {
    service: 'foo',
    ...(o.addressType === undefined ? {} : { addressType: o.addressType }),
    ports: [{ name: 'http', port: o.port ?? 8080, protocol: 'TCP' }],
  }) as KObject;

const localPod = (name: string, o: PodOptions = {}): Pod => pod({ name, nodeName: NODE, ...o });

const ctx = (...pods: Pod[]): OfflineContext => ({
  node: NODE,
  pods: new Map(pods.map((p) => [`default/${p.metadata.name}`, p])),
  since: SINCE,
});

/** `svc` null: the Service is not known. */
const run = (slices: KObject[], c: OfflineContext, svc: Service | null = service()) =>
  rewriteServiceSlices({ namespace: 'default', service: 'foo', object: svc ?? undefined, slices }, c);

const endpointsOf = (o: KObject | null | undefined) =>
  (o as { endpoints: unknown[] } | null | undefined)?.endpoints;

describe('rewriteServiceSlices', () => {
  const remote = endpoint('r', '10.1.0.1', 'edge-1');
  const mine = endpoint('a', '10.0.0.1', NODE);

  it('leaves a slice the kubelet agrees with unchanged (the same object, no mark)', () => {
    const s = slice('foo-1', [remote, mine]);
    const out = run([s], ctx(localPod('a', { ip: '10.0.0.1' })));
    assert.equal(out.get('foo-1'), s);
  });

  it('gives a local pod its new IP, keeps the other nodes, and marks the slice', () => {
    const out = run([slice('foo-1', [remote, mine])], ctx(localPod('a', { ip: '10.0.0.9', uid: 'uid-a2' })));
    const got = out.get('foo-1')!;
    assert.deepEqual(endpointsOf(got), [
      remote,
      { ...mine, addresses: ['10.0.0.9'], targetRef: { ...(mine['targetRef'] as object), uid: 'uid-a2' } },
    ]);
    assert.deepEqual(readOfflineMark(got), { since: SINCE, endpoints: 1 });
  });

  const conditions: [string, PodOptions, Record<string, boolean>][] = [
    ['Ready', {}, { ready: true, serving: true, terminating: false }],
    ['not Ready', { ready: false }, { ready: false, serving: false, terminating: false }],
    ['terminating and Ready', { terminating: true }, { ready: false, serving: true, terminating: true }],
    [
      'terminating, not Ready',
      { terminating: true, ready: false },
      { ready: false, serving: false, terminating: true },
    ],
  ];
  for (const [what, o, want] of conditions)
    it(`conditions from the pod: ${what}`, () => {
      const out = run([slice('foo-1', [mine])], ctx(localPod('a', { ip: '10.0.0.1', ...o })));
      assert.deepEqual((endpointsOf(out.get('foo-1')) as { conditions: unknown }[])[0]!.conditions, want);
    });

  it('reads absent conditions as the API documents them: a slice that leaves them out is not rewritten', () => {
    const sparse = slice('foo-1', [{ ...mine, conditions: { ready: true } }]);
    assert.equal(run([sparse], ctx(localPod('a', { ip: '10.0.0.1' }))).get('foo-1'), sparse);
    const none = slice('foo-1', [{ ...mine, conditions: {} }]);
    assert.equal(run([none], ctx(localPod('a', { ip: '10.0.0.1' }))).get('foo-1'), none);
    const got = run([sparse], ctx(localPod('a', { ip: '10.0.0.1', ready: false }))).get('foo-1');
    assert.deepEqual((endpointsOf(got) as { conditions: unknown }[])[0]!.conditions, {
      ready: false,
      serving: false,
      terminating: false,
    });
  });

  it('publishNotReadyAddresses keeps a not-ready pod ready', () => {
    const out = run(
      [slice('foo-1', [mine])],
      ctx(localPod('a', { ip: '10.0.0.1', ready: false })),
      service({ publishNotReadyAddresses: true }),
    );
    assert.equal(out.get('foo-1') === undefined, false);
    assert.deepEqual((endpointsOf(out.get('foo-1')) as { conditions: unknown }[])[0]!.conditions, {
      ready: true,
      serving: false,
      terminating: false,
    });
  });

  const dropped: [string, Pod[]][] = [
    ['gone from the kubelet', []],
    ['Succeeded', [localPod('a', { ip: '10.0.0.1', phase: 'Succeeded' })]],
    ['without an IP', [localPod('a', { ip: '' })]],
    ['with only an IP of the other family', [localPod('a', { ip: 'fd00::1' })]],
  ];
  for (const [what, pods] of dropped)
    it(`drops the endpoint of a local pod ${what}`, () => {
      const got = run([slice('foo-1', [remote, mine])], ctx(...pods)).get('foo-1')!;
      assert.deepEqual(endpointsOf(got), [remote]);
      assert.deepEqual(readOfflineMark(got), { since: SINCE, endpoints: 0 });
    });

  it('never touches an endpoint of another node, even of a pod the kubelet lists', () => {
    const s = slice('foo-1', [endpoint('a', '10.0.0.1', 'edge-1')]);
    assert.equal(run([s], ctx(localPod('a', { ip: '10.0.0.9' }))).get('foo-1'), s);
  });

  it('adds a selected local pod no slice names to the slice of its address type and ports', () => {
    const v4 = slice('foo-b', [remote]);
    const other = slice('foo-a', [], { port: 9090 });
    const v6 = slice('foo-c', [], { addressType: 'IPv6' });
    const out = run([other, v4, v6], ctx(localPod('n', { ip: '10.0.0.5' })));
    assert.equal(out.get('foo-a'), other);
    assert.equal(out.get('foo-c'), v6);
    assert.deepEqual(endpointsOf(out.get('foo-b')), [
      remote,
      {
        addresses: ['10.0.0.5'],
        conditions: { ready: true, serving: true, terminating: false },
        targetRef: { kind: 'Pod', namespace: 'default', name: 'n', uid: 'uid-n' },
        nodeName: NODE,
      },
    ]);
  });

  it('adds nothing for a pod the Service does not select, or without the Service', () => {
    const s = slice('foo-1', [remote]);
    assert.equal(run([s], ctx(localPod('n', { labels: { app: 'db' } }))).get('foo-1'), s);
    assert.equal(run([s], ctx(localPod('n')), null).get('foo-1'), s);
  });

  it('resolves a named targetPort against the pod and creates a slice when none has those ports', () => {
    const svc = service({ ports: [{ name: 'http', port: 80, targetPort: 'web', protocol: 'TCP' }] });
    const p = localPod('n', {
      ip: '10.0.0.5',
      containers: [{ name: 'c', ports: [{ name: 'web', containerPort: 7070, protocol: 'TCP' }] }],
    });
    const out = run([slice('foo-1', [remote])], ctx(p), svc);
    assert.equal(out.size, 2);
    const created = [...out.values()].find(
      (s) => s?.metadata.labels?.['endpointslice.kubernetes.io/managed-by'] === OFFLINE_MANAGED_BY,
    )!;
    assert.deepEqual(created['ports'], [{ name: 'http', port: 7070, protocol: 'TCP' }]);
    assert.equal(created.metadata.labels?.['kubernetes.io/service-name'], 'foo');
    assert.deepEqual(readOfflineMark(created), { since: SINCE, endpoints: 1 });
    // Once its pod is gone, the created slice is deleted.
    const again = run(
      [...out.values()].filter((s): s is KObject => s !== null),
      ctx(),
      svc,
    );
    assert.equal(again.get(created.metadata.name!), null);
  });

  it('moves a local endpoint whose ports now resolve otherwise', () => {
    const svc = service({ ports: [{ name: 'http', port: 80, targetPort: 'web', protocol: 'TCP' }] });
    const p = localPod('a', {
      ip: '10.0.0.1',
      containers: [{ name: 'c', ports: [{ name: 'web', containerPort: 9090, protocol: 'TCP' }] }],
    });
    const out = run([slice('foo-1', [remote, mine]), slice('foo-2', [], { port: 9090 })], ctx(p), svc);
    assert.deepEqual(endpointsOf(out.get('foo-1')), [remote]);
    assert.deepEqual(
      (endpointsOf(out.get('foo-2')) as { addresses: string[] }[]).map((e) => e.addresses),
      [['10.0.0.1']],
    );
  });

  it('keeps the mark and its since on a rewritten slice, and rewriting it again is the identity', () => {
    const c = ctx(localPod('a', { ip: '10.0.0.9' }));
    const once = run([slice('foo-1', [remote, mine])], c).get('foo-1')!;
    assert.equal(run([once], { ...c, since: 'later' }).get('foo-1'), once);
    assert.match(once.metadata.annotations![OFFLINE_ANNOTATION]!, /"since":"2026-12-06T14:00:00Z"/);
  });
});
