// Properties of planEndpointSlices over random Services, pods, nodes and existing slices (the latter made
// the way they are in life: by applying an earlier plan, plus slices nobody here manages).
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { desiredSubsets } from '../endpoints/endpoints.js';
import { ENDPOINTS_POD_VIEW } from '../endpoints/types.js';
import type { Json } from '../patch/merge-patch.js';
import { project } from '../projection/projection.js';
import { planEndpointSlices, type PlanEndpointSlicesInput } from './reconcile.js';
import { FakeSliceAPI, node, pod, service, slice } from './testing/builders.js';
import { LABEL_MANAGED_BY, LABEL_SERVICE_NAME, type EndpointSlice, type Pod } from './types.js';

interface PodSpec {
  readonly ready: boolean;
  readonly terminating: boolean;
  readonly phase: 'Running' | 'Pending' | 'Failed';
  readonly node: string;
  readonly v4: boolean;
  readonly v6: boolean;
  readonly port: 8080 | 9090 | undefined;
  readonly hostname: boolean;
}

const arbPodSpec: fc.Arbitrary<PodSpec> = fc.record({
  ready: fc.boolean(),
  terminating: fc.boolean(),
  phase: fc.constantFrom('Running', 'Running', 'Running', 'Pending', 'Failed'),
  node: fc.constantFrom('node-a', 'node-a', 'node-b', 'node-c', 'node-cp', 'ghost'),
  v4: fc.boolean(),
  v6: fc.boolean(),
  port: fc.constantFrom(8080, 8080, 8080, 9090, undefined),
  hostname: fc.boolean(),
});

/** Mostly ready pods with both IPs on the zoned nodes: where topology hints actually get allocated. */
const arbHealthyPodSpec: fc.Arbitrary<PodSpec> = fc.record({
  ready: fc.constantFrom(true, true, true, true, false),
  terminating: fc.constantFrom(false, false, false, false, true),
  phase: fc.constant('Running'),
  node: fc.constantFrom('node-a', 'node-a', 'node-a', 'node-b', 'node-b', 'node-c'),
  v4: fc.constant(true),
  v6: fc.constant(true),
  port: fc.constantFrom(8080, 8080, 8080, 8080, 9090),
  hostname: fc.boolean(),
});

/** Pods keyed by id: ids are what keep a pod "the same pod" from one generation to the next. */
const arbPods = (spec: fc.Arbitrary<PodSpec>, minKeys: number) =>
  fc.dictionary(fc.integer({ min: 0, max: 400 }).map(String), spec, { minKeys, maxKeys: 60 });

function buildPod(id: string, s: PodSpec): Pod {
  const n = Number(id);
  const ips = [
    ...(s.v4 ? [`10.1.${n >> 8}.${n & 255}`] : []),
    ...(s.v6 ? [`fd00::${(n + 1).toString(16)}`] : []),
  ];
  return pod({
    name: `pod-${id}`,
    ip: ips,
    ready: s.ready,
    terminating: s.terminating,
    phase: s.phase,
    nodeName: s.node,
    containers: [{ name: 'c', ports: s.port === undefined ? [] : [{ name: 'http', containerPort: s.port }] }],
    ...(s.hostname ? { hostname: `h${id}`, subdomain: 'foo' } : {}),
  });
}

const NODES = [
  node('node-a', { zone: 'zone-a', cpu: '2' }),
  node('node-b', { zone: 'zone-b', cpu: '1500m' }),
  node('node-c', { zone: 'zone-c', cpu: '1' }),
  node('node-cp', { zone: 'zone-a', labels: { 'node-role.kubernetes.io/control-plane': '' } }),
];

type Hints = 'none' | 'Auto' | 'PreferClose' | 'PreferSameNode';

interface World {
  readonly families: string[];
  readonly publishNotReady: boolean;
  readonly namedPort: boolean;
  readonly hints: Hints;
  readonly max: number;
  readonly before: Record<string, PodSpec>;
  readonly after: Record<string, PodSpec>;
  readonly labelsBefore: Record<string, string>;
  readonly labelsAfter: Record<string, string>;
}

const arbWorld = (hints: fc.Arbitrary<Hints>, spec = arbPodSpec): fc.Arbitrary<World> =>
  fc.record({
    families: fc.constantFrom(['IPv4'], ['IPv6'], ['IPv4', 'IPv6']),
    publishNotReady: fc.boolean(),
    namedPort: fc.boolean(),
    hints,
    max: fc.integer({ min: 1, max: 12 }),
    before: arbPods(spec, spec === arbPodSpec ? 0 : 12),
    after: arbPods(spec, spec === arbPodSpec ? 0 : 12),
    labelsBefore: fc.constantFrom({}, { tier: 'web' }),
    labelsAfter: fc.constantFrom({}, { tier: 'web' }, { tier: 'api' }),
  });

