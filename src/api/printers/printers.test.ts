import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject, ObjectMeta } from '../object.js';
import { mustFindResource, RESOURCES, type ResourceInfo } from '../resources.js';
import {
  columnsFor,
  DEPLOYMENT_GRID_PRINTER_COLUMNS,
  formatTimestamp,
  rowCells,
  rowConditions,
  SERVICE_GRID_PRINTER_COLUMNS,
} from './index.js';

// ---- fixtures ---------------------------------------------------------------------------------

const NOW = 1714564800000; // 2024-05-01T12:00:00Z
const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;
const D = 24 * H;
/** An RFC 3339 timestamp `ms` before NOW. */
const ago = (ms: number): string => formatTimestamp(NOW - ms);

type Json = Record<string, unknown>;
type Meta = Partial<ObjectMeta>;

const R = {
  namespaces: mustFindResource('', 'namespaces'),
  nodes: mustFindResource('', 'nodes'),
  pods: mustFindResource('', 'pods'),
  services: mustFindResource('', 'services'),
  endpoints: mustFindResource('', 'endpoints'),
  events: mustFindResource('', 'events'),
  eventsV1: mustFindResource('events.k8s.io', 'events'),
  endpointslices: mustFindResource('discovery.k8s.io', 'endpointslices'),
  leases: mustFindResource('coordination.k8s.io', 'leases'),
  deployments: mustFindResource('apps', 'deployments'),
  servicegrids: mustFindResource('superedge.io', 'servicegrids'),
  deploymentgrids: mustFindResource('superedge.io', 'deploymentgrids'),
};

/** Objects are three days old unless a test says otherwise. */
const kobj = (name: string, body: Json, meta: Meta = {}): KObject => ({
  metadata: { name, namespace: 'default', creationTimestamp: ago(3 * D), ...meta },
  ...body,
});
/** The same, for cluster-scoped kinds. */
const clusterObj = (name: string, body: Json, meta: Meta = {}): KObject => ({
  metadata: { name, creationTimestamp: ago(3 * D), ...meta },
  ...body,
});

const service = (spec: Json, opts: { name?: string; status?: Json; meta?: Meta } = {}): KObject =>
  kobj(
    opts.name ?? 'web',
    { spec: { type: 'ClusterIP', ...spec }, ...(opts.status ? { status: opts.status } : {}) },
    opts.meta,
  );

const tcp = (port: number, nodePort?: number): Json => ({
  port,
  protocol: 'TCP',
  ...(nodePort !== undefined ? { nodePort } : {}),
});

const running = (
  name: string,
  opts: { ready?: boolean; restarts?: number; lastFinished?: string } = {},
): Json => ({
  name,
  ready: opts.ready ?? true,
  restartCount: opts.restarts ?? 0,
  state: { running: { startedAt: ago(1 * H) } },
  ...(opts.lastFinished !== undefined
    ? { lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: opts.lastFinished } } }
    : {}),
});
const waiting = (name: string, reason: string, restarts = 0, lastFinished?: string): Json => ({
  name,
  ready: false,
  restartCount: restarts,
  state: { waiting: { reason } },
  ...(lastFinished !== undefined
    ? { lastState: { terminated: { exitCode: 1, reason: 'Error', finishedAt: lastFinished } } }
    : {}),
});
const terminated = (name: string, t: Json): Json => ({
  name,
  ready: false,
  restartCount: 0,
  state: { terminated: { exitCode: 0, ...t } },
});

const pod = (opts: {
  containers?: string[];
  initContainers?: Json[];
  phase?: string;
  reason?: string;
  statuses?: Json[];
  initStatuses?: Json[];
  conditions?: Json[];
  spec?: Json;
  status?: Json;
  meta?: Meta;
}): KObject =>
  kobj(
    'web-7d4b9c-x2x9z',
    {
      spec: {
        containers: (opts.containers ?? ['app']).map((name) => ({ name, image: `${name}:1` })),
        ...(opts.initContainers ? { initContainers: opts.initContainers } : {}),
        ...opts.spec,
      },
      status: {
        phase: opts.phase ?? 'Running',
        ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
        ...(opts.conditions ? { conditions: opts.conditions } : {}),
        ...(opts.statuses ? { containerStatuses: opts.statuses } : {}),
        ...(opts.initStatuses ? { initContainerStatuses: opts.initStatuses } : {}),
        ...opts.status,
      },
    },
    opts.meta,
  );
const ready = (status = 'True'): Json => ({ type: 'Ready', status });

const node = (opts: {
  labels?: Record<string, string>;
  conditions?: Json[];
  spec?: Json;
  status?: Json;
}): KObject =>
  clusterObj(
    'edge-1',
    {
      spec: opts.spec ?? {},
      status: {
        conditions: opts.conditions ?? [],
        nodeInfo: {
          kubeletVersion: 'v1.32.5',
          osImage: 'Ubuntu 24.04 LTS',
          kernelVersion: '6.8.0-31-generic',
          containerRuntimeVersion: 'containerd://1.7.12',
        },
        addresses: [
          { type: 'Hostname', address: 'edge-1' },
          { type: 'InternalIP', address: '192.168.1.10' },
        ],
        ...opts.status,
      },
    },
    opts.labels ? { labels: opts.labels } : {},
  );

