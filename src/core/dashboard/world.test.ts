import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { decide } from '../topology/decide.js';
import { endpointsFromSlices } from '../topology/endpoints.js';
import { explainReport } from '../topology/explain-report.js';
import { HOSTNAME_LABEL, topologyService } from '../topology/rules.js';
import {
  NODEPOOL,
  ZONE,
  slice,
  sliceEndpoint,
  svcJSON,
  type EpOptions,
  type SvcOptions,
} from '../topology/testing/builders.js';
import type { Labels } from '../topology/types.js';
import { cellOf } from './cell.js';
import { DashboardWorld } from './world.js';
import type { CellsAnswer } from './types.js';

const nodeObj = (name: string, labels: Labels = {}, ready = true): KObject =>
  ({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels },
    status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
  }) as KObject;
const svcObj = (o: SvcOptions, extra: Partial<KObject['metadata']> = {}): KObject => {
  const j = svcJSON(o) as { metadata: KObject['metadata'] };
  return { apiVersion: 'v1', kind: 'Service', ...j, metadata: { ...j.metadata, ...extra } } as KObject;
};
const sliceObj = (name: string, service: string, eps: [string, EpOptions][]): KObject =>
  slice(
    name,
    eps.map(([a, o]) => sliceEndpoint(a, o)),
    { service },
  ) as unknown as KObject;

/** Three nodes in two units, a ServiceGrid Service and a `spec.topologyKeys` Service (the seed's shape). */
function seed(): DashboardWorld {
  const w = new DashboardWorld();
  w.apply('node', 'upsert', nodeObj('edge-1', { unit: 'u1', [ZONE]: 'z1' }));
  w.apply('node', 'upsert', nodeObj('edge-2', { unit: 'u1', [ZONE]: 'z2' }));
  w.apply('node', 'upsert', nodeObj('edge-3', { unit: 'u2', [ZONE]: 'z2' }, false));
  w.apply('servicegrid', 'upsert', {
    apiVersion: 'superedge.io/v1',
    kind: 'ServiceGrid',
    metadata: { name: 'echo', namespace: 'default' },
    spec: { gridUniqKey: 'unit' },
  } as KObject);
  w.apply(
    'service',
    'upsert',
    svcObj(
      { name: 'echo-svc', superedge: ['unit'] },
      {
        ownerReferences: [
          { apiVersion: 'superedge.io/v1', kind: 'ServiceGrid', name: 'echo', uid: 'u', controller: true },
        ],
      },
    ),
  );
  w.apply('slice', 'upsert', sliceObj('echo-svc-a', 'echo-svc', [['10.0.0.1', { node: 'edge-1' }]]));
  w.apply('service', 'upsert', svcObj({ name: 'zoned', topologyKeys: [ZONE] }));
  w.apply(
    'slice',
    'upsert',
    sliceObj('zoned-a', 'zoned', [
      ['10.0.1.1', { node: 'edge-1' }],
      ['10.0.1.2', { node: 'edge-2' }],
    ]),
  );
  w.apply('service', 'upsert', svcObj({ name: 'local', namespace: 'other', internalTrafficPolicy: 'Local' }));
  return w;
}

const fresh = (
  w: DashboardWorld,
  q = {},
  rows: [number, number] = [0, 99],
  cols: [number, number] = [0, 99],
) => {
  const a = w.cells(q, w.layout(q).version, rows, cols);
  assert.equal(a.stale, false);
  return a as Extract<CellsAnswer, { stale: false }>;
};

