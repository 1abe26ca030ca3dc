import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { KObject } from '../../api/object.js';
import { slicePool } from './endpoints.js';
import type { TopologyView } from './view.js';
import { LOCAL_ENDPOINT_ANNOTATION, LOCAL_PORT_ANNOTATION, servedSlice } from './served.js';
import { servedContent, servedSliceText, sliceText } from './served-text.js';
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

/**
 * A view of the slice's Service keeping the endpoints whose first address is in `keep`; those whose
 * first address is in `sick` are on nodes the health source reports unhealthy.
 */
function viewOf(
  slice: KObject,
  kind: RuleKind,
  keep: readonly string[],
  sick: readonly string[] = [],
): TopologyView {
  const pool = slicePool(slice);
  const internal = keep.map((a) => ({ id: `${pool}/${a}`, addresses: [a] }) as unknown as TopologyEndpoint);
  return {
    key: 'default/web',
    internal,
    internalRule: { kind, source: 'none', keys: ['unit'] },
    ...(sick.length === 0
      ? {}
      : { unhealthy: { ids: new Set(sick.map((a) => `${pool}/${a}`)), addresses: new Set(sick) } }),
  };
}

const cases = fc.record({
  slice: sliceArb,
  view: fc.option(
    fc.record({
      kind: fc.constantFrom(...KINDS),
      keep: fc.subarray(ADDRESSES),
      sick: fc.subarray(ADDRESSES),
    }),
    { nil: undefined },
  ),
});

