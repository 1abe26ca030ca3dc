// The EndpointSlice controller end to end: real kubectl against `svcplane up` (the endpoints,
// endpointslice and garbagecollector controllers run in-process). Nodes get their zone from a label and
// their allocatable CPU and readiness through the status subresource; pods get their IPs and readiness
// the same way (svcplane has no kubelet), as a user would set them. The tests of one namespace build on
// each other, so they run in order.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { kubectlFor, writeYaml, type Kubectl } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-eps-'));
after(() => rmSync(work, { recursive: true, force: true }));

const SERVICE_NAME = 'kubernetes.io/service-name';
const MANAGED_BY = 'endpointslice.kubernetes.io/managed-by';
const CONTROLLER = 'endpointslice-controller.k8s.io';
const HEADLESS = 'service.kubernetes.io/headless';
const ZONE_LABEL = 'topology.kubernetes.io/zone';
const TOPOLOGY_MODE = 'service.kubernetes.io/topology-mode';
const ZONE_OF: Readonly<Record<string, string>> = {
  'node-a': 'zone-a',
  'node-b': 'zone-b',
  'node-c': 'zone-c',
};
const NODES = Object.keys(ZONE_OF);

interface Meta {
  name: string;
  namespace?: string;
  uid: string;
  resourceVersion: string;
  generateName?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: Record<string, unknown>[];
}

interface SliceEndpoint {
  addresses: string[];
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
  nodeName?: string;
  zone?: string;
  targetRef?: Record<string, string>;
  hints?: { forZones?: { name: string }[]; forNodes?: { name: string }[] };
}

interface Slice {
  kind: 'EndpointSlice';
  metadata: Meta;
  addressType: string;
  endpoints?: SliceEndpoint[] | null;
  ports?: { name?: string; port?: number; protocol?: string }[] | null;
}

interface EndpointAddress {
  ip: string;
  nodeName?: string;
  targetRef?: Record<string, string>;
}

interface Endpoints {
  kind: 'Endpoints';
  metadata: Meta;
  subsets?: {
    addresses?: EndpointAddress[];
    notReadyAddresses?: EndpointAddress[];
    ports?: { name?: string; port: number; protocol?: string }[];
  }[];
}

interface KEvent {
  type: string;
  reason: string;
  message: string;
  involvedObject: { kind: string; name: string; uid?: string };
}

let srv: TestServer;
let kubectl: Kubectl;
let heartbeats: NodeJS.Timeout | undefined;

/**
 * What the nodes' kubelets would do: a Lease in kube-node-lease renewed every 5 s. Without it the node
 * lifecycle controller marks these hand-made nodes Unknown after 40 s (as kube-controller-manager
 * would), their pods not ready, and topology hints off.
 */
async function renewNodeLeases(server: TestServer, nodes: readonly string[]): Promise<NodeJS.Timeout> {
  const path = '/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases';
  for (const name of nodes) {
    const r = await call(server, 'POST', path, {
      body: {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name },
        spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: new Date().toISOString() },
      },
    });
    assert.equal(r.status, 201, r.text);
  }
  const renew = (): void => {
    for (const name of nodes)
      void call(server, 'PATCH', `${path}/${name}`, {
        contentType: 'application/merge-patch+json',
        body: { spec: { renewTime: new Date().toISOString() } },
      }).catch(() => undefined);
  };
  return setInterval(renew, 5_000);
}
let files = 0;

/** `kubectl apply -f FILE` of the objects, written as one multi-document YAML file. */
async function apply(docs: readonly unknown[]): Promise<void> {
  await kubectl(['apply', '-f', writeYaml(work, `apply-${files++}.yaml`, docs)]);
}

const namespace = (name: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name },
});

const node = (name: string, zone: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Node',
  metadata: { name, labels: { [ZONE_LABEL]: zone } },
});

/** What a kubelet would report for a node: Ready, with the allocatable CPU when given. */
const setNodeStatus = (name: string, cpu: string | undefined): Promise<string> =>
  kubectl([
    'patch',
    'node',
    name,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify({
      status: {
        ...(cpu === undefined ? {} : { allocatable: { cpu, pods: '110' }, capacity: { cpu, pods: '110' } }),
        conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady' }],
      },
    }),
  ]);