describe('DashboardWorld: the layout', () => {
  it('groups by the first grid key, sorts rows by group then name and columns by namespace then name', () => {
    const l = seed().layout({});
    assert.equal(l.groupKey, 'unit');
    assert.deepEqual(
      l.rows.map((r) => [r.node, r.group, r.ready, r.health]),
      [
        ['edge-1', 'u1', true, 'unconfigured'],
        ['edge-2', 'u1', true, 'unconfigured'],
        ['edge-3', 'u2', false, 'unconfigured'],
      ],
    );
    assert.deepEqual(l.groups, [
      { value: 'u1', first: 0, count: 2 },
      { value: 'u2', first: 2, count: 1 },
    ]);
    assert.deepEqual(
      l.columns.map((c) => [c.key, c.rule, c.grid ?? null]),
      [
        ['default/echo-svc', 'superedge', 'echo'],
        ['default/zoned', 'ordered-keys', null],
        ['other/local', 'local', null],
      ],
    );
    assert.deepEqual(l.groupKeys, ['unit', ZONE]);
    assert.deepEqual(l.namespaces, ['default', 'other']);
    assert.equal(l.healthConfigured, false);
  });

  it('falls back to the zone, then to no grouping; nodes without the key come last', () => {
    const w = new DashboardWorld();
    w.apply('node', 'upsert', nodeObj('a'));
    assert.equal(w.layout({}).groupKey, '');
    w.apply('node', 'upsert', nodeObj('b', { [ZONE]: 'z' }));
    const l = w.layout({});
    assert.equal(l.groupKey, ZONE);
    assert.deepEqual(
      l.rows.map((r) => [r.node, r.group]),
      [
        ['b', 'z'],
        ['a', null],
      ],
    );
    assert.deepEqual(w.layout({ group: '' }).groups, [{ value: null, first: 0, count: 2 }]);
  });

  it('filters by namespace and name substring, and counts every column', () => {
    const w = seed();
    const l = w.layout({ namespace: 'default', name: 'o' });
    assert.deepEqual(
      l.columns.map((c) => c.key),
      ['default/echo-svc', 'default/zoned'],
    );
    assert.equal(l.totalColumns, 3);
    assert.deepEqual(
      w.layout({ name: 'zon' }).columns.map((c) => c.key),
      ['default/zoned'],
    );
  });

  it('keeps the layouts of the last 8 queries, not one per filter ever typed', () => {
    const w = seed();
    const first = w.layout({ name: 'a' });
    assert.equal(w.layout({ name: 'a' }), first);
    for (let i = 0; i < 8; i++) w.layout({ name: `x${i}` });
    assert.notEqual(w.layout({ name: 'a' }), first, 'evicted after 8 newer queries');
    const again = w.layout({ name: 'a' });
    for (let i = 0; i < 7; i++) w.layout({ name: `y${i}` });
    assert.equal(w.layout({ name: 'a' }), again, 'kept while among the last 8');
  });

  it('keeps its version across a heartbeat and changes it on a relabel', () => {
    const w = seed();
    w.drain();
    const v = w.layout({}).version;
    const g = w.generation;
    assert.equal(w.apply('node', 'upsert', nodeObj('edge-1', { unit: 'u1', [ZONE]: 'z1' })), false);
    assert.equal(w.layout({}).version, v);
    assert.equal(w.generation, g);
    assert.equal(w.apply('node', 'upsert', nodeObj('edge-1', { unit: 'u2', [ZONE]: 'z1' })), true);
    assert.notEqual(w.layout({}).version, v);
    assert.deepEqual(w.cells({}, v, [0, 0], [0, 0]), { stale: true, version: w.layout({}).version });
    assert.deepEqual(w.drain(), { generation: w.generation, nodes: ['edge-1'], services: [] });
    assert.equal(w.drain(), undefined);
  });

  it('reports health per node once edge-health answers', () => {
    const w = seed();
    w.setHealth(
      new Map([
        ['edge-1', false],
        ['edge-2', true],
      ]),
    );
    const l = w.layout({});
    assert.deepEqual(
      l.rows.map((r) => r.health),
      ['unhealthy', 'healthy', 'unknown'],
    );
    assert.equal(l.healthConfigured, true);
  });
});

