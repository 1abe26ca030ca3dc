// A cluster written straight into an embedded (sqlite) store before the API server starts: namespaces,
// nodes across zones, ClusterIP Services with their ClusterIP allocation records, and Running, Ready
// pods behind them. Creating 100k pods through the API (create, then a status write, since create
// resets status) would take minutes; this takes seconds. Every object is what the registry would
// store: server-owned metadata (uid, creationTimestamp, generation where tracked), apiVersion/kind,
// every default applied, and it passes the same create (and status) validation, which is checked
// here for each object. What differs from objects created through the API: no managedFields.
import { randomUUID } from 'node:crypto';
import type { KObject } from '../../src/api/object.js';
import { applyDefaults } from '../../src/api/defaults/index.js';
import { groupVersion, mustFindResource, type ResourceInfo } from '../../src/api/resources.js';
import { validateCreate, validateStatusUpdate } from '../../src/api/validation/index.js';
import { CLUSTER_IP_PREFIX } from '../../src/apiserver/allocation/service-allocation.js';
import { encodeObject, objectKey } from '../../src/apiserver/codec.js';
import { rfc3339, tracksGeneration } from '../../src/apiserver/registry/object-meta.js';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store.js';

export const NAMESPACES = mustFindResource('', 'namespaces');
export const NODES = mustFindResource('', 'nodes');
export const SERVICES = mustFindResource('', 'services');
export const PODS = mustFindResource('', 'pods');
export const ENDPOINTSLICES = mustFindResource('discovery.k8s.io', 'endpointslices');

export interface ClusterShape {
  readonly nodes: number;
  readonly zones: number;
  readonly namespaces: number;
  /** Services in all, spread evenly over the namespaces. */
  readonly services: number;
  readonly podsPerService: number;
  /** The apiserver's --service-cluster-ip-range; Services get addresses from its upper half. */
  readonly serviceCidr: '10.96.0.0/12';
  /** Annotations for Service s (topology rules, say); none when absent or undefined. */
  readonly serviceAnnotations?: (s: number) => Record<string, string> | undefined;
}

export const namespaceName = (k: number): string => `bench-ep-${String(k).padStart(3, '0')}`;
export const serviceName = (s: number): string => `svc-${String(s).padStart(5, '0')}`;
export const podName = (s: number, r: number): string => `${serviceName(s)}-${r}`;
export const nodeName = (n: number): string => `node-${String(n).padStart(4, '0')}`;
export const zoneName = (z: number): string => `zone-${z}`;

/** Service s lives in namespace s mod namespaces (so every namespace holds services/namespaces). */
export const namespaceOf = (shape: ClusterShape, s: number): string => namespaceName(s % shape.namespaces);

/** "ns/name" of pod r of service s. */
export const podKey = (shape: ClusterShape, s: number, r: number): string =>
  `${namespaceOf(shape, s)}/${podName(s, r)}`;

const ipv4 = (n: number): string => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/** 10.100.0.1 + s: inside 10.96.0.0/12, far above its static block and the kubernetes Service's .1. */
const serviceIP = (s: number): string => ipv4(((10 << 24) | (100 << 16)) + 1 + s);
/** Node n's pod CIDR is 10.(244 + n/256).(n%256).0/24; its k-th pod gets .(k+2). */
const nodePodCidr = (n: number): string => `10.${244 + (n >> 8)}.${n & 255}.0/24`;
const podIP = (n: number, k: number): string => `10.${244 + (n >> 8)}.${n & 255}.${k + 2}`;
const nodeIP = (n: number): string => `172.16.${n >> 7}.${(n & 127) + 1}`;

export interface PreloadFigures {
  seconds: number;
  objects: number;
  bytes: Record<'namespaces' | 'nodes' | 'services' | 'pods' | 'slices' | 'allocations', number>;
  avgPodBytes: number;
  revision: number;
}

interface Meta {
  uid: string;
  creationTimestamp: string;
}

/** Server-owned fields, defaults, and the registry's create (+ status) validation; throws if invalid. */
function finish(r: ResourceInfo, obj: KObject, checkStatus: boolean): KObject {
  obj.apiVersion = groupVersion(r);
  obj.kind = r.kind;
  if (tracksGeneration(r)) obj.metadata.generation = 1;
  applyDefaults(r, obj);
  const errs = validateCreate(r, obj);
  if (checkStatus) {
    const { status: _s, ...withoutStatus } = obj as KObject & { status?: unknown };
    errs.push(...validateStatusUpdate(r, obj, { ...withoutStatus, status: {} } as KObject));
  }
  if (errs.length > 0) {
    throw new Error(
      `preload: ${r.kind} ${obj.metadata.namespace ?? ''}/${obj.metadata.name}: ${JSON.stringify(errs).slice(0, 600)}`,
    );
  }
  return obj;
}

