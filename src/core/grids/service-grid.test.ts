import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { defaultServiceSpec, prepareServiceUpdate } from '../../api/defaults/service.js';
import {
  GRID_SELECTOR_LABEL,
  GRID_UNIQ_KEY_LABEL,
  TOPOLOGY_KEYS_ANNOTATION,
  clone,
  type Grid,
  type Obj,
} from './objects.js';
import {
  LAST_APPLIED_ANNOTATION,
  desiredService,
  planServiceGrid,
  serviceGridStatus,
  type GridAction,
} from './service-grid.js';

const UID = 'grid-uid';

function grid(
  over: {
    name?: string;
    key?: string;
    template?: Obj;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  } = {},
): Grid {
  return {
    apiVersion: 'superedge.io/v1',
    kind: 'ServiceGrid',
    metadata: {
      name: over.name ?? 'servicegrid-demo',
      namespace: 'default',
      uid: UID,
      generation: 3,
      ...(over.labels === undefined ? {} : { labels: over.labels }),
      ...(over.annotations === undefined ? {} : { annotations: over.annotations }),
    },
    spec: {
      gridUniqKey: over.key ?? 'zone1',
      template: over.template ?? {
        selector: { appGrid: 'echo' },
        ports: [{ protocol: 'TCP', port: 80, targetPort: 8080 }],
      },
    },
  };
}

/** A toy API server: what create and update would store (defaults, allocations, resourceVersion). */
let nextIP = 1;
let nextPort = 30000;
function serverCreate(obj: KObject): KObject {
  const out = clone(obj);
  out.metadata.uid = `svc-${nextIP}`;
  out.metadata.resourceVersion = '1';
  const spec = out['spec'] as Obj;
  defaultServiceSpec(spec);
  allocate(spec);
  return out;
}
function allocate(spec: Obj): void {
  if (spec['type'] !== 'ExternalName') {
    // As kube-apiserver: an IP when none was asked for; families for every cluster IP, None included.
    spec['clusterIP'] ??= `10.96.0.${nextIP++}`;
    spec['clusterIPs'] ??= [spec['clusterIP']];
    spec['ipFamilies'] ??= ['IPv4'];
    spec['ipFamilyPolicy'] ??= 'SingleStack';
  }
  if (spec['type'] === 'NodePort' || spec['type'] === 'LoadBalancer')
    for (const p of (spec['ports'] as Obj[] | undefined) ?? []) p['nodePort'] ??= nextPort++;
}
function serverUpdate(live: KObject, obj: KObject): KObject {
  const out = clone(obj);
  const spec = out['spec'] as Obj;
  prepareServiceUpdate(spec, live['spec'] as Obj);
  defaultServiceSpec(spec);
  allocate(spec);
  out.metadata.resourceVersion = String(Number(live.metadata.resourceVersion ?? '1') + 1);
  return out;
}

/** Applies a plan to a list of Services as the server would. */
function run(services: KObject[], actions: readonly GridAction[]): KObject[] {
  let out = [...services];
  for (const a of actions) {
    if (a.op === 'create') out.push(serverCreate(a.object));
    else if (a.op === 'update')
      out = out.map((s) => (s.metadata.name === a.object.metadata.name ? serverUpdate(s, a.object) : s));
    else if (a.op === 'delete') out = out.filter((s) => s.metadata.uid !== a.uid);
    else out = [...out.filter((s) => s.metadata.uid !== a.uid), serverCreate(a.object)];
  }
  return out;
}