describe('DashboardWorld: cells', () => {
  it('counts every endpoint of the internal decision: all, some, refused, dropped', () => {
    const w = seed();
    const a = fresh(w);
    const grid = a.cells.map((row) => row.map((c) => `${c.kept}/${c.total} ${c.state}`));
    // other/local has no endpoint at all: refused (REJECT), not dropped, Local policy or not.
    assert.deepEqual(grid, [
      ['1/1 all', '1/2 some', '0/0 refused'],
      ['1/1 all', '1/2 some', '0/0 refused'],
      ['0/1 refused', '1/2 some', '0/0 refused'],
    ]);
    assert.deepEqual(a.groups, [
      {
        value: 'u1',
        summary: [
          { all: 2, some: 0, refused: 0, dropped: 0 },
          { all: 0, some: 2, refused: 0, dropped: 0 },
          { all: 0, some: 0, refused: 2, dropped: 0 },
        ],
      },
      {
        value: 'u2',
        summary: [
          { all: 0, some: 0, refused: 1, dropped: 0 },
          { all: 0, some: 1, refused: 0, dropped: 0 },
          { all: 0, some: 0, refused: 1, dropped: 0 },
        ],
      },
    ]);
  });

  it('none is dropped only where the proxy drops: a usable endpoint elsewhere under a Local policy, or kept for external traffic', () => {
    // As kube-proxy's hasEndpoints / hasInternalEndpoints: REJECT when nothing is usable, DROP otherwise.
    const table: {
      name: string;
      svc: SvcOptions & { name: string };
      eps: [string, EpOptions][];
      want: string;
    }[] = [
      {
        name: 'Local, no endpoint',
        svc: { name: 'l0', internalTrafficPolicy: 'Local' },
        eps: [],
        want: 'refused',
      },
      {
        name: 'Local, a ready endpoint on another node',
        svc: { name: 'l1', internalTrafficPolicy: 'Local' },
        eps: [['10.0.5.1', { node: 'edge-1' }]],
        want: 'dropped',
      },
      {
        name: 'Local, only a not-ready endpoint on another node',
        svc: { name: 'l2', internalTrafficPolicy: 'Local' },
        eps: [['10.0.5.2', { node: 'edge-1', ready: false }]],
        want: 'refused',
      },
      {
        name: 'an ordered key matching nothing, external traffic Local with an endpoint elsewhere',
        svc: { name: 'x1', type: 'NodePort', topologyKeys: [ZONE], externalTrafficPolicy: 'Local' },
        eps: [['10.0.5.3', { node: 'edge-1' }]],
        want: 'dropped',
      },
      {
        name: 'an ordered key matching nothing, external traffic under the same rule',
        svc: { name: 'x2', type: 'NodePort', topologyKeys: [ZONE] },
        eps: [['10.0.5.4', { node: 'edge-1' }]],
        want: 'refused',
      },
    ];
    const w = new DashboardWorld();
    w.apply('node', 'upsert', nodeObj('edge-1', { [ZONE]: 'z1' }));
    w.apply('node', 'upsert', nodeObj('edge-9', { [ZONE]: 'z9' }));
    for (const c of table) {
      w.apply('service', 'upsert', svcObj(c.svc));
      if (c.eps.length > 0) w.apply('slice', 'upsert', sliceObj(`${c.svc.name}-a`, c.svc.name, c.eps));
    }
    const l = w.layout({ group: '' });
    const a = fresh(w, { group: '' });
    const row = l.rows.findIndex((r) => r.node === 'edge-9');
    for (const c of table) {
      const col = l.columns.findIndex((x) => x.name === c.svc.name);
      assert.equal(a.cells[row]![col]!.state, c.want, c.name);
      assert.equal(w.explain('edge-9', `default/${c.svc.name}`)!.cell.state, c.want, c.name);
    }
  });

  it('answers a range, clipped to the layout, with the summaries of the groups it touches', () => {
    const a = fresh(seed(), {}, [2, 10], [1, 1]);
    assert.deepEqual(a.rows, [2, 2]);
    assert.deepEqual(a.cols, [1, 1]);
    assert.deepEqual(a.cells, [[{ kept: 1, total: 2, state: 'some' }]]);
    assert.deepEqual(
      a.groups.map((g) => g.value),
      ['u2'],
    );
  });

  it('reads the Endpoints when a Service has no slices, and its slices once it has', () => {
    const w = seed();
    w.apply('endpoints', 'upsert', {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'local', namespace: 'other' },
      subsets: [{ addresses: [{ ip: '10.0.2.1', nodeName: 'edge-3' }], ports: [{ port: 80 }] }],
    } as KObject);
    assert.deepEqual(
      fresh(w).cells.map((r) => r[2]!.state),
      ['dropped', 'dropped', 'all'],
    );
    assert.equal(w.explain('edge-3', 'other/local')!.text.endsWith('Read from: Endpoints, 3 Nodes.'), true);
    const s = sliceObj('local-a', 'local', [['10.0.2.9', { node: 'edge-1' }]]);
    w.apply('slice', 'upsert', { ...s, metadata: { ...s.metadata, namespace: 'other' } });
    assert.deepEqual(
      fresh(w).cells.map((r) => r[2]!.state),
      ['all', 'dropped', 'dropped'],
    );
  });

  it('follows a relabel: the cells the node reads and the cells that read the node', () => {
    const w = seed();
    w.drain();
    w.apply('node', 'upsert', nodeObj('edge-3', { unit: 'u1', [ZONE]: 'z1' }, false));
    const a = fresh(w);
    assert.deepEqual(
      a.cells[2]!.map((c) => c.state),
      ['all', 'some', 'refused'],
    );
    assert.deepEqual(w.drain()?.nodes, ['edge-3']);
  });
});