const endpoints = (subsets: Json[] | undefined): KObject => kobj('web', subsets ? { subsets } : {});
const addrs = (...ips: string[]): Json[] => ips.map((ip) => ({ ip }));

const slice = (ports: Json[] | undefined, addresses: string[][], addressType = 'IPv4'): KObject =>
  kobj('web-abc12', {
    addressType,
    ...(ports ? { ports } : {}),
    endpoints: addresses.map((a) => ({ addresses: a, conditions: { ready: true } })),
  });

const coreEvent = (body: Json, name = 'web-7d4b9c-x2x9z.17c1f0a2b3c4d5e6'): KObject =>
  kobj(name, {
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-7d4b9c-x2x9z' },
    type: 'Normal',
    reason: 'Scheduled',
    message: 'Successfully assigned default/web-7d4b9c-x2x9z to edge-1',
    ...body,
  });

const eventV1 = (body: Json): KObject =>
  kobj('web.17c1f0a2b3c4d5e6', {
    regarding: { kind: 'Deployment', namespace: 'default', name: 'web' },
    type: 'Normal',
    reason: 'ScalingReplicaSet',
    note: 'Scaled up replica set web-7d4b9c to 3',
    ...body,
  });

const deployment = (spec: Json, status?: Json): KObject =>
  kobj('web', {
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            { name: 'app', image: 'nginx:1.27' },
            { name: 'sidecar', image: 'envoyproxy/envoy:v1.30' },
          ],
        },
      },
      ...spec,
    },
    ...(status ? { status } : {}),
  });

const grid = (spec: Json, name = 'web', status?: Json): KObject =>
  kobj(name, { spec, ...(status ? { status } : {}) });

// ---- cases ------------------------------------------------------------------------------------

interface Case {
  readonly name: string;
  readonly r: ResourceInfo;
  readonly obj: KObject;
  readonly want: unknown[];
}