describe('served slices from text', () => {
  it('gives the bytes servedSlice() and JSON.stringify give, for every slice and view', () => {
    fc.assert(
      fc.property(cases, ({ slice, view }) => {
        const v = view === undefined ? undefined : viewOf(slice, view.kind, view.keep, view.sick);
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
    // Hints and every endpoint stay when kube-proxy applies the rule itself...
    const passed = JSON.parse(servedSliceText(sliceText(slice), viewOf(slice, 'hints', ['10.0.0.1'])));
    assert.deepEqual(passed, slice);
    // ...but for the endpoints on a node reported unhealthy, which leave with their hints.
    const sick = JSON.parse(servedSliceText(sliceText(slice), viewOf(slice, 'hints', [], ['10.0.0.1'])));
    assert.deepEqual(sick.endpoints, [{ addresses: ['10.0.0.2'], nodeName: 'n2' }]);
    const sick2 = JSON.parse(servedSliceText(sliceText(slice), viewOf(slice, 'none', [], ['10.0.0.2'])));
    assert.deepEqual(sick2.endpoints, [
      { addresses: ['10.0.0.1'], nodeName: 'n1', hints: { forZones: [{ name: 'z' }] } },
    ]);
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

describe('servedContent: what of a served form counts as a change', () => {
  const slice = (
    meta: Record<string, unknown>,
    endpoints: unknown[] = [{ addresses: ['10.0.0.1'] }],
  ): string =>
    JSON.stringify({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 's', namespace: 'default', ...meta },
      addressType: 'IPv4',
      endpoints,
    });
  const T = 'endpoints.kubernetes.io/last-change-trigger-time';
  const same: Array<[string, string, string]> = [
    ['a new generation', slice({ generation: 1 }), slice({ generation: 2 })],
    [
      'a new trigger time, among other annotations',
      slice({ annotations: { a: '1', [T]: '2026-01-01T00:00:00Z', z: '2' } }),
      slice({ annotations: { a: '1', [T]: '2026-01-01T00:00:05.25Z', z: '2' } }),
    ],
    [
      'the trigger time removed, the only annotation',
      slice({ generation: 3, annotations: { [T]: '2026-01-01T00:00:00Z' } }),
      slice({ generation: 4 }),
    ],
    [
      'the trigger time set, first of several',
      slice({ annotations: { a: '1' } }),
      slice({ annotations: { [T]: '2026-01-01T00:00:00Z', a: '1' } }),
    ],
    [
      'both at once, the trigger time the only annotation',
      slice({ generation: 3, annotations: { [T]: '2026-01-01T00:00:00Z' } }),
      slice({ generation: 9, annotations: { [T]: '2026-01-02T00:00:00Z' } }),
    ],
  ];
  for (const [what, a, b] of same) {
    it(`${what} is no change`, () => assert.equal(servedContent(a), servedContent(b)));
  }
  const differ: Array<[string, string, string]> = [
    ['an endpoint', slice({ generation: 1 }), slice({ generation: 1 }, [{ addresses: ['10.0.0.2'] }])],
    ['a label', slice({ labels: { a: '1' } }), slice({ labels: { a: '2' } })],
    [
      'another annotation',
      slice({ annotations: { [T]: 't', a: '1' } }),
      slice({ annotations: { [T]: 't', a: '2' } }),
    ],
    [
      'the trigger time dropped with another annotation',
      slice({ annotations: { [T]: 't', a: '1' } }),
      slice({}),
    ],
    [
      'a value that merely spells a volatile key',
      slice({ annotations: { a: '"generation":1' } }),
      slice({ annotations: { a: '"generation":2' } }),
    ],
    [
      'a label named generation',
      slice({ labels: { generation: '1' } }),
      slice({ labels: { generation: '2' } }),
    ],
    [
      'an annotation value that spells the trigger-time pair',
      slice({ annotations: { a: `"${T}":"x"` } }),
      slice({ annotations: { a: `"${T}":"y"` } }),
    ],
  ];
  for (const [what, a, b] of differ) {
    it(`${what} is a change`, () => assert.notEqual(servedContent(a), servedContent(b)));
  }

  it('property: the result is the JSON of the object without generation, trigger time and empty annotations', () => {
    // Other keys, in metadata and among the annotations, around the ones that go.
    const other = fc.constantFrom('a', 'b', 'name', 'x"y', 'generations', `${T}-not`);
    const at = fc.integer({ min: 0, max: 4e9 }).map((s) => new Date(s * 1000).toISOString());
    fc.assert(
      fc.property(
        fc.option(fc.nat(), { nil: undefined }),
        fc.option(
          fc.tuple(fc.dictionary(other, fc.string(), { maxKeys: 3 }), fc.option(at, { nil: undefined })),
          {
            nil: undefined,
          },
        ),
        fc.dictionary(other, fc.oneof(fc.string(), fc.nat()), { maxKeys: 3 }),
        fc.nat({ max: 3 }),
        (generation, annotations, rest, position) => {
          const entries: [string, unknown][] = Object.entries(rest);
          if (generation !== undefined)
            entries.splice(position % (entries.length + 1), 0, ['generation', generation]);
          if (annotations !== undefined) {
            const [others, trigger] = annotations;
            const list: [string, string][] = Object.entries(others);
            if (trigger !== undefined) list.splice(position % (list.length + 1), 0, [T, trigger]);
            entries.splice((position + 1) % (entries.length + 1), 0, [
              'annotations',
              Object.fromEntries(list),
            ]);
          }
          const meta = Object.fromEntries(entries);
          const want = structuredClone(meta);
          delete want['generation'];
          const a = want['annotations'] as Record<string, string> | undefined;
          if (a !== undefined) {
            delete a[T];
            if (Object.keys(a).length === 0) delete want['annotations'];
          }
          assert.equal(servedContent(JSON.stringify({ metadata: meta })), JSON.stringify({ metadata: want }));
        },
      ),
    );
  });

  it('property: changing generation and trigger time never counts; changing an endpoint always does', () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.nat(),
        fc.dictionary(
          fc.string().filter((k) => k !== '__proto__'),
          fc.string(),
          { maxKeys: 4 },
        ),
        fc.array(fc.ipV4(), { minLength: 1, maxLength: 4 }),
        fc.ipV4(),
        (g1, g2, annotations, addresses, extra) => {
          const at = (n: number): string => new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
          const a = slice({ generation: g1, annotations: { ...annotations, [T]: at(g1) } }, [{ addresses }]);
          const b = slice({ generation: g2, annotations: { ...annotations, [T]: at(g2) } }, [{ addresses }]);
          assert.equal(servedContent(a), servedContent(b));
          const c = slice({ generation: g1, annotations: { ...annotations, [T]: at(g1) } }, [
            { addresses: [...addresses, extra] },
          ]);
          assert.notEqual(servedContent(a), servedContent(c));
        },
      ),
    );
  });
});