describe('DashboardWorld: explain and the Service view', () => {
  it('answers what explain answers for the pair, and nothing for an unknown node or Service', () => {
    const w = seed();
    const got = w.explain('edge-2', 'default/zoned')!;
    const slices = [
      sliceObj('zoned-a', 'zoned', [
        ['10.0.1.1', { node: 'edge-1' }],
        ['10.0.1.2', { node: 'edge-2' }],
      ]),
    ];
    const nodes: Record<string, Labels> = {
      'edge-1': { unit: 'u1', [ZONE]: 'z1' },
      'edge-2': { unit: 'u1', [ZONE]: 'z2' },
      'edge-3': { unit: 'u2', [ZONE]: 'z2' },
    };
    const decision = decide({
      service: topologyService(svcObj({ name: 'zoned', topologyKeys: [ZONE] })),
      endpoints: endpointsFromSlices(slices),
      nodeLabels: (n) => nodes[n],
      node: 'edge-2',
    });
    const want = explainReport({
      decision,
      nodeLabels: nodes['edge-2'],
      read: { kind: 'slices', objects: slices },
      nodes: 3,
    });
    assert.equal(JSON.stringify(got.json, null, 2), JSON.stringify(want.json, null, 2));
    assert.equal(got.text, want.text);
    assert.deepEqual(got.cell, { kept: 1, total: 2, state: 'some' });
    assert.equal(w.explain('nope', 'default/zoned'), undefined);
    assert.equal(w.explain('edge-1', 'default/nope'), undefined);
  });

  it('draws the endpoints by unit and node, and the flows from each unit', () => {
    const w = seed();
    w.apply(
      'slice',
      'upsert',
      sliceObj('zoned-b', 'zoned', [
        ['10.0.1.3', { node: 'edge-3' }],
        ['10.0.1.4', {}],
      ]),
    );
    const s = w.service('default/zoned', undefined)!;
    assert.equal(s.groupKey, 'unit');
    assert.match(s.rule, /^ordered topology keys/);
    assert.deepEqual(
      s.units.map((u) => [u.value, u.nodes.map((n) => [n.node, n.endpoints.map((e) => e.address)])]),
      [
        [
          'u1',
          [
            ['edge-1', ['10.0.1.1']],
            ['edge-2', ['10.0.1.2']],
          ],
        ],
        ['u2', [['edge-3', ['10.0.1.3']]]],
      ],
    );
    assert.deepEqual(
      s.unplaced.map((e) => e.address),
      ['10.0.1.4'],
    );
    assert.deepEqual(s.flows, [
      {
        from: 'u1',
        nodes: 2,
        none: 0,
        to: [
          { value: 'u1', nodes: 2 },
          { value: 'u2', nodes: 1 },
        ],
      },
      {
        from: 'u2',
        nodes: 1,
        none: 0,
        to: [
          { value: 'u1', nodes: 1 },
          { value: 'u2', nodes: 1 },
        ],
      },
    ]);
    assert.equal(w.service('default/nope', undefined), undefined);
  });
});

// ------------------------------------------------------------------------------------ property