const cases: Case[] = [
  // services: Name, Type, Cluster-IP, External-IP, Port(s), Age | Selector
  {
    name: 'service: ClusterIP with selector and two ports',
    r: R.services,
    obj: service({
      clusterIP: '10.96.0.10',
      clusterIPs: ['10.96.0.10'],
      ports: [tcp(80), tcp(443)],
      selector: { tier: 'frontend', app: 'web' },
    }),
    want: ['web', 'ClusterIP', '10.96.0.10', '<none>', '80/TCP,443/TCP', '3d', 'app=web,tier=frontend'],
  },
  {
    name: 'service: NodePort prints port:nodePort/protocol',
    r: R.services,
    obj: service({
      type: 'NodePort',
      clusterIP: '10.96.12.7',
      ports: [tcp(80, 30080), { port: 53, protocol: 'UDP', nodePort: 30053 }],
      selector: { app: 'web' },
    }),
    want: ['web', 'NodePort', '10.96.12.7', '<none>', '80:30080/TCP,53:30053/UDP', '3d', 'app=web'],
  },
  {
    name: 'service: LoadBalancer without ingress is <pending>',
    r: R.services,
    obj: service(
      {
        type: 'LoadBalancer',
        clusterIPs: ['10.96.0.20'],
        ports: [tcp(443, 31443)],
        selector: { app: 'web' },
      },
      { status: { loadBalancer: {} } },
    ),
    want: ['web', 'LoadBalancer', '10.96.0.20', '<pending>', '443:31443/TCP', '3d', 'app=web'],
  },
  {
    name: 'service: LoadBalancer ingress (sorted, de-duplicated, IP before hostname) then externalIPs',
    r: R.services,
    obj: service(
      {
        type: 'LoadBalancer',
        clusterIPs: ['10.96.0.20'],
        externalIPs: ['198.51.100.1'],
        ports: [tcp(80, 30080)],
        selector: { app: 'web' },
      },
      {
        status: {
          loadBalancer: {
            ingress: [
              { hostname: 'lb.example.com' },
              { ip: '203.0.113.9', hostname: 'ignored.example.com' },
              { ip: '203.0.113.9' },
            ],
          },
        },
      },
    ),
    want: [
      'web',
      'LoadBalancer',
      '10.96.0.20',
      '203.0.113.9,lb.example.com,198.51.100.1',
      '80:30080/TCP',
      '3d',
      'app=web',
    ],
  },
  {
    name: 'service: ExternalName has no cluster IP, ports or selector',
    r: R.services,
    obj: service({ type: 'ExternalName', externalName: 'db.example.com' }, { name: 'db' }),
    want: ['db', 'ExternalName', '<none>', 'db.example.com', '<none>', '3d', '<none>'],
  },
  {
    name: 'service: headless prints None',
    r: R.services,
    obj: service({
      clusterIP: 'None',
      clusterIPs: ['None'],
      ports: [{ port: 5432, protocol: 'TCP', name: 'pg' }],
      selector: { app: 'pg' },
    }),
    want: ['web', 'ClusterIP', 'None', '<none>', '5432/TCP', '3d', 'app=pg'],
  },
  {
    name: 'service: dual-stack with external IPs, just created',
    r: R.services,
    obj: service(
      {
        clusterIP: '10.96.0.30',
        clusterIPs: ['10.96.0.30', 'fd00:10:96::30'],
        externalIPs: ['192.0.2.1', '192.0.2.2'],
        ports: [tcp(8080)],
        selector: { app: 'api' },
      },
      { meta: { creationTimestamp: ago(45 * S) } },
    ),
    want: ['web', 'ClusterIP', '10.96.0.30', '192.0.2.1,192.0.2.2', '8080/TCP', '45s', 'app=api'],
  },
  {
    name: 'service: no creationTimestamp is <unknown>',
    r: R.services,
    obj: service({ clusterIP: '10.96.0.1', ports: [tcp(443)] }, { meta: { creationTimestamp: null } }),
    want: ['web', 'ClusterIP', '10.96.0.1', '<none>', '443/TCP', '<unknown>', '<none>'],
  },

  // pods: Name, Ready, Status, Restarts, Age | IP, Node, Nominated Node, Readiness Gates
  {
    name: 'pod: running and ready, wide columns filled',
    r: R.pods,
    obj: pod({
      statuses: [running('app')],
      conditions: [ready()],
      spec: { nodeName: 'edge-1' },
      status: { podIP: '10.244.1.5', podIPs: [{ ip: '10.244.1.5' }, { ip: 'fd00::5' }] },
    }),
    want: ['web-7d4b9c-x2x9z', '1/1', 'Running', '0', '3d', '10.244.1.5', 'edge-1', '<none>', '<none>'],
  },
  {
    name: 'pod: pending and unscheduled',
    r: R.pods,
    obj: pod({ phase: 'Pending', meta: { creationTimestamp: ago(5 * S) } }),
    want: ['web-7d4b9c-x2x9z', '0/1', 'Pending', '0', '5s', '<none>', '<none>', '<none>', '<none>'],
  },
  {
    name: 'pod: CrashLoopBackOff with restarts and when the last one was',
    r: R.pods,
    obj: pod({
      containers: ['app', 'sidecar'],
      statuses: [waiting('app', 'CrashLoopBackOff', 5, ago(5 * MIN)), running('sidecar')],
      conditions: [ready('False')],
      spec: { nodeName: 'edge-1' },
      status: { podIP: '10.244.1.6' },
    }),
    want: [
      'web-7d4b9c-x2x9z',
      '1/2',
      'CrashLoopBackOff',
      '5 (5m ago)',
      '3d',
      '10.244.1.6',
      'edge-1',
      '<none>',
      '<none>',
    ],
  },
  {
    name: 'pod: restart counts sum over containers, most recent termination wins',
    r: R.pods,
    obj: pod({
      containers: ['app', 'sidecar'],
      statuses: [
        running('app', { restarts: 2, lastFinished: ago(3 * H) }),
        running('sidecar', { restarts: 1, lastFinished: ago(90 * S) }),
      ],
      conditions: [ready()],
    }),
    want: ['web-7d4b9c-x2x9z', '2/2', 'Running', '3 (90s ago)', '3d', '<none>', '<none>', '<none>', '<none>'],
  },
  {
    name: 'pod: first init container still running is Init:0/2',
    r: R.pods,
    obj: pod({
      phase: 'Pending',
      initContainers: [{ name: 'migrate' }, { name: 'seed' }],
      initStatuses: [running('migrate', { ready: false }), waiting('seed', 'PodInitializing')],
      statuses: [waiting('app', 'PodInitializing')],
    }),
    want: ['web-7d4b9c-x2x9z', '0/1', 'Init:0/2', '0', '3d', '<none>', '<none>', '<none>', '<none>'],
  },
  {
    name: 'pod: second init container waiting on its image',
    r: R.pods,
    obj: pod({
      phase: 'Pending',
      initContainers: [{ name: 'migrate' }, { name: 'seed' }],
      initStatuses: [terminated('migrate', { reason: 'Completed' }), waiting('seed', 'ImagePullBackOff')],
    }),
    want: [
      'web-7d4b9c-x2x9z',
      '0/1',
      'Init:ImagePullBackOff',
      '0',
      '3d',
      '<none>',
      '<none>',
      '<none>',
      '<none>',
    ],
  },
  {
    name: 'pod: failed init container with a reason, restarts counted while initializing',
    r: R.pods,
    obj: pod({
      phase: 'Pending',
      initContainers: [{ name: 'migrate' }],
      initStatuses: [
        {
          ...terminated('migrate', { exitCode: 1, reason: 'Error' }),
          restartCount: 4,
          lastState: { terminated: { exitCode: 1, finishedAt: ago(2 * MIN + 30 * S) } },
        },
      ],
    }),
    want: [
      'web-7d4b9c-x2x9z',
      '0/1',
      'Init:Error',
      '4 (2m30s ago)',
      '3d',
      '<none>',
      '<none>',
      '<none>',
      '<none>',
    ],
  },
  {
    name: 'pod: failed init container without a reason shows its exit code',
    r: R.pods,
    obj: pod({
      phase: 'Pending',
      initContainers: [{ name: 'a' }, { name: 'b' }],
      initStatuses: [terminated('a', { exitCode: 2 }), terminated('b', { exitCode: 137, signal: 9 })],
    }),
    want: ['web-7d4b9c-x2x9z', '0/1', 'Init:ExitCode:2', '0', '3d', '<none>', '<none>', '<none>', '<none>'],
  },
  {
    name: 'pod: init container killed by a signal',
    r: R.pods,
    obj: pod({
      phase: 'Pending',
      initContainers: [{ name: 'a' }],
      initStatuses: [terminated('a', { exitCode: 137, signal: 9 })],
    }),
    want: ['web-7d4b9c-x2x9z', '0/1', 'Init:Signal:9', '0', '3d', '<none>', '<none>', '<none>', '<none>'],
  },
  {
    name: 'pod: restartable init container (sidecar) counts toward READY',
    r: R.pods,
    obj: pod({
      initContainers: [{ name: 'proxy', restartPolicy: 'Always' }],
      initStatuses: [{ ...running('proxy', { restarts: 1, lastFinished: ago(20 * MIN) }), started: true }],
      statuses: [running('app')],
      conditions: [{ type: 'Initialized', status: 'True' }, ready()],
    }),
    want: ['web-7d4b9c-x2x9z', '2/2', 'Running', '1 (20m ago)', '3d', '<none>', '<none>', '<none>', '<none>'],
  },
  {
    name: 'pod: succeeded, container Completed',
    r: R.pods,
    obj: pod({ phase: 'Succeeded', statuses: [terminated('app', { reason: 'Completed' })] }),
    want: ['web-7d4b9c-x2x9z', '0/1', 'Completed', '0', '3d', '<none>', '<none>', '<none>', '<none>'],
  },
  {
    name: 'pod: Completed but another container still running and pod Ready is Running',
    r: R.pods,
    obj: pod({
      containers: ['job', 'app'],
      statuses: [terminated('job', { reason: 'Completed' }), running('app')],
      conditions: [ready()],
    }),
    want: ['web-7d4b9c-x2x9z', '1/2', 'Running', '0', '3d', '<none>', '<none>', '<none>', '<none>'],
  },
  {
    name: 'pod: Completed with a running container but not Ready is NotReady',
    r: R.pods,
    obj: pod({
      containers: ['job', 'app'],
      statuses: [terminated('job', { reason: 'Completed' }), running('app')],
      conditions: [ready('False')],
    }),
    want: ['web-7d4b9c-x2x9z', '1/2', 'NotReady', '0', '3d', '<none>', '<none>', '<none>', '<none>'],
  },
  {
    name: 'pod: container terminated by a signal without a reason',
    r: R.pods,
    obj: pod({ phase: 'Failed', statuses: [terminated('app', { exitCode: 143, signal: 15 })] }),
    want: ['web-7d4b9c-x2x9z', '0/1', 'Signal:15', '0', '3d', '<none>', '<none>', '<none>', '<none>'],
  },
  {
    name: 'pod: evicted (status.reason wins over the phase)',
    r: R.pods,
    obj: pod({ phase: 'Failed', reason: 'Evicted', spec: { nodeName: 'edge-2' } }),
    want: ['web-7d4b9c-x2x9z', '0/1', 'Evicted', '0', '3d', '<none>', 'edge-2', '<none>', '<none>'],
  },
  {
    name: 'pod: being deleted is Terminating',
    r: R.pods,
    obj: pod({
      statuses: [running('app')],
      conditions: [ready()],
      meta: { deletionTimestamp: ago(10 * S), deletionGracePeriodSeconds: 30 },
    }),
    want: ['web-7d4b9c-x2x9z', '1/1', 'Terminating', '0', '3d', '<none>', '<none>', '<none>', '<none>'],
  },
  {
    name: 'pod: being deleted on a lost node is Unknown',
    r: R.pods,
    obj: pod({ reason: 'NodeLost', statuses: [running('app')], meta: { deletionTimestamp: ago(10 * S) } }),
    want: ['web-7d4b9c-x2x9z', '1/1', 'Unknown', '0', '3d', '<none>', '<none>', '<none>', '<none>'],
  },
  {
    name: 'pod: scheduling gated',
    r: R.pods,
    obj: pod({
      phase: 'Pending',
      conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulingGated' }],
    }),
    want: ['web-7d4b9c-x2x9z', '0/1', 'SchedulingGated', '0', '3d', '<none>', '<none>', '<none>', '<none>'],
  },
  {
    name: 'pod: nominated node and readiness gates',
    r: R.pods,
    obj: pod({
      phase: 'Pending',
      conditions: [
        { type: 'example.com/lb-ready', status: 'True' },
        { type: 'example.com/dns-ready', status: 'False' },
      ],
      spec: {
        readinessGates: [
          { conditionType: 'example.com/lb-ready' },
          { conditionType: 'example.com/dns-ready' },
        ],
      },
      status: { nominatedNodeName: 'edge-3' },
    }),
    want: ['web-7d4b9c-x2x9z', '0/1', 'Pending', '0', '3d', '<none>', '<none>', 'edge-3', '1/2'],
  },

  // nodes: Name, Status, Roles, Age, Version | Internal-IP, External-IP, OS-Image, Kernel-Version, Container-Runtime
  {
    name: 'node: Ready control plane',
    r: R.nodes,
    obj: node({
      labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/hostname': 'edge-1' },
      conditions: [
        { type: 'MemoryPressure', status: 'False' },
        { type: 'Ready', status: 'True' },
      ],
    }),
    want: [
      'edge-1',
      'Ready',
      'control-plane',
      '3d',
      'v1.32.5',
      '192.168.1.10',
      '<none>',
      'Ubuntu 24.04 LTS',
      '6.8.0-31-generic',
      'containerd://1.7.12',
    ],
  },
  {
    name: 'node: NotReady, cordoned, roles from both label styles, external IP',
    r: R.nodes,
    obj: node({
      labels: {
        'node-role.kubernetes.io/worker': '',
        'kubernetes.io/role': 'edge',
        'node-role.kubernetes.io/': '',
      },
      conditions: [{ type: 'Ready', status: 'Unknown' }],
      spec: { unschedulable: true },
      status: {
        addresses: [
          { type: 'ExternalIP', address: '203.0.113.10' },
          { type: 'InternalIP', address: '10.0.0.10' },
          { type: 'InternalIP', address: '10.0.0.11' },
        ],
      },
    }),
    want: [
      'edge-1',
      'NotReady,SchedulingDisabled',
      'edge,worker',
      '3d',
      'v1.32.5',
      '10.0.0.10',
      '203.0.113.10',
      'Ubuntu 24.04 LTS',
      '6.8.0-31-generic',
      'containerd://1.7.12',
    ],
  },
  {
    name: 'node: registered with no status yet',
    r: R.nodes,
    obj: clusterObj('edge-9', { spec: {} }),
    want: [
      'edge-9',
      'Unknown',
      '<none>',
      '3d',
      '',
      '<none>',
      '<none>',
      '<unknown>',
      '<unknown>',
      '<unknown>',
    ],
  },

  // namespaces: Name, Status, Age
  {
    name: 'namespace: Active',
    r: R.namespaces,
    obj: clusterObj('kube-system', { status: { phase: 'Active' } }, { creationTimestamp: ago(400 * D) }),
    want: ['kube-system', 'Active', '400d'],
  },
  {
    name: 'namespace: Terminating',
    r: R.namespaces,
    obj: clusterObj('old', { status: { phase: 'Terminating' } }, { deletionTimestamp: ago(S) }),
    want: ['old', 'Terminating', '3d'],
  },

  // endpoints: Name, Endpoints, Age
  {
    name: 'endpoints: two addresses on one port',
    r: R.endpoints,
    obj: endpoints([
      { addresses: addrs('10.244.1.5', '10.244.2.7'), ports: [{ port: 8080, protocol: 'TCP' }] },
    ]),
    want: ['web', '10.244.1.5:8080,10.244.2.7:8080', '3d'],
  },
  {
    name: 'endpoints: more than three are cut with + N more...',
    r: R.endpoints,
    obj: endpoints([
      { addresses: addrs('10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5'), ports: [{ port: 80 }] },
    ]),
    want: ['web', '10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 2 more...', '3d'],
  },
  {
    name: 'endpoints: every port of every subset, IPv6 bracketed',
    r: R.endpoints,
    obj: endpoints([
      { addresses: addrs('fd00::1', '10.0.0.1'), ports: [{ port: 80 }, { port: 443 }] },
      { addresses: addrs('10.0.0.9'), notReadyAddresses: addrs('10.0.0.8'), ports: [{ port: 9090 }] },
    ]),
    want: ['web', '[fd00::1]:80,10.0.0.1:80,[fd00::1]:443 + 2 more...', '3d'],
  },
  {
    name: 'endpoints: headless without ports lists bare addresses',
    r: R.endpoints,
    obj: endpoints([{ addresses: addrs('10.0.0.1', '10.0.0.2') }]),
    want: ['web', '10.0.0.1,10.0.0.2', '3d'],
  },
  {
    name: 'endpoints: no subsets is <none>',
    r: R.endpoints,
    obj: endpoints(undefined),
    want: ['web', '<none>', '3d'],
  },

  // endpointslices: Name, AddressType, Ports, Endpoints, Age
  {
    name: 'endpointslice: one port, two endpoints',
    r: R.endpointslices,
    obj: slice([{ name: 'http', port: 8080, protocol: 'TCP' }], [['10.244.1.5'], ['10.244.2.7']]),
    want: ['web-abc12', 'IPv4', '8080', '10.244.1.5,10.244.2.7', '3d'],
  },
  {
    name: 'endpointslice: ports and addresses beyond three',
    r: R.endpointslices,
    obj: slice(
      [{ port: 80 }, { port: 443 }, { port: 8080 }, { port: 9090 }],
      [['fd00::1'], ['fd00::2', 'fd00::3'], ['fd00::4']],
      'IPv6',
    ),
    want: ['web-abc12', 'IPv6', '80,443,8080 + 1 more...', 'fd00::1,fd00::2,fd00::3 + 1 more...', '3d'],
  },
  {
    name: 'endpointslice: a port without a number shows its name, or * for all ports',
    r: R.endpointslices,
    obj: slice([{ name: 'http' }, {}], [['10.0.0.1']]),
    want: ['web-abc12', 'IPv4', 'http,*', '10.0.0.1', '3d'],
  },
  {
    name: 'endpointslice: no ports and no endpoints are <unset>',
    r: R.endpointslices,
    obj: slice(undefined, []),
    want: ['web-abc12', 'IPv4', '<unset>', '<unset>', '3d'],
  },

  // core events: Last Seen, Type, Reason, Object, Subobject, Source, Message, First Seen, Count, Name
  {
    name: 'event: repeated warning with first and last timestamps',
    r: R.events,
    obj: coreEvent({
      involvedObject: { kind: 'Pod', name: 'web-7d4b9c-x2x9z', fieldPath: 'spec.containers{app}' },
      type: 'Warning',
      reason: 'BackOff',
      message: 'Back-off restarting failed container app in pod web-7d4b9c-x2x9z\n',
      source: { component: 'kubelet', host: 'edge-1' },
      firstTimestamp: ago(2 * H),
      lastTimestamp: ago(45 * S),
      count: 27,
    }),
    want: [
      '45s',
      'Warning',
      'BackOff',
      'pod/web-7d4b9c-x2x9z',
      'spec.containers{app}',
      'kubelet, edge-1',
      'Back-off restarting failed container app in pod web-7d4b9c-x2x9z',
      '120m',
      27,
      'web-7d4b9c-x2x9z.17c1f0a2b3c4d5e6',
    ],
  },
  {
    name: 'event: only eventTime (microseconds count), reporting component, no count',
    r: R.events,
    obj: coreEvent({
      eventTime: formatTimestamp(NOW - 4 * MIN).replace('Z', '.123456Z'),
      reportingComponent: 'default-scheduler',
      reportingInstance: 'default-scheduler-control-plane',
      source: {},
    }),
    want: [
      '3m59s',
      'Normal',
      'Scheduled',
      'pod/web-7d4b9c-x2x9z',
      '',
      'default-scheduler, default-scheduler-control-plane',
      'Successfully assigned default/web-7d4b9c-x2x9z to edge-1',
      '3m59s',
      1,
      'web-7d4b9c-x2x9z.17c1f0a2b3c4d5e6',
    ],
  },
  {
    name: 'event: series overrides last seen and count',
    r: R.events,
    obj: coreEvent({
      eventTime: ago(30 * MIN),
      series: { count: 12, lastObservedTime: ago(30 * S) },
      source: { component: 'kubelet' },
      count: 1,
    }),
    want: [
      '30s',
      'Normal',
      'Scheduled',
      'pod/web-7d4b9c-x2x9z',
      '',
      'kubelet',
      'Successfully assigned default/web-7d4b9c-x2x9z to edge-1',
      '30m',
      12,
      'web-7d4b9c-x2x9z.17c1f0a2b3c4d5e6',
    ],
  },
  {
    name: 'event: about a kind without a name, and with no times at all',
    r: R.events,
    obj: coreEvent(
      { involvedObject: { kind: 'Node' }, reason: 'RegisteredNode', message: '  Node edge-1 event  ' },
      'edge-1.17c1',
    ),
    want: [
      '<unknown>',
      'Normal',
      'RegisteredNode',
      'node',
      '',
      '',
      'Node edge-1 event',
      '<unknown>',
      1,
      'edge-1.17c1',
    ],
  },

  // events.k8s.io events: the same columns, read through the conversion to core
  {
    name: 'events.k8s.io event: regarding, note, reportingController',
    r: R.eventsV1,
    obj: eventV1({
      eventTime: ago(6 * MIN),
      reportingController: 'deployment-controller',
      reportingInstance: '',
      action: 'Scale',
    }),
    want: [
      '6m',
      'Normal',
      'ScalingReplicaSet',
      'deployment/web',
      '',
      'deployment-controller',
      'Scaled up replica set web-7d4b9c to 3',
      '6m',
      1,
      'web.17c1f0a2b3c4d5e6',
    ],
  },
  {
    name: 'events.k8s.io event: deprecated fields and series',
    r: R.eventsV1,
    obj: eventV1({
      regarding: { kind: 'Pod', name: 'web-1', fieldPath: 'spec.containers{app}' },
      type: 'Warning',
      reason: 'Unhealthy',
      note: 'Readiness probe failed',
      deprecatedSource: { component: 'kubelet', host: 'edge-2' },
      deprecatedFirstTimestamp: ago(3 * H + 20 * MIN),
      deprecatedLastTimestamp: ago(5 * MIN),
      deprecatedCount: 40,
      series: { count: 41, lastObservedTime: ago(10 * S) },
    }),
    want: [
      '10s',
      'Warning',
      'Unhealthy',
      'pod/web-1',
      'spec.containers{app}',
      'kubelet, edge-2',
      'Readiness probe failed',
      '3h20m',
      41,
      'web.17c1f0a2b3c4d5e6',
    ],
  },

  // leases: Name, Holder, Age
  {
    name: 'lease: held',
    r: R.leases,
    obj: kobj(
      'edge-1',
      { spec: { holderIdentity: 'edge-1', leaseDurationSeconds: 40 } },
      { namespace: 'kube-node-lease' },
    ),
    want: ['edge-1', 'edge-1', '3d'],
  },
  {
    name: 'lease: no holder is empty',
    r: R.leases,
    obj: kobj('svcplane-controller', { spec: {} }, { creationTimestamp: ago(7 * H + 5 * MIN) }),
    want: ['svcplane-controller', '', '7h5m'],
  },

  // deployments: Name, Ready, Up-to-date, Available, Age | Containers, Images, Selector
  {
    name: 'deployment: rolled out',
    r: R.deployments,
    obj: deployment(
      { replicas: 3 },
      { replicas: 3, readyReplicas: 3, updatedReplicas: 3, availableReplicas: 3 },
    ),
    want: ['web', '3/3', 3, 3, '3d', 'app,sidecar', 'nginx:1.27,envoyproxy/envoy:v1.30', 'app=web'],
  },
  {
    name: 'deployment: mid-rollout with a set-based selector',
    r: R.deployments,
    obj: deployment(
      {
        replicas: 5,
        selector: {
          matchLabels: { app: 'web' },
          matchExpressions: [
            { key: 'track', operator: 'NotIn', values: ['canary', 'beta'] },
            { key: 'env', operator: 'In', values: ['prod'] },
            { key: 'legacy', operator: 'DoesNotExist' },
            { key: 'app.kubernetes.io/name', operator: 'Exists' },
          ],
        },
      },
      { replicas: 6, readyReplicas: 4, updatedReplicas: 2, availableReplicas: 4 },
    ),
    want: [
      'web',
      '4/5',
      2,
      4,
      '3d',
      'app,sidecar',
      'nginx:1.27,envoyproxy/envoy:v1.30',
      'app=web,app.kubernetes.io/name,env in (prod),!legacy,track notin (beta,canary)',
    ],
  },
  {
    name: 'deployment: new, replicas defaulted to 1, no status',
    r: R.deployments,
    obj: deployment({}),
    want: ['web', '0/1', 0, 0, '3d', 'app,sidecar', 'nginx:1.27,envoyproxy/envoy:v1.30', 'app=web'],
  },
  {
    name: 'deployment: scaled to zero',
    r: R.deployments,
    obj: deployment({ replicas: 0 }, { observedGeneration: 2 }),
    want: ['web', '0/0', 0, 0, '3d', 'app,sidecar', 'nginx:1.27,envoyproxy/envoy:v1.30', 'app=web'],
  },

  // servicegrids: Name, Grid-Key, Service, Age; deploymentgrids: Name, Grid-Key, Units, Ready, Age
  {
    name: 'servicegrid: grid key and the Service it produced',
    r: R.servicegrids,
    obj: grid({ gridUniqKey: 'zone', template: { ports: [{ port: 80 }] } }, 'web', {
      loadBalancer: {},
      service: 'web-svc',
    }),
    want: ['web', 'zone', 'web-svc', '3d'],
  },
  {
    name: 'servicegrid: no status yet prints <none> for Service',
    r: R.servicegrids,
    obj: grid({ gridUniqKey: 'zone', template: { ports: [{ port: 80 }] } }),
    want: ['web', 'zone', null, '3d'],
  },
  {
    name: 'deploymentgrid: grid key, units and ready units',
    r: R.deploymentgrids,
    obj: grid({ gridUniqKey: 'topology.superedge.io/unit', template: {} }, 'echo', {
      units: 3,
      readyUnits: 2,
      states: {},
    }),
    want: ['echo', 'topology.superedge.io/unit', 3, 2, '3d'],
  },
  {
    name: 'deploymentgrid: zero ready units print 0, not <none>',
    r: R.deploymentgrids,
    obj: grid({ gridUniqKey: 'zone', template: {} }, 'echo', { units: 2, readyUnits: 0 }),
    want: ['echo', 'zone', 2, 0, '3d'],
  },
  {
    name: 'deploymentgrid: a missing grid key and status are null (kubectl prints <none>)',
    r: R.deploymentgrids,
    obj: grid({}, 'echo'),
    want: ['echo', null, null, null, '3d'],
  },
];