const deepFreeze = <T>(o: T): T => {
  if (typeof o === 'object' && o !== null) {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
};

describe('desiredService', () => {
  it("is SuperEdge's Service: <sg>-svc, the template spec, the grid's labels and annotations plus its own, and a controller reference", () => {
    const g = grid({ labels: { team: 'a' }, annotations: { note: 'x', [LAST_APPLIED_ANNOTATION]: '{}' } });
    const svc = desiredService(g);
    assert.equal(svc.metadata.name, 'servicegrid-demo-svc');
    assert.equal(svc.metadata.namespace, 'default');
    assert.deepEqual(svc.metadata.labels, {
      team: 'a',
      [GRID_SELECTOR_LABEL]: 'servicegrid-demo',
      [GRID_UNIQ_KEY_LABEL]: 'zone1',
    });
    // kubectl's last-applied copy of the grid is not the Service's (kube's controllers skip it too).
    assert.deepEqual(svc.metadata.annotations, { note: 'x', [TOPOLOGY_KEYS_ANNOTATION]: '["zone1"]' });
    assert.deepEqual(svc.metadata.ownerReferences, [
      {
        apiVersion: 'superedge.io/v1',
        kind: 'ServiceGrid',
        name: 'servicegrid-demo',
        uid: UID,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.deepEqual((svc['spec'] as Obj)['selector'], { appGrid: 'echo' });
    assert.deepEqual((svc['spec'] as Obj)['ports'], [{ protocol: 'TCP', port: 80, targetPort: 8080 }]);
  });

  it('leaves out the grid-uniq-key label when the key is not a valid label value, and keeps it in topologyKeys', () => {
    const svc = desiredService(grid({ key: 'topology.kubernetes.io/zone' }));
    assert.equal(svc.metadata.labels?.[GRID_UNIQ_KEY_LABEL], undefined);
    assert.equal(svc.metadata.annotations?.[TOPOLOGY_KEYS_ANNOTATION], '["topology.kubernetes.io/zone"]');
  });
});

describe('planServiceGrid', () => {
  const converged = (g: Grid): KObject[] => run([], planServiceGrid(g, []).actions);

  it('creates the Service when there is none, and plans nothing once it is there', () => {
    const g = grid();
    const plan = planServiceGrid(g, []);
    assert.deepEqual(
      plan.actions.map((a) => a.op),
      ['create'],
    );
    assert.deepEqual(planServiceGrid(g, converged(g)).actions, []);
  });

  type Edit = (spec: Obj, meta: KObject['metadata']) => void;
  const drifts: Array<[string, Edit, boolean]> = [
    ['a port changed', (s) => ((s['ports'] as Obj[])[0]!['port'] = 81), true],
    ['externalIPs added', (s) => (s['externalIPs'] = ['192.0.2.1']), true],
    ['the selector changed', (s) => (s['selector'] = { x: 'y' }), true],
    ['type changed to NodePort', (s) => (s['type'] = 'NodePort'), true],
    ['sessionAffinity changed', (s) => (s['sessionAffinity'] = 'ClientIP'), true],
    ['the grid-selector label removed', (_, m) => delete m.labels![GRID_SELECTOR_LABEL], true],
    [
      'the topologyKeys annotation changed',
      (_, m) => (m.annotations![TOPOLOGY_KEYS_ANNOTATION] = '[]'),
      true,
    ],
    ['a label of its own added', (_, m) => (m.labels!['mine'] = 'yes'), false],
    ['an annotation of its own added', (_, m) => (m.annotations = { ...m.annotations, mine: 'yes' }), false],
    ['a field svcplane does not know (a newer server default)', (s) => (s['futureField'] = 'on'), false],
    ['an empty list where the template has none', (s) => (s['externalIPs'] = []), false],
  ];
  for (const [what, edit, drifted] of drifts) {
    it(`${drifted ? 'puts back' : 'leaves'} a Service with ${what}`, () => {
      const g = grid();
      const [svc] = converged(g);
      const edited = clone(svc!);
      edit(edited['spec'] as Obj, edited.metadata);
      const plan = planServiceGrid(g, [deepFreeze(edited)]);
      assert.deepEqual(
        plan.actions.map((a) => a.op),
        drifted ? ['update'] : [],
      );
      if (drifted) assert.deepEqual(planServiceGrid(g, run([edited], plan.actions)).actions, []);
    });
  }

  it('keeps the allocated clusterIP, IP families and node ports when the template leaves them unset', () => {
    const g = grid({
      template: {
        type: 'NodePort',
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 90 },
        ],
      },
    });
    const [svc] = converged(g);
    const spec = svc!['spec'] as Obj;
    const want = planServiceGrid(g, [svc!]);
    assert.deepEqual(want.actions, []);
    // A template change: port b moves to 91 and keeps its node port by name; a new port gets none yet.
    const g2 = grid({
      template: {
        type: 'NodePort',
        ports: [
          { name: 'a', port: 80 },
          { name: 'b', port: 91 },
          { name: 'c', port: 99 },
        ],
      },
    });
    const plan = planServiceGrid(g2, [svc!]);
    assert.equal(plan.actions.length, 1);
    const a = plan.actions[0]!;
    assert.ok(a.op === 'update');
    const sent = a.object['spec'] as Obj;
    assert.equal(sent['clusterIP'], spec['clusterIP']);
    assert.deepEqual(sent['ipFamilies'], ['IPv4']);
    const ports = sent['ports'] as Obj[];
    const old = spec['ports'] as Obj[];
    assert.equal(ports[0]!['nodePort'], old[0]!['nodePort']);
    assert.equal(ports[1]!['nodePort'], old[1]!['nodePort']);
    assert.equal(ports[2]!['nodePort'], undefined);
    assert.equal(
      a.object.metadata.resourceVersion,
      svc!.metadata.resourceVersion,
      'compare-and-swap on the live version',
    );
  });

  it('drops node ports when the template goes back to ClusterIP', () => {
    const g = grid({ template: { type: 'NodePort', ports: [{ port: 80 }] } });
    const [svc] = converged(g);
    const plan = planServiceGrid(grid({ template: { ports: [{ port: 80 }] } }), [svc!]);
    const a = plan.actions[0]!;
    assert.ok(a.op === 'update');
    assert.equal(((a.object['spec'] as Obj)['ports'] as Obj[])[0]!['nodePort'], undefined);
    assert.equal((a.object['spec'] as Obj)['type'], 'ClusterIP');
  });

  it('recreates the Service when the template asks for a different clusterIP (immutable in place)', () => {
    const g = grid();
    const [svc] = converged(g);
    const plan = planServiceGrid(grid({ template: { clusterIP: 'None', ports: [{ port: 80 }] } }), [svc!]);
    assert.deepEqual(
      plan.actions.map((a) => a.op),
      ['recreate'],
    );
    const a = plan.actions[0]!;
    assert.ok(a.op === 'recreate');
    assert.equal(a.uid, svc!.metadata.uid);
  });

  it('recreates a headless Service whose template no longer says None, and keeps a fixed IP in sync', () => {
    const headless = grid({ template: { clusterIP: 'None', ports: [{ port: 80 }] } });
    const [svc] = converged(headless);
    const live = clone(svc!);
    Object.assign(live['spec'] as Obj, { ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' });
    assert.equal((live['spec'] as Obj)['clusterIP'], 'None');
    assert.deepEqual(planServiceGrid(headless, [live]).actions, [], "the allocator's families are not drift");
    const plan = planServiceGrid(grid({ template: { ports: [{ port: 80 }] } }), [live]);
    assert.deepEqual(
      plan.actions.map((a) => a.op),
      ['recreate'],
    );
    const fixed = grid({ template: { clusterIP: '10.96.200.200', ports: [{ port: 80 }] } });
    const [f] = converged(fixed);
    Object.assign(f!['spec'] as Obj, { ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack' });
    assert.deepEqual(planServiceGrid(fixed, [f!]).actions, []);
  });

  it('adopts an unowned <sg>-svc, deletes other Services it controls, and leaves the ones it does not', () => {
    const g = grid();
    const orphan: KObject = {
      metadata: { name: 'servicegrid-demo-svc', namespace: 'default', uid: 'o', resourceVersion: '5' },
      spec: { ports: [{ port: 1 }] },
    };
    const ref = {
      apiVersion: 'superedge.io/v1',
      kind: 'ServiceGrid',
      name: 'servicegrid-demo',
      uid: UID,
      controller: true,
    };
    const stray: KObject = {
      metadata: {
        name: 'stray',
        namespace: 'default',
        uid: 's',
        labels: { [GRID_SELECTOR_LABEL]: 'servicegrid-demo' },
        ownerReferences: [ref],
      },
    };
    const loose: KObject = {
      metadata: {
        name: 'loose',
        namespace: 'default',
        uid: 'l',
        labels: { [GRID_SELECTOR_LABEL]: 'servicegrid-demo' },
      },
    };
    const oldGrid: KObject = {
      metadata: {
        name: 'old',
        namespace: 'default',
        uid: 'x',
        ownerReferences: [{ ...ref, uid: 'a-previous-grid' }],
      },
    };
    const plan = planServiceGrid(g, deepFreeze([orphan, stray, loose, oldGrid]));
    assert.deepEqual(
      plan.actions.map((a) => [
        a.op,
        a.op === 'delete' ? a.name : a.object.metadata.name,
        a.op === 'update' ? a.adopt : undefined,
      ]),
      [
        ['update', 'servicegrid-demo-svc', true],
        ['delete', 'stray', undefined],
      ],
    );
    const adopted = plan.actions[0]!;
    assert.ok(adopted.op === 'update');
    assert.deepEqual(
      adopted.object.metadata.ownerReferences?.map((r) => r.uid),
      [UID],
    );
  });

  it('leaves a <sg>-svc another controller owns alone and reports it', () => {
    const other: KObject = {
      metadata: {
        name: 'servicegrid-demo-svc',
        namespace: 'default',
        uid: 'o',
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: 'u', controller: true }],
      },
    };
    const plan = planServiceGrid(grid(), [other]);
    assert.deepEqual(plan.actions, []);
    assert.match(plan.conflict ?? '', /controlled by ConfigMap cm/);
    const status = serviceGridStatus(grid(), plan, { service: other, failures: [] }, 'T');
    const ready = (status['conditions'] as Obj[]).find((c) => c['type'] === 'Ready');
    assert.equal(ready?.['status'], 'False');
    assert.equal(ready?.['reason'], 'OwnedByAnotherController');
  });

  it('does nothing for an empty key or a name whose Service name is invalid, and says why', () => {
    assert.equal(planServiceGrid(grid({ key: '' }), []).problem?.eventReason, 'Empty');
    const long = planServiceGrid(grid({ name: 'a'.repeat(60) }), []);
    assert.equal(long.problem?.reason, 'InvalidName');
    assert.deepEqual(long.actions, []);
    assert.equal(planServiceGrid(grid({ name: '1abc' }), []).problem?.reason, 'InvalidName');
  });

  it('waits while its Service is being deleted, and does nothing for a grid being deleted', () => {
    const g = grid();
    const [svc] = converged(g);
    const going = { ...svc!, metadata: { ...svc!.metadata, deletionTimestamp: 'T' } };
    assert.deepEqual(planServiceGrid(grid({ template: { ports: [{ port: 9 }] } }), [going]).actions, []);
    assert.deepEqual(
      planServiceGrid({ ...g, metadata: { ...g.metadata, deletionTimestamp: 'T' } }, []).actions,
      [],
    );
  });

  it('reconciling a reconciled state plans nothing, and any drift is undone by one update (property)', () => {
    const port = fc.record({
      name: fc.constantFrom('a', 'b', 'c'),
      port: fc.integer({ min: 1, max: 65535 }),
      protocol: fc.constantFrom('TCP', 'UDP'),
    });
    const template = fc.record(
      {
        type: fc.constantFrom('ClusterIP', 'NodePort', 'LoadBalancer'),
        // Valid port lists: unique names, and unique port/protocol pairs.
        ports: fc
          .uniqueArray(port, { minLength: 1, maxLength: 3, selector: (p) => `${p.port}/${p.protocol}` })
          .map((ps) => ps.map((p, i) => ({ ...p, name: `p${i}` }))),
        clusterIP: fc.constantFrom('None', '10.96.200.200'),
        selector: fc.dictionary(fc.constantFrom('app', 'tier'), fc.constantFrom('x', 'y')),
        sessionAffinity: fc.constantFrom('None', 'ClientIP'),
        externalTrafficPolicy: fc.constantFrom('Cluster', 'Local'),
        publishNotReadyAddresses: fc.boolean(),
      },
      { requiredKeys: ['ports'] },
    );
    const drift = fc.constantFrom<Edit>(
      (s) => (s['selector'] = { other: 'z' }),
      (s) => (s['ports'] = [{ name: 'zz', port: 1, protocol: 'TCP', targetPort: 1 }]),
      (s) => (s['publishNotReadyAddresses'] = true),
      (s) => (s['type'] = 'ClusterIP'),
      (_, m) => (m.labels = {}),
    );
    fc.assert(
      fc.property(template, template, drift, (t1, t2, edit) => {
        for (const t of [t1, t2]) {
          // externalTrafficPolicy is valid only on externally reachable Services, None only on ClusterIP ones.
          if (t.type === undefined || t.type === 'ClusterIP') delete t.externalTrafficPolicy;
          else if (t.clusterIP === 'None') delete t.clusterIP;
        }
        const g1 = grid({ template: t1 });
        const first = converged(g1);
        assert.deepEqual(planServiceGrid(g1, first).actions, []);
        const edited = clone(first[0]!);
        edit(edited['spec'] as Obj, edited.metadata);
        const healed = run([edited], planServiceGrid(g1, [edited]).actions);
        assert.deepEqual(planServiceGrid(g1, healed).actions, []);
        // A template change reaches the Service with one write, keeping its cluster IP.
        const g2 = grid({ template: t2 });
        const plan = planServiceGrid(g2, healed);
        assert.ok(plan.actions.length <= 1);
        const after = run(healed, plan.actions);
        assert.deepEqual(planServiceGrid(g2, after).actions, []);
        const ip = (svc: KObject): unknown => (svc['spec'] as Obj)['clusterIP'];
        if (t2.clusterIP !== undefined) assert.equal(ip(after[0]!), t2.clusterIP);
        else if (ip(healed[0]!) !== 'None')
          assert.equal(ip(after[0]!), ip(healed[0]!), 'the allocated IP stays');
        else assert.notEqual(ip(after[0]!), 'None', 'a template without clusterIP is not headless');
      }),
      { numRuns: 300 },
    );
  });
});

describe('serviceGridStatus', () => {
  it('says Ready with the Service and its load balancer, and keeps lastTransitionTime while nothing changes', () => {
    const g = grid();
    const [svc] = converged0(g);
    const withLB = { ...svc!, status: { loadBalancer: { ingress: [{ ip: '192.0.2.9' }] } } };
    const plan = planServiceGrid(g, [withLB]);
    const s1 = serviceGridStatus(g, plan, { service: withLB, failures: [] }, 'T1');
    assert.equal(s1['service'], 'servicegrid-demo-svc');
    assert.equal(s1['observedGeneration'], 3);
    assert.deepEqual(s1['loadBalancer'], { ingress: [{ ip: '192.0.2.9' }] });
    assert.deepEqual(s1['conditions'], [
      {
        type: 'Ready',
        status: 'True',
        observedGeneration: 3,
        lastTransitionTime: 'T1',
        reason: 'ServiceReady',
        message: 'Service servicegrid-demo-svc matches the template',
      },
    ]);
    const s2 = serviceGridStatus({ ...g, status: s1 }, plan, { service: withLB, failures: [] }, 'T2');
    assert.deepEqual(s2, s1);
  });

  it('reports a failed write as its own condition and Ready=False, and clears it once the write works', () => {
    const g = grid();
    const plan = planServiceGrid(g, []);
    const failed = serviceGridStatus(
      g,
      plan,
      { failures: [{ type: 'CreateError', message: 'quota' }] },
      'T1',
    );
    const types = (failed['conditions'] as Obj[]).map((c) => [c['type'], c['status'], c['reason']]);
    assert.deepEqual(types, [
      ['CreateError', 'True', 'CreateError'],
      ['Ready', 'False', 'CreateError'],
    ]);
    const [svc] = converged0(g);
    const ok = serviceGridStatus({ ...g, status: failed }, plan, { service: svc!, failures: [] }, 'T2');
    assert.deepEqual(
      (ok['conditions'] as Obj[]).map((c) => c['type']),
      ['Ready'],
    );
  });
});

function converged0(g: Grid): KObject[] {
  return run([], planServiceGrid(g, []).actions);
}