const NODES = ['n1', 'n2', 'n3', 'n4', 'n5'];
const KEYS = ['unit', ZONE, HOSTNAME_LABEL, NODEPOOL];
const VALUES = ['a', 'b', 'n1'];
const labelsArb = fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), { maxKeys: 4 });
const ruleArb: fc.Arbitrary<SvcOptions> = fc.oneof(
  fc.constant({}),
  fc
    .tuple(fc.shuffledSubarray(KEYS), fc.boolean())
    .map(([k, star]) => ({ topologyKeys: star ? [...k, '*'] : k })),
  fc.shuffledSubarray(KEYS, { minLength: 1 }).map((k) => ({ superedge: k })),
  fc.constantFrom(HOSTNAME_LABEL, 'openyurt.io/nodepool').map((v) => ({ openyurt: v })),
  fc.constant({ internalTrafficPolicy: 'Local' }),
  fc.constant({ trafficDistribution: 'PreferClose' }),
);
// Externally accessible or not: a cell with no endpoint reads the external decision (cell.ts).
const svcArb: fc.Arbitrary<SvcOptions> = fc
  .tuple(ruleArb, fc.constantFrom(undefined, 'Cluster', 'Local'))
  .map(([o, ext]): SvcOptions =>
    ext === undefined ? o : { ...o, type: 'NodePort', externalTrafficPolicy: ext },
  );
const epArb = fc.record(
  {
    node: fc.constantFrom(...NODES, 'ghost'),
    ready: fc.boolean(),
    terminating: fc.boolean(),
    zone: fc.constantFrom(...VALUES),
    forNodes: fc.subarray(NODES),
    forZones: fc.subarray(VALUES),
  },
  { requiredKeys: ['ready'] },
);
const worldArb = fc.record({
  nodes: fc.array(labelsArb, { minLength: 1, maxLength: 5 }),
  services: fc.array(fc.tuple(svcArb, fc.array(epArb, { maxLength: 6 })), { minLength: 1, maxLength: 4 }),
  health: fc.option(fc.dictionary(fc.constantFrom(...NODES), fc.boolean()), { nil: undefined }),
  relabel: fc.tuple(fc.nat(4), labelsArb),
});

describe('DashboardWorld: property', () => {
  it('every cell and group summary equals decide() for the pair, before and after a relabel', () => {
    fc.assert(
      fc.property(worldArb, (c) => {
        const w = new DashboardWorld();
        const labels = new Map<string, Labels>();
        c.nodes.forEach((l, i) => {
          labels.set(NODES[i]!, l);
          w.apply('node', 'upsert', nodeObj(NODES[i]!, l));
        });
        const svcs = c.services.map(([o, eps], i) => {
          const name = `s${i}`;
          const s = svcObj({ ...o, name });
          const sl = sliceObj(
            `${name}-x`,
            name,
            eps.map((e, j) => [`10.0.${i}.${j + 1}`, e]),
          );
          w.apply('service', 'upsert', s);
          w.apply('slice', 'upsert', sl);
          return { service: topologyService(s), endpoints: endpointsFromSlices([sl]) };
        });
        if (c.health !== undefined) w.setHealth(new Map(Object.entries(c.health)));
        const check = () => {
          const l = w.layout({ group: 'unit' });
          const a = fresh(w, { group: 'unit' });
          l.rows.forEach((row, r) =>
            l.columns.forEach((col, ci) => {
              const s = svcs[Number(col.name.slice(1))]!;
              const h = c.health;
              const health = (n: string): boolean | undefined => h?.[n];
              const want = cellOf(
                decide({
                  ...s,
                  nodeLabels: (n) => labels.get(n),
                  node: row.node,
                  ...(h === undefined ? {} : { health }),
                }),
                health,
              );
              assert.deepEqual(a.cells[r]![ci], want, `${row.node} × ${col.key}`);
            }),
          );
          for (const g of a.groups) {
            const rows = a.cells.filter((_, r) => l.rows[r]!.group === g.value);
            g.summary.forEach((s, ci) => {
              for (const state of ['all', 'some', 'refused', 'dropped'] as const)
                assert.equal(s[state], rows.filter((row) => row[ci]!.state === state).length);
            });
          }
        };
        check();
        const [i, l] = c.relabel;
        const name = NODES[i % c.nodes.length]!;
        labels.set(name, l);
        w.apply('node', 'upsert', nodeObj(name, l));
        check();
      }),
      { numRuns: 200 },
    );
  });
});