const pod = (
  ns: string,
  name: string,
  labels: Record<string, string>,
  nodeName: string,
  finalizers?: string[],
): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: ns, labels, ...(finalizers === undefined ? {} : { finalizers }) },
  spec: {
    nodeName,
    containers: [
      { name: 'app', image: 'registry.example/app:1', ports: [{ name: 'http', containerPort: 8080 }] },
    ],
  },
});

const service = (
  ns: string,
  name: string,
  spec: Record<string, unknown>,
  meta: Record<string, unknown> = {},
): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: ns, ...meta },
  spec: { ports: [{ name: 'web', port: 80, targetPort: 'http' }], ...spec },
});

/** What a kubelet would report for a pod: Running with one IP, Ready or not. */
const podStatus = (ip: string, ready: boolean): Record<string, unknown> => ({
  status: {
    phase: 'Running',
    podIP: ip,
    podIPs: [{ ip }],
    conditions: [
      {
        type: 'Ready',
        status: ready ? 'True' : 'False',
        lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      },
    ],
  },
});

/** The pod's status through `kubectl patch --subresource=status`. */
const setPodStatus = (ns: string, name: string, ip: string, ready: boolean): Promise<string> =>
  kubectl([
    'patch',
    'pod',
    name,
    '-n',
    ns,
    '--subresource=status',
    '--type=merge',
    '-p',
    JSON.stringify(podStatus(ip, ready)),
  ]);

