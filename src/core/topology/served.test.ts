import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { servedSliceText, sliceText } from './served-text.js';
import { TopologyIndex } from './topology-index.js';
import {
  LOCAL_ENDPOINT_ANNOTATION,
  LOCAL_PORT_ANNOTATION,
  servedEndpoints,
  servedSlice,
  viewFilters,
} from './served.js';

const svc = (name: string, annotations: Record<string, string> = {}, spec: Record<string, unknown> = {}) => ({
  metadata: { namespace: 'default', name, annotations },
  spec: { ports: [{ port: 80 }], ...spec },
});
const slice = (
  name: string,
  service: string,
  eps: Array<[string, string]>,
  annotations?: Record<string, string>,
): KObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: {
    namespace: 'default',
    name,
    labels: { 'kubernetes.io/service-name': service },
    ...(annotations ? { annotations } : {}),
  },
  addressType: 'IPv4',
  ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  endpoints: eps.map(([ip, node]) => ({
    addresses: [ip],
    nodeName: node,
    conditions: { ready: true },
    hints: { forZones: [{ name: 'z' }] },
  })),
});
const endpoints = (
  name: string,
  ips: Array<[string, string]>,
  annotations?: Record<string, string>,
): KObject => ({
  apiVersion: 'v1',
  kind: 'Endpoints',
  metadata: { namespace: 'default', name, ...(annotations ? { annotations } : {}) },
  subsets: [
    {
      addresses: ips.map(([ip, nodeName]) => ({ ip, nodeName })),
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    },
  ],
});
const ips = (o: KObject): string[] =>
  ((o['endpoints'] as Array<{ addresses: string[] }> | undefined) ?? []).map((e) => e.addresses[0]!);

function world(annotations: Record<string, string>, spec: Record<string, unknown> = {}) {
  const idx = new TopologyIndex('n1');
  idx.setNode('n1', { unit: 'a' });
  idx.setNode('n2', { unit: 'a' });
  idx.setNode('n3', { unit: 'b' });
  const s = slice('web-1', 'web', [
    ['10.0.0.1', 'n1'],
    ['10.0.0.2', 'n2'],
    ['10.0.0.3', 'n3'],
  ]);
  idx.setService('default/web', svc('web', annotations, spec));
  idx.setSlice('default/web', 'web-1', s);
  return { idx, s, view: idx.view('default/web') };
}