function namespaceObj(name: string, m: Meta): KObject {
  return { metadata: { name, ...m }, spec: {}, status: {} } as KObject;
}

function nodeObj(shape: ClusterShape, n: number, m: Meta): KObject {
  const name = nodeName(n);
  const capacity = { cpu: '8', memory: '32Gi', pods: '250', 'ephemeral-storage': '100Gi' };
  const cond = (type: string, status: string, reason: string): Record<string, string> => ({
    type,
    status,
    reason,
    message: reason,
    lastHeartbeatTime: m.creationTimestamp,
    lastTransitionTime: m.creationTimestamp,
  });
  return {
    metadata: {
      name,
      ...m,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'topology.kubernetes.io/region': 'region-0',
        'topology.kubernetes.io/zone': zoneName(n % shape.zones),
      },
    },
    spec: { podCIDR: nodePodCidr(n), podCIDRs: [nodePodCidr(n)] },
    status: {
      capacity,
      allocatable: { ...capacity, cpu: '7800m', memory: '31Gi' },
      conditions: [
        cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID'),
        cond('Ready', 'True', 'KubeletReady'),
      ],
      addresses: [
        { type: 'InternalIP', address: nodeIP(n) },
        { type: 'Hostname', address: name },
      ],
      nodeInfo: {
        machineID: m.uid.replace(/-/g, ''),
        systemUUID: m.uid,
        bootID: m.uid,
        kernelVersion: '6.1.0',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        containerRuntimeVersion: 'containerd://1.7.0',
        kubeletVersion: 'v1.33.0',
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  } as unknown as KObject;
}

function serviceObj(shape: ClusterShape, s: number, m: Meta): KObject {
  const name = serviceName(s);
  const ip = serviceIP(s);
  const annotations = shape.serviceAnnotations?.(s);
  return {
    metadata: {
      name,
      namespace: namespaceOf(shape, s),
      ...m,
      labels: { app: name, bench: 'endpoints' },
      ...(annotations === undefined ? {} : { annotations }),
    },
    spec: {
      type: 'ClusterIP',
      selector: { app: name },
      ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
      clusterIP: ip,
      clusterIPs: [ip],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
    },
    status: { loadBalancer: {} },
  } as unknown as KObject;
}

/** Where pod r of service s runs (podObj's placement): its node's index and its IP. */
export function podPlacement(shape: ClusterShape, s: number, r: number): { node: number; ip: string } {
  const j = s * shape.podsPerService + r;
  const n = j % shape.nodes;
  return { node: n, ip: podIP(n, Math.floor(j / shape.nodes)) };
}

/** Pod r of service s: on node (s·podsPerService + r) mod nodes, so a service's pods spread over zones. */
function podObj(shape: ClusterShape, s: number, r: number, m: Meta): KObject {
  const j = s * shape.podsPerService + r;
  const n = j % shape.nodes;
  const k = Math.floor(j / shape.nodes);
  const t = m.creationTimestamp;
  const cond = (type: string): Record<string, unknown> => ({
    type,
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: t,
  });
  const image = 'registry.k8s.io/e2e-test-images/agnhost:2.53';
  return {
    metadata: {
      name: podName(s, r),
      namespace: namespaceOf(shape, s),
      ...m,
      labels: { app: serviceName(s), 'pod-template-hash': '5d8f9c7b6d' },
    },
    spec: {
      nodeName: nodeName(n),
      containers: [
        {
          name: 'app',
          image,
          args: ['netexec', '--http-port=8080'],
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          resources: { requests: { cpu: '10m', memory: '16Mi' } },
          readinessProbe: { httpGet: { path: '/healthz', port: 'http' } },
        },
      ],
    },
    status: {
      phase: 'Running',
      conditions: [
        cond('PodReadyToStartContainers'),
        cond('Initialized'),
        cond('Ready'),
        cond('ContainersReady'),
        cond('PodScheduled'),
      ],
      hostIP: nodeIP(n),
      hostIPs: [{ ip: nodeIP(n) }],
      podIP: podIP(n, k),
      podIPs: [{ ip: podIP(n, k) }],
      startTime: t,
      qosClass: 'Burstable',
      containerStatuses: [
        {
          name: 'app',
          state: { running: { startedAt: t } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image,
          imageID: `${image.split(':')[0]}@sha256:${'0'.repeat(64)}`,
          containerID: `containerd://${m.uid.replace(/-/g, '')}${'0'.repeat(32)}`,
          started: true,
        },
      ],
    },
  } as unknown as KObject;
}

/**
 * The EndpointSlice the endpointslice controller writes for service s once its pods are Ready (one slice:
 * podsPerService ≤ 100): its labels, owner, trigger-time annotation, and one endpoint per pod with the
 * pod's address, conditions, node, zone and targetRef (the pod's uid is made up: no pod is stored).
 */
function sliceObj(shape: ClusterShape, s: number, m: Meta, serviceUid: string): KObject {
  const name = serviceName(s);
  const namespace = namespaceOf(shape, s);
  const endpoints = Array.from({ length: shape.podsPerService }, (_, r) => {
    const { node, ip } = podPlacement(shape, s, r);
    return {
      addresses: [ip],
      conditions: { ready: true, serving: true, terminating: false },
      targetRef: { kind: 'Pod', namespace, name: podName(s, r), uid: randomUUID() },
      nodeName: nodeName(node),
      zone: zoneName(node % shape.zones),
    };
  });
  return {
    metadata: {
      name: `${name}-${m.uid.slice(0, 5)}`,
      generateName: `${name}-`,
      namespace,
      ...m,
      labels: {
        app: name,
        bench: 'endpoints',
        'kubernetes.io/service-name': name,
        'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io',
      },
      annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': m.creationTimestamp },
      ownerReferences: [
        {
          apiVersion: 'v1',
          kind: 'Service',
          name,
          uid: serviceUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    addressType: 'IPv4',
    endpoints,
    ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
  } as unknown as KObject;
}

/**
 * Writes the cluster into the sqlite store in `dataDir` (which must not be open elsewhere), in group
 * commits of `batch` writes, and closes it. With `endpoints: 'slices'` each Service gets the
 * EndpointSlice its Ready pods would make instead of the pods (for an API server without controllers).
 */
export async function preloadCluster(
  dataDir: string,
  shape: ClusterShape,
  log: (line: string) => void,
  { batch = 4096, endpoints = 'pods' }: { batch?: number; endpoints?: 'pods' | 'slices' } = {},
): Promise<PreloadFigures> {
  if (Math.ceil((shape.services * shape.podsPerService) / shape.nodes) > 250)
    throw new Error('preload: at most 250 pods per node (one /24 each)');
  if (shape.services > 60_000) throw new Error('preload: at most 60,000 services');
  const t0 = performance.now();
  const store = SqliteStore.open({ dataDir, synchronous: 'NORMAL', maxBatch: batch });
  const bytes = { namespaces: 0, nodes: 0, services: 0, pods: 0, slices: 0, allocations: 0 };
  let objects = 0;
  let pending: Array<Promise<unknown>> = [];
  const now = rfc3339(Date.now());
  const meta = (): Meta => ({ uid: randomUUID(), creationTimestamp: now });
  const put = async (key: string, value: Uint8Array, kind: keyof typeof bytes): Promise<void> => {
    bytes[kind] += value.byteLength;
    objects++;
    pending.push(store.create(key, value));
    if (pending.length >= batch) {
      const p = pending;
      pending = [];
      await Promise.all(p);
    }
  };
  const putObj = (r: ResourceInfo, obj: KObject, kind: keyof typeof bytes, status: boolean): Promise<void> =>
    put(
      objectKey(r, obj.metadata.namespace ?? '', obj.metadata.name!),
      encodeObject(finish(r, obj, status)),
      kind,
    );
  try {
    for (let k = 0; k < shape.namespaces; k++)
      await putObj(NAMESPACES, namespaceObj(namespaceName(k), meta()), 'namespaces', false);
    for (let n = 0; n < shape.nodes; n++) await putObj(NODES, nodeObj(shape, n, meta()), 'nodes', true);
    const enc = new TextEncoder();
    for (let s = 0; s < shape.services; s++) {
      const svc = serviceObj(shape, s, meta());
      await putObj(SERVICES, svc, 'services', false);
      const owner = { namespace: svc.metadata.namespace, name: svc.metadata.name, uid: svc.metadata.uid };
      await put(`${CLUSTER_IP_PREFIX}${serviceIP(s)}`, enc.encode(JSON.stringify(owner)), 'allocations');
      if (endpoints === 'slices')
        await putObj(ENDPOINTSLICES, sliceObj(shape, s, meta(), svc.metadata.uid!), 'slices', false);
      else
        for (let r = 0; r < shape.podsPerService; r++)
          await putObj(PODS, podObj(shape, s, r, meta()), 'pods', true);
      if ((s + 1) % 2000 === 0) log(`preload: ${s + 1} of ${shape.services} services and their ${endpoints}`);
    }
    await Promise.all(pending);
    const revision = await store.currentRevision();
    const pods = shape.services * shape.podsPerService;
    return {
      seconds: (performance.now() - t0) / 1000,
      objects,
      bytes,
      avgPodBytes: pods === 0 ? 0 : bytes.pods / pods,
      revision,
    };
  } finally {
    await Promise.allSettled(pending);
    await store.close();
  }
}