function serviceOf(w: World, labels: Record<string, string>) {
  return service({
    ipFamilies: w.families,
    publishNotReadyAddresses: w.publishNotReady,
    labels,
    ports: [{ name: 'http', port: 80, targetPort: w.namedPort ? 'http' : 8080, protocol: 'TCP' }],
    ...(w.hints === 'Auto' ? { annotations: { 'service.kubernetes.io/topology-mode': 'Auto' } } : {}),
    ...(w.hints === 'PreferClose' || w.hints === 'PreferSameNode' ? { trafficDistribution: w.hints } : {}),
  });
}

const podsOf = (specs: Record<string, PodSpec>): Pod[] =>
  Object.entries(specs).map(([id, s]) => buildPod(id, s));

/** Slices nobody here manages; they must never be touched. */
const FOREIGN: KObject[] = [
  slice({ name: 'mirror-1', managedBy: 'endpointslicemirroring-controller.k8s.io' }),
  slice({ name: 'bar-1', service: 'bar' }),
];

interface Scenario {
  readonly input: PlanEndpointSlicesInput;
  readonly api: FakeSliceAPI;
}

/** The existing state (an earlier plan applied, plus foreign slices) and the input for the next plan. */
function scenario(w: World): Scenario {
  const api = new FakeSliceAPI();
  const common = { nodes: NODES, maxEndpointsPerSlice: w.max };
  const first = planEndpointSlices({
    ...common,
    service: serviceOf(w, w.labelsBefore),
    pods: podsOf(w.before),
    existing: [],
  });
  const existing = [...FOREIGN, ...api.apply([], first)];
  return {
    api,
    input: { ...common, service: serviceOf(w, w.labelsAfter), pods: podsOf(w.after), existing },
  };
}

const managed = (slices: readonly KObject[]): EndpointSlice[] =>
  slices
    .filter(
      (s) =>
        s.metadata.labels?.[LABEL_SERVICE_NAME] === 'foo' &&
        s.metadata.labels[LABEL_MANAGED_BY] === 'endpointslice-controller.k8s.io',
    )
    .map((s) => s as EndpointSlice);

/** The oracle: pod name → addresses, per address type, for the pods that belong in slices. */
function expected(w: World, addressType: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [id, s] of Object.entries(w.after)) {
    if (s.phase === 'Failed' || (!s.v4 && !s.v6)) continue;
    if (s.node === 'ghost' && !w.publishNotReady) continue;
    const p = buildPod(id, s);
    const ips = (p.status?.podIPs ?? []).map((x) => x.ip ?? '');
    const mine = ips.filter((ip) => ip.includes(':') === (addressType === 'IPv6'));
    if (mine.length > 0) out.set(`pod-${id}`, mine);
  }
  return out;
}

const RUNS = { numRuns: 300 };
const anyHints = fc.constantFrom<Hints>('none', 'Auto', 'PreferClose', 'PreferSameNode');