describe('servedSlice and servedEndpoints', () => {
  it("keep only the engine's endpoints for an edge rule, and drop hints", () => {
    const { s, view } = world({ topologyKeys: '["unit"]' });
    assert.equal(viewFilters(view), true);
    const out = servedSlice(s, view);
    assert.deepEqual(ips(out), ['10.0.0.1', '10.0.0.2']);
    assert.equal(
      (out['endpoints'] as Array<Record<string, unknown>>).some((e) => 'hints' in e),
      false,
    );
    const ep = servedEndpoints(
      endpoints('web', [
        ['10.0.0.1', 'n1'],
        ['10.0.0.3', 'n3'],
      ]),
      view,
    );
    assert.deepEqual(
      (ep['subsets'] as Array<{ addresses: Array<{ ip: string }> }>)[0]!.addresses.map((a) => a.ip),
      ['10.0.0.1'],
    );
  });

  it('pass slices through unchanged when no edge rule decides (kube-proxy applies hints and policies)', () => {
    for (const [annotations, spec] of [
      [{}, {}],
      [{}, { trafficDistribution: 'PreferClose' }],
    ] as const) {
      const { s, view } = world(annotations, spec);
      assert.equal(viewFilters(view), false);
      assert.equal(servedSlice(s, view), s);
    }
    const { s } = world({ topologyKeys: '["unit"]' });
    assert.equal(servedSlice(s, undefined), s, 'a slice of an unknown Service passes');
  });

  it('leave out the endpoints on a node reported unhealthy under every rule, keeping the others as they are', () => {
    for (const [annotations, spec] of [
      [{}, {}],
      [{}, { trafficDistribution: 'PreferClose' }],
      [{ topologyKeys: '["unit"]' }, {}],
    ] as const) {
      const { idx, s } = world(annotations, spec);
      assert.deepEqual(idx.setHealth('n2', false), ['default/web']);
      const view = idx.view('default/web');
      const out = servedSlice(s, view);
      assert.ok(!ips(out).includes('10.0.0.2'), JSON.stringify(annotations));
      if (!viewFilters(view)) {
        assert.deepEqual(ips(out), ['10.0.0.1', '10.0.0.3']);
        assert.ok((out['endpoints'] as Array<Record<string, unknown>>).every((e) => 'hints' in e));
      }
      const ep = servedEndpoints(
        endpoints('web', [
          ['10.0.0.1', 'n1'],
          ['10.0.0.2', 'n2'],
        ]),
        view,
      );
      assert.deepEqual(
        (ep['subsets'] as Array<{ addresses: Array<{ ip: string }> }>)[0]!.addresses.map((a) => a.ip),
        ['10.0.0.1'],
      );
      // No opinion again: everything back, and the slice passes through as it was.
      assert.deepEqual(idx.setHealth('n2', undefined), ['default/web']);
      if (!viewFilters(idx.view('default/web'))) assert.equal(servedSlice(s, idx.view('default/web')), s);
    }
  });

  it('empty a subset-less Endpoints entirely when nothing is kept', () => {
    const { view } = world({ topologyKeys: '["unit"]' });
    const ep = servedEndpoints(endpoints('web', [['10.0.0.3', 'n3']]), view);
    assert.deepEqual(ep['subsets'], []);
  });

  it('rewrite default/kubernetes to the local endpoint the annotations name, and follow the annotations', () => {
    const a = { [LOCAL_ENDPOINT_ANNOTATION]: '169.254.20.11', [LOCAL_PORT_ANNOTATION]: '51003' };
    const s = slice('kubernetes', 'kubernetes', [['10.0.0.9', 'm']], a);
    const out = servedSlice(s, undefined);
    assert.deepEqual(ips(out), ['169.254.20.11']);
    assert.deepEqual(out['ports'], [{ name: 'https', protocol: 'TCP', port: 51003 }]);
    const ep = servedEndpoints(
      endpoints('kubernetes', [['10.0.0.9', 'm']], { ...a, [LOCAL_PORT_ANNOTATION]: '6443' }),
      undefined,
    );
    assert.deepEqual(ep['subsets'], [
      { addresses: [{ ip: '169.254.20.11' }], ports: [{ name: 'https', port: 6443, protocol: 'TCP' }] },
    ]);
    // invalid or partial annotations change nothing
    for (const bad of [
      { [LOCAL_ENDPOINT_ANNOTATION]: 'not-an-ip', [LOCAL_PORT_ANNOTATION]: '1' },
      { [LOCAL_ENDPOINT_ANNOTATION]: '1.2.3.4' },
      { ...a, [LOCAL_PORT_ANNOTATION]: '70000' },
    ]) {
      const k = slice('kubernetes', 'kubernetes', [['10.0.0.9', 'm']], bad);
      assert.equal(servedSlice(k, undefined), k);
    }
    // only default/kubernetes
    const other = { ...s, metadata: { ...s.metadata, namespace: 'kube-system' } };
    assert.equal(servedSlice(other, undefined), other);
  });

  it("leave default/kubernetes as it is with localApiserver false (SuperEdge's --wrapper-in-cluster=false)", () => {
    const a = { [LOCAL_ENDPOINT_ANNOTATION]: '169.254.20.11', [LOCAL_PORT_ANNOTATION]: '51003' };
    const s = slice('kubernetes', 'kubernetes', [['10.0.0.9', 'm']], a);
    assert.equal(servedSlice(s, undefined, { localApiserver: false }), s);
    assert.deepEqual(
      JSON.parse(servedSliceText(sliceText(s), undefined, { localApiserver: false })),
      JSON.parse(JSON.stringify(s)),
    );
    assert.deepEqual(ips(JSON.parse(servedSliceText(sliceText(s), undefined)) as KObject), ['169.254.20.11']);
    const ep = endpoints('kubernetes', [['10.0.0.9', 'm']], a);
    assert.equal(servedEndpoints(ep, undefined, { localApiserver: false }), ep);
  });
});
