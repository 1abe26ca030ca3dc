import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { KObject } from '../../api/object.js';
import { slicePool } from './endpoints.js';
import type { TopologyView } from './index.js';
import { LOCAL_ENDPOINT_ANNOTATION, LOCAL_PORT_ANNOTATION, servedSlice } from './served.js';
import { servedSliceText, sliceText } from './served-text.js';
import type { RuleKind, TopologyEndpoint } from './types.js';

const KINDS: RuleKind[] = ['ordered-keys', 'superedge', 'openyurt', 'local', 'hints', 'none'];
// Addresses with what JSON must escape, so the text's separators are tested against them.
const ADDRESSES = [
  '10.0.0.1',
  '10.0.0.2',
  'fd00::1',
  'a"b',
  'a\\b',
  'a\nb',
  'a\tb',
  '',
  '\u0001x',
  '\ud800',
  '\u2028',
];

const endpointArb: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        addresses: fc.oneof(
          { weight: 6, arbitrary: fc.array(fc.constantFrom(...ADDRESSES), { minLength: 1, maxLength: 2 }) },
          { weight: 1, arbitrary: fc.constant([]) },
          { weight: 1, arbitrary: fc.constant([7]) },
          { weight: 1, arbitrary: fc.constant('10.0.0.1') },
        ),
        conditions: fc.record({ ready: fc.boolean() }, { requiredKeys: [] }),
        nodeName: fc.constantFrom('n1', 'n2', 'n\t3'),
        hints: fc.constant({ forZones: [{ name: 'z' }] }),
        zone: fc.constantFrom('z', 'y'),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(null, 3, 'x', [1, 2]) },
);

const sliceArb: fc.Arbitrary<KObject> = fc
  .record({
    namespace: fc.constantFrom('default', 'edge'),
    service: fc.option(fc.constantFrom('kubernetes', 'web', 'a\nb'), { nil: undefined }),
    local: fc.boolean(),
    endpoints: fc.oneof(
      { weight: 8, arbitrary: fc.array(endpointArb, { maxLength: 6 }) },
      { weight: 1, arbitrary: fc.constantFrom(null, undefined, 'x') },
    ),
    endpointsFirst: fc.boolean(),
    // The pool line is JSON too: port names with separators in them.
    portName: fc.constantFrom('http', 'a\tb', 'a\nb', '\ud800'),
    extra: fc.option(
      fc.dictionary(fc.constantFrom('z', '1', '4294967295', 'x\ny', '__proto__', 'toJSON'), fc.integer()),
      {
        nil: undefined,
      },
    ),
  })
  .map(({ namespace, service, local, endpoints, endpointsFirst, portName, extra }) => {
    const metadata = {
      namespace,
      name: 's',
      ...(service !== undefined ? { labels: { 'kubernetes.io/service-name': service } } : {}),
      ...(local
        ? { annotations: { [LOCAL_ENDPOINT_ANNOTATION]: '10.9.9.9', [LOCAL_PORT_ANNOTATION]: '6443' } }
        : {}),
    };
    const ports = [{ name: portName, port: 80, protocol: 'TCP' }];
    const o: Record<string, unknown> = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice' };
    if (endpointsFirst && endpoints !== undefined) o['endpoints'] = endpoints;
    o['metadata'] = metadata;
    o['addressType'] = 'IPv4';
    o['ports'] = ports;
    if (!endpointsFirst && endpoints !== undefined) o['endpoints'] = endpoints;
    // Parsed from JSON, as the wrapper's slices are: own "__proto__" keys, integer keys first.
    return JSON.parse(JSON.stringify({ ...o, ...extra })) as KObject;
  });

/** A view of the slice's Service keeping the endpoints whose first address is in `keep`. */
function viewOf(slice: KObject, kind: RuleKind, keep: readonly string[]): TopologyView {
  const pool = slicePool(slice);
  const internal = keep.map((a) => ({ id: `${pool}/${a}`, addresses: [a] }) as unknown as TopologyEndpoint);
  return { key: 'default/web', internal, internalRule: { kind, source: 'none', keys: ['unit'] } };
}

const cases = fc.record({
  slice: sliceArb,
  view: fc.option(
    fc.record({
      kind: fc.constantFrom(...KINDS),
      keep: fc.subarray(ADDRESSES),
    }),
    { nil: undefined },
  ),
});

describe('served slices from text', () => {
  it('gives the bytes servedSlice() and JSON.stringify give, for every slice and view', () => {
    fc.assert(
      fc.property(cases, ({ slice, view }) => {
        const v = view === undefined ? undefined : viewOf(slice, view.kind, view.keep);
        assert.equal(servedSliceText(sliceText(slice), v), JSON.stringify(servedSlice(slice, v)));
      }),
      { numRuns: 3000 },
    );
  });

  it('keeps only the view’s endpoints and drops their hints under an edge rule', () => {
    const slice = JSON.parse(
      JSON.stringify({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { namespace: 'edge', name: 'web-1', labels: { 'kubernetes.io/service-name': 'web' } },
        addressType: 'IPv4',
        endpoints: [
          { addresses: ['10.0.0.1'], nodeName: 'n1', hints: { forZones: [{ name: 'z' }] } },
          { addresses: ['10.0.0.2'], nodeName: 'n2' },
        ],
        ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
      }),
    ) as KObject;
    const served = JSON.parse(servedSliceText(sliceText(slice), viewOf(slice, 'superedge', ['10.0.0.1'])));
    assert.deepEqual(served.endpoints, [{ addresses: ['10.0.0.1'], nodeName: 'n1' }]);
    assert.deepEqual(served.ports, [{ name: 'http', port: 80, protocol: 'TCP' }]);
    // Hints and every endpoint stay when kube-proxy applies the rule itself.
    const passed = JSON.parse(servedSliceText(sliceText(slice), viewOf(slice, 'hints', ['10.0.0.1'])));
    assert.deepEqual(passed, slice);
  });

  it('rewrites default/kubernetes from its annotations, as servedSlice() does', () => {
    const slice = JSON.parse(
      JSON.stringify({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: {
          namespace: 'default',
          name: 'kubernetes',
          labels: { 'kubernetes.io/service-name': 'kubernetes' },
          annotations: { [LOCAL_ENDPOINT_ANNOTATION]: '127.0.0.1', [LOCAL_PORT_ANNOTATION]: '51003' },
        },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['10.0.0.1'] }],
        ports: [{ name: 'https', port: 6443, protocol: 'TCP' }],
      }),
    ) as KObject;
    const served = JSON.parse(servedSliceText(sliceText(slice), undefined));
    assert.deepEqual(served.endpoints[0].addresses, ['127.0.0.1']);
    assert.deepEqual(served.ports, [{ name: 'https', protocol: 'TCP', port: 51003 }]);
  });
});