describe('planEndpointSlices properties', () => {
  it('every desired endpoint appears in exactly one slice of its address type, and nothing else does', () => {
    fc.assert(
      fc.property(arbWorld(anyHints), (w) => {
        const { input, api } = scenario(w);
        const after = managed(api.apply(input.existing, planEndpointSlices(input)));
        for (const addressType of w.families) {
          const found = new Map<string, string[]>();
          for (const s of after.filter((x) => x.addressType === addressType)) {
            for (const e of s.endpoints) {
              const name = e.targetRef?.name ?? '';
              assert.ok(!found.has(name), `${name} appears twice`);
              found.set(name, e.addresses);
            }
          }
          assert.deepEqual(
            [...found].sort(([a], [b]) => a.localeCompare(b)),
            [...expected(w, addressType)].sort(([a], [b]) => a.localeCompare(b)),
          );
        }
        assert.deepEqual([...new Set(after.map((s) => s.addressType))].sort(), [...w.families].sort());
      }),
      RUNS,
    );
  });

  it('no slice it writes exceeds maxEndpointsPerSlice, and every slice is of one address type', () => {
    fc.assert(
      fc.property(arbWorld(anyHints), (w) => {
        const { input } = scenario(w);
        const pl = planEndpointSlices(input);
        for (const s of [...pl.create, ...pl.update]) {
          assert.ok(s.endpoints.length <= w.max, `${s.endpoints.length} > ${w.max}`);
          const v6 = s.addressType === 'IPv6';
          for (const e of s.endpoints) for (const a of e.addresses) assert.equal(a.includes(':'), v6);
        }
      }),
      RUNS,
    );
  });

  it('planning again once the plan is applied writes nothing', () => {
    fc.assert(
      fc.property(arbWorld(anyHints), (w) => {
        const { input, api } = scenario(w);
        const existing = api.apply(input.existing, planEndpointSlices(input));
        const again = planEndpointSlices({ ...input, existing });
        assert.deepEqual([again.create, again.update, again.delete], [[], [], []]);
      }),
      RUNS,
    );
  });

  it('planning again once the plan is applied writes nothing, with topology hints allocated', () => {
    let hinted = 0;
    let redistributed = 0;
    fc.assert(
      fc.property(arbWorld(fc.constant<Hints>('Auto'), arbHealthyPodSpec), (w) => {
        const { input, api } = scenario(w);
        const existing = managed(api.apply(input.existing, planEndpointSlices(input)));
        const endpoints = existing.flatMap((s) => s.endpoints);
        if (endpoints.some((e) => e.hints !== undefined)) hinted++;
        if (
          endpoints.some(
            (e) => e.hints?.forZones?.[0]?.name !== undefined && e.hints.forZones[0].name !== e.zone,
          )
        ) {
          redistributed++;
        }
        const again = planEndpointSlices({ ...input, existing: [...FOREIGN, ...existing] });
        assert.deepEqual([again.create, again.update, again.delete], [[], [], []]);
      }),
      RUNS,
    );
    // The property is only worth something if hints, and moved hints, are common in the runs.
    assert.ok(hinted > RUNS.numRuns / 3, `hints in ${hinted} runs`);
    assert.ok(redistributed > RUNS.numRuns / 10, `redistributed hints in ${redistributed} runs`);
  });

  it('never touches slices it does not manage', () => {
    fc.assert(
      fc.property(arbWorld(anyHints), (w) => {
        const pl = planEndpointSlices(scenario(w).input);
        const names = [...pl.update, ...pl.delete].map((s) => String(s.metadata.name));
        for (const f of FOREIGN) assert.ok(!names.includes(String(f.metadata.name)));
      }),
      RUNS,
    );
  });

  it('gives the same plan whatever the order of pods, nodes and existing slices', () => {
    fc.assert(
      fc.property(arbWorld(anyHints), fc.integer(), (w, seed) => {
        const { input } = scenario(w);
        const shuffle = <T>(xs: readonly T[]): T[] => {
          const out = [...xs];
          let s = seed;
          for (let i = out.length - 1; i > 0; i--) {
            s = (s * 1103515245 + 12345) & 0x7fffffff;
            const j = s % (i + 1);
            [out[i], out[j]] = [out[j]!, out[i]!];
          }
          return out;
        };
        const shuffled = {
          ...input,
          pods: shuffle(input.pods),
          nodes: shuffle(input.nodes),
          existing: shuffle(input.existing),
        };
        assert.deepEqual(planEndpointSlices(shuffled), planEndpointSlices(input));
      }),
      RUNS,
    );
  });

  it('plans the same from pods projected to ENDPOINTS_POD_VIEW (what the informer keeps) as from whole pods', () => {
    fc.assert(
      fc.property(arbWorld(anyHints), (w) => {
        const { input } = scenario(w);
        const whole = input.pods.map(withUnreadFields);
        const projected = whole.map(
          (p) => project(p as unknown as Json, ENDPOINTS_POD_VIEW) as unknown as Pod,
        );
        assert.deepEqual(
          planEndpointSlices({ ...input, pods: projected }),
          planEndpointSlices({ ...input, pods: whole }),
        );
        assert.deepEqual(desiredSubsets(input.service, projected), desiredSubsets(input.service, whole));
      }),
      RUNS,
    );
  });
});

/** The pod with the fields a kubelet and a scheduler add, which no endpoints controller reads. */
function withUnreadFields(p: Pod): Pod {
  const c = structuredClone(p) as unknown as {
    metadata: Record<string, unknown>;
    spec: { containers?: Array<Record<string, unknown>> } & Record<string, unknown>;
    status: Record<string, unknown>;
  };
  c.metadata['managedFields'] = [{ manager: 'kubelet', operation: 'Update' }];
  for (const k of c.spec.containers ?? []) {
    k['image'] = 'registry.k8s.io/pause:3.9';
    k['readinessProbe'] = { httpGet: { path: '/healthz', port: 8080 } };
  }
  c.spec['tolerations'] = [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' }];
  c.spec['restartPolicy'] = 'Always';
  c.status['startTime'] = '2026-11-25T10:00:00Z';
  c.status['hostIP'] = '192.168.0.1';
  c.status['qosClass'] = 'BestEffort';
  c.status['containerStatuses'] = [{ name: 'c', ready: true, restartCount: 0 }];
  return c as unknown as Pod;
}