describe('rowCells: cells as kube-apiserver prints them', () => {
  for (const c of cases) {
    it(c.name, () => {
      const cells = rowCells(c.r, c.obj, NOW);
      assert.deepEqual(cells, c.want);
      assert.equal(cells.length, columnsFor(c.r).length, 'one cell per column');
    });
  }
});

// ---- columns ----------------------------------------------------------------------------------

const headers = (r: ResourceInfo): string[] =>
  columnsFor(r).map((c) => (c.priority === 0 ? c.name : `${c.name}*`));

describe('columnsFor: kube-apiserver column names, order and priorities (* = -o wide)', () => {
  const want: [ResourceInfo, string[]][] = [
    [R.services, ['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', 'Selector*']],
    [
      R.pods,
      ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP*', 'Node*', 'Nominated Node*', 'Readiness Gates*'],
    ],
    [
      R.nodes,
      [
        'Name',
        'Status',
        'Roles',
        'Age',
        'Version',
        'Internal-IP*',
        'External-IP*',
        'OS-Image*',
        'Kernel-Version*',
        'Container-Runtime*',
      ],
    ],
    [R.namespaces, ['Name', 'Status', 'Age']],
    [R.endpoints, ['Name', 'Endpoints', 'Age']],
    [R.endpointslices, ['Name', 'AddressType', 'Ports', 'Endpoints', 'Age']],
    [
      R.events,
      [
        'Last Seen',
        'Type',
        'Reason',
        'Object',
        'Subobject*',
        'Source*',
        'Message',
        'First Seen*',
        'Count*',
        'Name*',
      ],
    ],
    [R.leases, ['Name', 'Holder', 'Age']],
    [
      R.deployments,
      ['Name', 'Ready', 'Up-to-date', 'Available', 'Age', 'Containers*', 'Images*', 'Selector*'],
    ],
    [R.servicegrids, ['Name', 'Grid-Key', 'Service', 'Age']],
    [R.deploymentgrids, ['Name', 'Grid-Key', 'Units', 'Ready', 'Age']],
  ];
  for (const [r, names] of want) {
    it(`${r.resource}.${r.group || 'core'}`, () => assert.deepEqual(headers(r), names));
  }

  it('events.k8s.io events print with the core event columns', () => {
    assert.deepEqual(columnsFor(R.eventsV1), columnsFor(R.events));
  });

  it('every kind has exactly one name-format column, and well-formed definitions', () => {
    for (const r of RESOURCES) {
      const cols = columnsFor(r);
      assert.deepEqual(
        cols.filter((c) => c.format === 'name').map((c) => c.name),
        ['Name'],
        r.resource,
      );
      for (const c of cols) {
        assert.ok(
          ['string', 'integer', 'number', 'boolean', 'date'].includes(c.type),
          `${r.resource} ${c.name}`,
        );
        assert.ok(c.priority === 0 || c.priority === 1);
        assert.ok(c.description.length > 0);
      }
    }
    assert.equal(columnsFor(R.services)[0]?.type, 'string');
  });

  it('grid columns are CRD printer columns: Age is a date column', () => {
    const [, key, service, age] = columnsFor(R.servicegrids);
    assert.deepEqual(
      { type: key?.type, service: service?.type, age: age?.type, desc: age?.description },
      {
        type: 'string',
        service: 'string',
        age: 'date',
        desc: 'Custom resource definition column (in JSONPath format): .metadata.creationTimestamp',
      },
    );
    const [, , units, ready] = columnsFor(R.deploymentgrids);
    assert.deepEqual([units?.type, ready?.type], ['integer', 'integer']);
  });

  it('grid columns are the exported lists the CRDs are generated from, plus Name', () => {
    for (const [r, list] of [
      [R.servicegrids, SERVICE_GRID_PRINTER_COLUMNS],
      [R.deploymentgrids, DEPLOYMENT_GRID_PRINTER_COLUMNS],
    ] as const) {
      assert.deepEqual(
        columnsFor(r)
          .slice(1)
          .map((c) => c.name),
        list.map((c) => c.name),
      );
      assert.deepEqual(list.at(-1), { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' });
    }
  });

  it('columnsFor returns copies callers may change', () => {
    const cols = columnsFor(R.leases);
    cols[0] = { ...cols[0], name: 'X' } as (typeof cols)[number];
    assert.equal(columnsFor(R.leases)[0]?.name, 'Name');
  });
});

// ---- fallbacks and row conditions -------------------------------------------------------------

describe('fallbacks', () => {
  const base: ResourceInfo = { ...R.leases, group: 'example.com', resource: 'widgets', kind: 'Widget' };

  it('a custom resource without a printer gets Name and Age, as a CRD without printer columns', () => {
    const r: ResourceInfo = { ...base, custom: true };
    assert.deepEqual(headers(r), ['Name', 'Age']);
    assert.deepEqual(rowCells(r, kobj('w', {}), NOW), ['w', '3d']);
    assert.deepEqual(rowCells(r, kobj('w', {}, { creationTimestamp: 'yesterday' }), NOW), ['w', '<invalid>']);
  });

  it('a built-in kind without a printer gets Name and Created At', () => {
    assert.deepEqual(headers(base), ['Name', 'Created At']);
    assert.deepEqual(rowCells(base, kobj('w', {}), NOW), ['w', '2024-04-28T12:00:00Z']);
  });

  it('malformed objects print without throwing', () => {
    const junk = {
      metadata: {},
      spec: 'nope',
      status: [1, 2],
      subsets: 'x',
      endpoints: 7,
    } as unknown as KObject;
    for (const r of RESOURCES) {
      const cells = rowCells(r, junk, NOW);
      assert.equal(cells.length, columnsFor(r).length, r.resource);
    }
  });
});

describe('rowConditions', () => {
  it('marks finished pods Completed, nothing else', () => {
    assert.deepEqual(rowConditions(R.pods, pod({ phase: 'Succeeded' })), [
      {
        type: 'Completed',
        status: 'True',
        reason: 'Succeeded',
        message: 'The pod has completed successfully.',
      },
    ]);
    assert.equal(rowConditions(R.pods, pod({ phase: 'Failed' }))[0]?.reason, 'Failed');
    assert.deepEqual(rowConditions(R.pods, pod({})), []);
    assert.deepEqual(rowConditions(R.services, service({})), []);
  });
});