/** The same over HTTPS with the kubeconfig's token and CA: for many pods at once. */
async function setPodStatuses(ns: string, pods: readonly (readonly [string, string])[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < pods.length) {
      const [name, ip] = pods[next++]!;
      const r = await call(srv, 'PATCH', `/api/v1/namespaces/${ns}/pods/${name}/status`, {
        contentType: 'application/merge-patch+json',
        body: podStatus(ip, true),
      });
      assert.equal(r.status, 200, r.text);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

const getJson = async <T>(args: string[]): Promise<T> => JSON.parse(await kubectl(args)) as T;

/** The managed-or-not slices labelled with the Service's name, sorted by name. */
async function slicesOf(ns: string, svc: string): Promise<Slice[]> {
  const list = await getJson<{ items: Slice[] }>([
    'get',
    'endpointslices',
    '-n',
    ns,
    '-l',
    `${SERVICE_NAME}=${svc}`,
    '-o',
    'json',
  ]);
  return list.items.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
}

async function endpointsOf(ns: string, svc: string): Promise<Endpoints | undefined> {
  const out = await kubectl(['get', 'endpoints', svc, '-n', ns, '--ignore-not-found', '-o', 'json']);
  return out.trim() === '' ? undefined : (JSON.parse(out) as Endpoints);
}

async function eventsOf(ns: string, svc: string): Promise<KEvent[]> {
  const list = await getJson<{ items: KEvent[] }>([
    'get',
    'events',
    '-n',
    ns,
    '--field-selector',
    `involvedObject.name=${svc}`,
    '-o',
    'json',
  ]);
  return list.items;
}

const endpointsIn = (slices: readonly Slice[]): SliceEndpoint[] => slices.flatMap((s) => s.endpoints ?? []);
const byIP = (slices: readonly Slice[]): Map<string, SliceEndpoint> =>
  new Map(endpointsIn(slices).map((e) => [e.addresses[0]!, e]));
const ipsOf = (ep: Endpoints, which: 'addresses' | 'notReadyAddresses'): string[] =>
  (ep.subsets ?? []).flatMap((s) => (s[which] ?? []).map((a) => a.ip)).sort();
const sorted = (xs: readonly string[]): string[] => [...xs].sort();

const ownZoneHints = (e: SliceEndpoint): boolean =>
  JSON.stringify(e.hints) === JSON.stringify({ forZones: [{ name: ZONE_OF[e.nodeName ?? '']! }] });
const hasEvent = (events: readonly KEvent[], type: string, reason: string, message: string): boolean =>
  events.some((e) => e.type === type && e.reason === reason && e.message === message);

describe('EndpointSlice controller: kubectl against svcplane up', () => {
  before(async () => {
    srv = await startUp();
    kubectl = kubectlFor(srv, work);
    await apply(NODES.map((n) => node(n, ZONE_OF[n]!)));
    await Promise.all(NODES.map((n) => setNodeStatus(n, '4')));
    heartbeats = await renewNodeLeases(srv, NODES);
  });
  after(async () => {
    clearInterval(heartbeats);
    await srv?.destroy();
  });

  // ---- namespace "shop": three pods in three zones behind "web" -----------------------------------------

  const WEB_IPS: Readonly<Record<string, string>> = {
    'web-a': '10.1.0.1',
    'web-b': '10.1.0.2',
    'web-c': '10.1.0.3',
  };

  it('publishes one IPv4 slice with labels, owner, resolved port and per-pod endpoints; the Endpoints agree', async () => {
    await apply([
      namespace('shop'),
      pod('shop', 'web-a', { app: 'web' }, 'node-a'),
      pod('shop', 'web-b', { app: 'web' }, 'node-b'),
      pod('shop', 'web-c', { app: 'web' }, 'node-c'),
      pod('shop', 'db', { app: 'db' }, 'node-a'),
      service('shop', 'web', { selector: { app: 'web' } }, { labels: { team: 'shop' } }),
    ]);
    await Promise.all([
      ...Object.entries(WEB_IPS).map(([name, ip]) => setPodStatus('shop', name, ip, true)),
      setPodStatus('shop', 'db', '10.1.0.9', true),
    ]);
    const { slices, ep } = await until('the slice and the Endpoints of web', 15_000, async () => {
      const list = parseYaml(
        await kubectl(['get', 'endpoints,endpointslices', '-n', 'shop', '-o', 'yaml']),
      ) as {
        items: (Slice | Endpoints)[];
      };
      const slices = list.items.filter(
        (o): o is Slice => o.kind === 'EndpointSlice' && o.metadata.labels?.[SERVICE_NAME] === 'web',
      );
      const ep = list.items.find((o): o is Endpoints => o.kind === 'Endpoints' && o.metadata.name === 'web');
      const ready = endpointsIn(slices).filter((e) => e.conditions?.ready === true);
      return ready.length === 3 && ep !== undefined && ipsOf(ep, 'addresses').length === 3
        ? { slices, ep }
        : undefined;
    });
    const svc = await getJson<{ metadata: Meta }>(['get', 'service', 'web', '-n', 'shop', '-o', 'json']);
    const pods = await getJson<{ items: { metadata: Meta }[] }>(['get', 'pods', '-n', 'shop', '-o', 'json']);
    const uidOf = new Map(pods.items.map((p) => [p.metadata.name, p.metadata.uid]));

    assert.equal(slices.length, 1, 'one slice');
    const slice = slices[0]!;
    assert.equal(slice.addressType, 'IPv4');
    assert.equal(slice.metadata.generateName, 'web-');
    assert.match(slice.metadata.name, /^web-[a-z0-9]{5}$/);
    assert.deepEqual(slice.metadata.labels, {
      team: 'shop',
      [SERVICE_NAME]: 'web',
      [MANAGED_BY]: CONTROLLER,
    });
    assert.deepEqual(slice.metadata.ownerReferences, [
      {
        apiVersion: 'v1',
        kind: 'Service',
        name: 'web',
        uid: svc.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.ok(
      slice.metadata.annotations?.['endpoints.kubernetes.io/last-change-trigger-time'],
      'the last-change-trigger-time annotation',
    );
    assert.deepEqual(slice.ports, [{ name: 'web', port: 8080, protocol: 'TCP' }]);
    const want = Object.entries(WEB_IPS).map(([name, ip]) => ({
      addresses: [ip],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: `node-${name.slice(-1)}`,
      zone: `zone-${name.slice(-1)}`,
      targetRef: { kind: 'Pod', namespace: 'shop', name, uid: uidOf.get(name)! },
    }));
    assert.deepEqual(
      [...(slice.endpoints ?? [])].sort((a, b) => (a.addresses[0]! < b.addresses[0]! ? -1 : 1)),
      want,
    );

    assert.deepEqual(ipsOf(ep, 'addresses'), sorted(Object.values(WEB_IPS)));
    assert.deepEqual(ipsOf(ep, 'notReadyAddresses'), []);
    assert.deepEqual(ep.subsets?.[0]?.ports, [{ name: 'web', port: 8080, protocol: 'TCP' }]);
    for (const a of ep.subsets![0]!.addresses!) {
      const e = want.find((w) => w.addresses[0] === a.ip)!;
      assert.equal(a.nodeName, e.nodeName);
      assert.equal(a.targetRef?.['name'], e.targetRef.name);
      assert.equal(a.targetRef?.['uid'], e.targetRef.uid);
    }
  });

  it('a pod turning not Ready is ready:false serving:false in the slice and not ready in the Endpoints; and back', async () => {
    const [before] = await slicesOf('shop', 'web');
    await setPodStatus('shop', 'web-b', WEB_IPS['web-b']!, false);
    const [slice, ep] = await until('web-b not ready', 15_000, async () => {
      const [slices, ep] = await Promise.all([slicesOf('shop', 'web'), endpointsOf('shop', 'web')]);
      const e = byIP(slices).get(WEB_IPS['web-b']!);
      return e?.conditions?.ready === false && ep !== undefined && ipsOf(ep, 'notReadyAddresses').length === 1
        ? ([slices, ep] as const)
        : undefined;
    });
    assert.deepEqual(byIP(slice).get(WEB_IPS['web-b']!)!.conditions, {
      ready: false,
      serving: false,
      terminating: false,
    });
    assert.deepEqual(
      slice.map((s) => s.metadata.name),
      [before!.metadata.name],
      'the slice is updated in place',
    );
    assert.deepEqual(ipsOf(ep, 'notReadyAddresses'), [WEB_IPS['web-b']]);
    assert.deepEqual(ipsOf(ep, 'addresses'), sorted([WEB_IPS['web-a']!, WEB_IPS['web-c']!]));

    await setPodStatus('shop', 'web-b', WEB_IPS['web-b']!, true);
    await until('web-b ready again', 15_000, async () => {
      const [slices, ep] = await Promise.all([slicesOf('shop', 'web'), endpointsOf('shop', 'web')]);
      const e = byIP(slices).get(WEB_IPS['web-b']!);
      return (
        JSON.stringify(e?.conditions) ===
          JSON.stringify({ ready: true, serving: true, terminating: false }) &&
        ep !== undefined &&
        ipsOf(ep, 'addresses').length === 3
      );
    });
  });

  it('a pod being deleted is terminating:true ready:false in the slice and gone from the Endpoints', async () => {
    const ip = '10.1.0.4';
    await apply([pod('shop', 'web-t', { app: 'web' }, 'node-c', ['svcplane.test/hold'])]);
    await setPodStatus('shop', 'web-t', ip, true);
    await until('web-t ready', 15_000, async () => {
      const [slices, ep] = await Promise.all([slicesOf('shop', 'web'), endpointsOf('shop', 'web')]);
      return (
        byIP(slices).get(ip)?.conditions?.ready === true &&
        ep !== undefined &&
        ipsOf(ep, 'addresses').includes(ip)
      );
    });
    // Grace 0: the finalizer alone holds the pod, so that it goes with the finalizer (a pod bound to a
    // node and deleted gracefully would wait for its kubelet's confirmation too).
    await kubectl(['delete', 'pod', 'web-t', '-n', 'shop', '--grace-period=0', '--force', '--wait=false']);
    const [slices, ep] = await until('web-t terminating', 15_000, async () => {
      const [slices, ep] = await Promise.all([slicesOf('shop', 'web'), endpointsOf('shop', 'web')]);
      return byIP(slices).get(ip)?.conditions?.terminating === true &&
        ep !== undefined &&
        !ipsOf(ep, 'addresses').includes(ip)
        ? ([slices, ep] as const)
        : undefined;
    });
    assert.deepEqual(byIP(slices).get(ip)!.conditions, { ready: false, serving: true, terminating: true });
    assert.equal(endpointsIn(slices).length, 4);
    assert.ok(!ipsOf(ep, 'notReadyAddresses').includes(ip), 'not in notReadyAddresses either');
    assert.deepEqual(ipsOf(ep, 'addresses'), sorted(Object.values(WEB_IPS)));

    // The finalizer goes: so does the pod, and its endpoint.
    await kubectl([
      'patch',
      'pod',
      'web-t',
      '-n',
      'shop',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/metadata/finalizers"}]',
    ]);
    await until('web-t gone from the slice', 15_000, async () => {
      const ips = [...byIP(await slicesOf('shop', 'web')).keys()];
      return ips.length === 3 && !ips.includes(ip);
    });
  });

  it('the slices of a headless Service carry the service.kubernetes.io/headless label', async () => {
    await apply([service('shop', 'web-headless', { clusterIP: 'None', selector: { app: 'web' } })]);
    const slices = await until('the headless slice', 15_000, async () => {
      const s = await slicesOf('shop', 'web-headless');
      return endpointsIn(s).length === 3 ? s : undefined;
    });
    assert.deepEqual(
      slices.map((s) => s.addressType),
      ['IPv4'],
    );
    assert.deepEqual(slices[0]!.metadata.labels, {
      [HEADLESS]: '',
      [SERVICE_NAME]: 'web-headless',
      [MANAGED_BY]: CONTROLLER,
    });
    assert.deepEqual(slices[0]!.ports, [{ name: 'web', port: 8080, protocol: 'TCP' }]);
  });

  it('a managed slice deleted by hand is recreated; one edited by hand is put back', async () => {
    const [old] = await slicesOf('shop', 'web');
    await kubectl(['delete', 'endpointslice', old!.metadata.name, '-n', 'shop']);
    const [fresh] = await until('a new slice for web', 15_000, async () => {
      const s = await slicesOf('shop', 'web');
      return s.length === 1 && s[0]!.metadata.name !== old!.metadata.name && endpointsIn(s).length === 3
        ? s
        : undefined;
    });
    assert.equal(fresh!.metadata.generateName, 'web-');
    assert.deepEqual(fresh!.metadata.labels, old!.metadata.labels);
    assert.deepEqual(fresh!.ports, old!.ports);
    assert.deepEqual(sorted([...byIP([fresh!]).keys()]), sorted(Object.values(WEB_IPS)));
    const name = fresh!.metadata.name;

    // A label of one's own on the slice: the controller removes it.
    await kubectl(['label', 'endpointslice', name, '-n', 'shop', 'edited-by=hand']);
    await until('the label to go', 15_000, async () => {
      const [s] = await slicesOf('shop', 'web');
      return s !== undefined && s.metadata.labels?.['edited-by'] === undefined;
    });

    // An endpoint flipped to not ready and another one dropped: the controller writes them back.
    await kubectl([
      'patch',
      'endpointslice',
      name,
      '-n',
      'shop',
      '--type=json',
      '-p',
      JSON.stringify([
        { op: 'replace', path: '/endpoints/0/conditions/ready', value: false },
        { op: 'remove', path: '/endpoints/1' },
      ]),
    ]);
    const [restored] = await until('the slice put back', 15_000, async () => {
      const s = await slicesOf('shop', 'web');
      const e = endpointsIn(s);
      return e.length === 3 && e.every((x) => x.conditions?.ready === true) ? s : undefined;
    });
    assert.equal(restored!.metadata.name, name, 'the same slice, updated');
    assert.deepEqual(sorted([...byIP([restored!]).keys()]), sorted(Object.values(WEB_IPS)));
  });

  it('deleting the Service removes its slices (garbage collector) and its Endpoints', async () => {
    await kubectl(['delete', 'service', 'web', '-n', 'shop']);
    await until('the slices and Endpoints of web to go', 15_000, async () => {
      const [slices, ep] = await Promise.all([slicesOf('shop', 'web'), endpointsOf('shop', 'web')]);
      return slices.length === 0 && ep === undefined;
    });
    assert.equal((await slicesOf('shop', 'web-headless')).length, 1, "another Service's slice stays");
  });

  it('no matching pod: one placeholder slice; ExternalName and selectorless Services: no managed slice', async () => {
    const userSlice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'manual-1',
        namespace: 'shop',
        labels: { [SERVICE_NAME]: 'manual', [MANAGED_BY]: 'staff.example.com' },
      },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['192.0.2.10'] }],
      ports: [{ name: '', port: 80, protocol: 'TCP' }],
    };
    await apply([
      service('shop', 'ext', { type: 'ExternalName', externalName: 'db.example.com', ports: [{ port: 80 }] }),
      service('shop', 'manual', { ports: [{ port: 80 }] }),
      userSlice,
      // Last: by the time its placeholder exists, the Services above have been synced.
      service('shop', 'lonely', { selector: { app: 'nobody' } }),
    ]);
    const [placeholder, ...more] = await until('the placeholder slice', 15_000, async () => {
      const s = await slicesOf('shop', 'lonely');
      return s.length > 0 ? s : undefined;
    });
    assert.equal(more.length, 0, 'one placeholder');
    assert.equal(placeholder!.addressType, 'IPv4');
    assert.deepEqual(placeholder!.endpoints ?? [], [], 'no endpoints');
    assert.deepEqual(placeholder!.ports ?? [], [], 'no ports');
    assert.equal(placeholder!.metadata.labels?.[MANAGED_BY], CONTROLLER);
    assert.equal(placeholder!.metadata.ownerReferences?.[0]?.['name'], 'lonely');

    assert.deepEqual(await slicesOf('shop', 'ext'), []);
    const manual = await slicesOf('shop', 'manual');
    assert.deepEqual(
      manual.map((s) => [s.metadata.name, s.metadata.labels?.[MANAGED_BY], s.endpoints?.[0]?.addresses]),
      [['manual-1', 'staff.example.com', ['192.0.2.10']]],
      "the user's slice of a selectorless Service is left alone",
    );
    assert.equal(await endpointsOf('shop', 'ext'), undefined);
  });

  // ---- namespace "scale": 250 pods, then 120 ----------------------------------------------------------

  const SCALE = 250;
  const KEEP = 120;
  const scaleIP = (i: number): string => `10.2.${Math.floor(i / 200)}.${(i % 200) + 1}`;
  let originalSlices: string[] = [];

  it('250 ready pods: three slices of 100, 100 and 50; the Endpoints list all 250', async () => {
    const names = Array.from({ length: SCALE }, (_, i) => `many-${String(i).padStart(3, '0')}`);
    await apply([
      namespace('scale'),
      ...names.map((n, i) =>
        pod('scale', n, { app: 'many', keep: String(i < KEEP) }, NODES[i % NODES.length]!),
      ),
    ]);
    await setPodStatuses(
      'scale',
      names.map((n, i) => [n, scaleIP(i)] as const),
    );
    // The Service comes last, so that its first sync sees every endpoint (the packing is then exact).
    await apply([
      service('scale', 'many', { selector: { app: 'many' }, ports: [{ port: 80, targetPort: 8080 }] }),
    ]);
    const [slices, ep] = await until('250 endpoints', 30_000, async () => {
      const [slices, ep] = await Promise.all([slicesOf('scale', 'many'), endpointsOf('scale', 'many')]);
      return endpointsIn(slices).length === SCALE &&
        ep !== undefined &&
        ipsOf(ep, 'addresses').length === SCALE
        ? ([slices, ep] as const)
        : undefined;
    });
    assert.deepEqual(
      slices.map((s) => (s.endpoints ?? []).length).sort((a, b) => b - a),
      [100, 100, 50],
    );
    const addresses = endpointsIn(slices).map((e) => e.addresses[0]!);
    assert.equal(new Set(addresses).size, SCALE, 'every address once');
    assert.deepEqual(sorted(addresses), sorted(names.map((_, i) => scaleIP(i))));
    assert.ok(
      endpointsIn(slices).every((e) => e.conditions?.ready === true),
      'every endpoint ready',
    );
    for (const s of slices) assert.deepEqual(s.ports, [{ name: '', port: 8080, protocol: 'TCP' }]);
    assert.equal(ep.metadata.annotations?.['endpoints.kubernetes.io/over-capacity'], undefined);
    assert.equal(ipsOf(ep, 'notReadyAddresses').length, 0);
    originalSlices = slices.map((s) => s.metadata.name);
  });

  it('scaled down to 120 pods: the remaining endpoints stay in the existing slices', async () => {
    assert.equal(originalSlices.length, 3, 'needs the previous test');
    // Grace 0: the pods are bound to nodes and no kubelet runs here to confirm a graceful deletion.
    await kubectl([
      'delete',
      'pods',
      '-n',
      'scale',
      '-l',
      'keep=false',
      '--grace-period=0',
      '--force',
      '--wait=false',
    ]);
    const slices = await until('120 endpoints', 30_000, async () => {
      const [slices, ep] = await Promise.all([slicesOf('scale', 'many'), endpointsOf('scale', 'many')]);
      return endpointsIn(slices).length === KEEP && ep !== undefined && ipsOf(ep, 'addresses').length === KEEP
        ? slices
        : undefined;
    });
    for (const s of slices) assert.ok((s.endpoints ?? []).length <= 100, `${s.metadata.name} holds ≤ 100`);
    for (const s of slices) {
      assert.ok(
        originalSlices.includes(s.metadata.name),
        `${s.metadata.name} is one of ${originalSlices.join(', ')}`,
      );
    }
    const addresses = endpointsIn(slices).map((e) => e.addresses[0]!);
    assert.deepEqual(sorted(addresses), sorted(Array.from({ length: KEEP }, (_, i) => scaleIP(i))));
  });

  // ---- namespace "topo": two pods per zone, topology hints ---------------------------------------------

  const ZONAL: readonly (readonly [string, string, string])[] = NODES.flatMap((n, z) =>
    [1, 2].map((k) => [`zonal-${n.slice(-1)}${k}`, n, `10.3.${z}.${k}`] as const),
  );
  const allHinted = (slices: readonly Slice[]): boolean =>
    endpointsIn(slices).length === ZONAL.length && endpointsIn(slices).every(ownZoneHints);
  const noneHinted = (slices: readonly Slice[]): boolean =>
    endpointsIn(slices).length === ZONAL.length && endpointsIn(slices).every((e) => e.hints === undefined);

  it('topology-mode Auto: with equal CPU in three zones every endpoint is hinted to its own zone; removing the annotation removes the hints', async () => {
    await apply([namespace('topo'), ...ZONAL.map(([name, n]) => pod('topo', name, { app: 'zonal' }, n))]);
    await setPodStatuses(
      'topo',
      ZONAL.map(([name, , ip]) => [name, ip] as const),
    );
    await apply([
      service('topo', 'zonal', { selector: { app: 'zonal' } }, { annotations: { [TOPOLOGY_MODE]: 'Auto' } }),
    ]);
    const slices = await until('zone hints', 15_000, async () => {
      const s = await slicesOf('topo', 'zonal');
      return allHinted(s) ? s : undefined;
    });
    for (const e of endpointsIn(slices)) assert.equal(e.zone, ZONE_OF[e.nodeName!]);
    await until('a TopologyAwareHintsEnabled event', 15_000, async () =>
      hasEvent(
        await eventsOf('topo', 'zonal'),
        'Normal',
        'TopologyAwareHintsEnabled',
        'Topology Aware Hints has been enabled, addressType: IPv4',
      ),
    );

    await kubectl(['annotate', 'service', 'zonal', '-n', 'topo', `${TOPOLOGY_MODE}-`]);
    await until('the hints to go', 15_000, async () => noneHinted(await slicesOf('topo', 'zonal')));
    await until('a TopologyAwareHintsDisabled event', 15_000, async () =>
      hasEvent(
        await eventsOf('topo', 'zonal'),
        'Warning',
        'TopologyAwareHintsDisabled',
        'Topology Aware Hints has been disabled, addressType: IPv4',
      ),
    );
  });

  it('topology-mode Auto: a ready node without allocatable CPU disables the hints with a Warning', async () => {
    await kubectl(['annotate', 'service', 'zonal', '-n', 'topo', `${TOPOLOGY_MODE}=Auto`]);
    await until('zone hints again', 15_000, async () => allHinted(await slicesOf('topo', 'zonal')));

    await apply([node('node-d', 'zone-c')]);
    await setNodeStatus('node-d', undefined);
    await until('the hints to go', 15_000, async () => noneHinted(await slicesOf('topo', 'zonal')));
    const events = await until('an Insufficient Node information event', 15_000, async () => {
      const events = await eventsOf('topo', 'zonal');
      return hasEvent(
        events,
        'Warning',
        'TopologyAwareHintsDisabled',
        'Insufficient Node information: allocatable CPU or zone not specified on one or more nodes, addressType: IPv4',
      )
        ? events
        : undefined;
    });
    for (const e of events) assert.equal(e.involvedObject.kind, 'Service');

    await kubectl(['delete', 'node', 'node-d']);
    await until('zone hints once the node is gone', 15_000, async () =>
      allHinted(await slicesOf('topo', 'zonal')),
    );
  });

  it('trafficDistribution: PreferClose hints each endpoint to its zone, PreferSameNode also to its node', async () => {
    await apply([
      service('topo', 'close', { selector: { app: 'zonal' }, trafficDistribution: 'PreferClose' }),
      service('topo', 'samenode', { selector: { app: 'zonal' }, trafficDistribution: 'PreferSameNode' }),
    ]);
    const [close, samenode] = await until('traffic distribution hints', 15_000, async () => {
      const [c, n] = await Promise.all([slicesOf('topo', 'close'), slicesOf('topo', 'samenode')]);
      return endpointsIn(c).length === ZONAL.length &&
        endpointsIn(n).length === ZONAL.length &&
        endpointsIn(c).every((e) => e.hints !== undefined) &&
        endpointsIn(n).every((e) => e.hints?.forNodes !== undefined)
        ? [c, n]
        : undefined;
    });
    for (const e of endpointsIn(close)) {
      assert.deepEqual(e.hints, { forZones: [{ name: ZONE_OF[e.nodeName!]! }] }, e.addresses[0]);
    }
    for (const e of endpointsIn(samenode)) {
      assert.deepEqual(
        e.hints,
        { forZones: [{ name: ZONE_OF[e.nodeName!]! }], forNodes: [{ name: e.nodeName! }] },
        e.addresses[0],
      );
    }
    const svc = await getJson<{ spec: { trafficDistribution?: string } }>([
      'get',
      'service',
      'samenode',
      '-n',
      'topo',
      '-o',
      'json',
    ]);
    assert.equal(svc.spec.trafficDistribution, 'PreferSameNode');

    // A pod that stops being ready loses its hint.
    const [name, , ip] = ZONAL[0]!;
    await setPodStatus('topo', name, ip, false);
    const e = await until('the not-ready endpoint', 15_000, async () => {
      const e = byIP(await slicesOf('topo', 'close')).get(ip);
      return e?.conditions?.ready === false ? e : undefined;
    });
    assert.equal(e.hints, undefined);

    // The apiserver accepts only the known values.
    await assert.rejects(
      apply([service('topo', 'bad', { selector: { app: 'zonal' }, trafficDistribution: 'Anywhere' })]),
      /spec\.trafficDistribution: Unsupported value: "Anywhere"/,
    );
  });

  it('trafficDistribution removed: the hints go, with no TopologyAwareHintsDisabled event (that is for topology-mode)', async () => {
    const hinted = (slices: readonly Slice[]): number =>
      endpointsIn(slices).filter((e) => e.hints !== undefined).length;
    await kubectl([
      'patch',
      'service',
      'close',
      '-n',
      'topo',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/spec/trafficDistribution"}]',
    ]);
    await until(
      'the hints of close to go',
      15_000,
      async () => hinted(await slicesOf('topo', 'close')) === 0,
    );
    // A later sync of the same Service: whatever the first one recorded has been written by then.
    await kubectl([
      'patch',
      'service',
      'close',
      '-n',
      'topo',
      '-p',
      '{"spec":{"trafficDistribution":"PreferClose"}}',
    ]);
    await until('the hints of close back', 15_000, async () => hinted(await slicesOf('topo', 'close')) > 0);
    const events = await eventsOf('topo', 'close');
    assert.deepEqual(
      events.map((e) => `${e.type} ${e.reason}: ${e.message}`),
      [],
      'upstream records this event only after topology-mode Auto populated hints',
    );
  });
});
