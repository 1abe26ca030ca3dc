// Table tests: each case defaults an object (unless `raw`), validates it, and compares the exact
// `<field>: <message>` texts kube-apiserver would return, in order.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorString } from '../field-errors.js';
import type { KObject } from '../object.js';
import { RESOURCES, type ResourceInfo } from '../resources.js';
import { applyDefaults, prepareForUpdate } from '../defaults/index.js';
import { validateCreate, validateStatusUpdate, validateUpdate } from './index.js';

type Kind =
  | 'Service'
  | 'Pod'
  | 'Node'
  | 'Namespace'
  | 'Endpoints'
  | 'EndpointSlice'
  | 'Event'
  | 'events/Event'
  | 'Lease'
  | 'Deployment'
  | 'ServiceGrid'
  | 'DeploymentGrid';

const GROUPS: Record<Kind, [string, string]> = {
  Service: ['', 'Service'],
  Pod: ['', 'Pod'],
  Node: ['', 'Node'],
  Namespace: ['', 'Namespace'],
  Endpoints: ['', 'Endpoints'],
  EndpointSlice: ['discovery.k8s.io', 'EndpointSlice'],
  Event: ['', 'Event'],
  'events/Event': ['events.k8s.io', 'Event'],
  Lease: ['coordination.k8s.io', 'Lease'],
  Deployment: ['apps', 'Deployment'],
  ServiceGrid: ['superedge.io', 'ServiceGrid'],
  DeploymentGrid: ['superedge.io', 'DeploymentGrid'],
};

const res = (k: Kind): ResourceInfo => {
  const [group, kind] = GROUPS[k];
  const r = RESOURCES.find((x) => x.group === group && x.kind === kind);
  assert.ok(r, k);
  return r;
};

interface Case {
  readonly name: string;
  readonly kind: Kind;
  readonly obj: unknown;
  readonly want: readonly string[];
  /** Skip defaulting. */
  readonly raw?: boolean;
  /** Validate as an update (or a status update) of this stored object. */
  readonly old?: unknown;
  readonly status?: boolean;
}

function run(c: Case): string[] {
  const r = res(c.kind);
  const obj = structuredClone(c.obj) as KObject;
  if (c.old === undefined) {
    if (c.raw !== true) applyDefaults(r, obj);
    return validateCreate(r, obj).map(fieldErrorString);
  }
  const old = structuredClone(c.old) as KObject;
  applyDefaults(r, old);
  if (c.raw !== true) {
    prepareForUpdate(r, obj, old);
    applyDefaults(r, obj);
  }
  return (c.status === true ? validateStatusUpdate(r, obj, old) : validateUpdate(r, obj, old)).map(
    fieldErrorString,
  );
}

// Upstream's messages, built from their parts so a typo shows up once.
const eg = (...xs: string[]): string => `e.g. '${xs.join("',  or '")}', `;
const LABEL_MSG = `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (${eg('my-name', '123-abc')}regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`;
const SUBDOMAIN_MSG = `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (${eg('example.com')}regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`;
const DNS1035_MSG = `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (${eg('my-name', 'abc-123')}regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`;
const NAME_PART_MSG = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (${eg('MyName', 'my.name', '123-abc')}regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`;
const LABEL_VALUE_MSG = `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (${eg('MyValue', 'my_value', '12345')}regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`;
const PORT_RANGE = 'must be between 1 and 65535, inclusive';
const IP_MSG = 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)';
const PROTOCOLS = 'supported values: "SCTP", "TCP", "UDP"';

const meta = (name: string, extra: object = {}): object => ({ name, namespace: 'default', ...extra });
const svc = (spec: object, m: object = {}): object => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: meta('web', m),
  spec,
});
const port80 = { port: 80, targetPort: 8080 };
const ctr = (extra: object = {}): object => ({ name: 'app', image: 'nginx:1.25', ...extra });
const pod = (spec: object, m: object = {}): object => ({
  metadata: meta('p', m),
  spec: { containers: [ctr()], ...spec },
});
const deploySpec = (extra: object = {}): object => ({
  selector: { matchLabels: { app: 'web' } },
  template: { metadata: { labels: { app: 'web' } }, spec: { containers: [ctr()] } },
  ...extra,
});
const deploy = (extra: object = {}): object => ({ metadata: meta('d'), spec: deploySpec(extra) });
const slice = (extra: object): object => ({ metadata: meta('s'), addressType: 'IPv4', ...extra });
const v1event = (extra: object = {}): object => ({
  metadata: meta('n1.17a'),
  regarding: { kind: 'Node', name: 'n1' },
  eventTime: '2024-05-01T10:00:00.123456Z',
  type: 'Normal',
  reason: 'Started',
  action: 'Sync',
  reportingController: 'svcplane.io/proxy',
  reportingInstance: 'proxy-n1',
  note: 'synced',
  ...extra,
});

const cases: Case[] = [
  // ---- Service ----
  { name: 'service without ports', kind: 'Service', obj: svc({}), want: ['spec.ports: Required value'] },
  {
    name: 'valid ClusterIP service',
    kind: 'Service',
    obj: svc({ ports: [port80], selector: { app: 'web' } }),
    want: [],
  },
  { name: 'headless service needs no ports', kind: 'Service', obj: svc({ clusterIP: 'None' }), want: [] },
  {
    name: 'port 0 (targetPort defaults to it)',
    kind: 'Service',
    obj: svc({ ports: [{ port: 0 }] }),
    want: [
      `spec.ports[0].port: Invalid value: 0: ${PORT_RANGE}`,
      `spec.ports[0].targetPort: Invalid value: 0: ${PORT_RANGE}`,
    ],
  },
  {
    name: 'port above 65535',
    kind: 'Service',
    obj: svc({ ports: [{ port: 70000, targetPort: 80 }] }),
    want: [`spec.ports[0].port: Invalid value: 70000: ${PORT_RANGE}`],
  },
  {
    name: 'names required with several ports',
    kind: 'Service',
    obj: svc({ ports: [{ port: 80 }, { port: 443 }] }),
    want: ['spec.ports[0].name: Required value', 'spec.ports[1].name: Required value'],
  },
  {
    name: 'duplicate port names',
    kind: 'Service',
    obj: svc({
      ports: [
        { name: 'http', port: 80 },
        { name: 'http', port: 81 },
      ],
    }),
    want: ['spec.ports[1].name: Duplicate value: "http"'],
  },
  {
    name: 'port name not a DNS label',
    kind: 'Service',
    obj: svc({ ports: [{ name: 'Web', port: 80 }] }),
    want: [`spec.ports[0].name: Invalid value: "Web": ${LABEL_MSG}`],
  },
  {
    name: 'unsupported protocol',
    kind: 'Service',
    obj: svc({ ports: [{ port: 80, protocol: 'HTTP' }] }),
    want: [`spec.ports[0].protocol: Unsupported value: "HTTP": ${PROTOCOLS}`],
  },
  {
    name: 'named targetPort must be an IANA_SVC_NAME',
    kind: 'Service',
    obj: svc({ ports: [{ port: 80, targetPort: 'http_port' }] }),
    want: [
      'spec.ports[0].targetPort: Invalid value: "http_port": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    ],
  },
  {
    name: 'numeric targetPort out of range',
    kind: 'Service',
    obj: svc({ ports: [{ port: 80, targetPort: 65536 }] }),
    want: [`spec.ports[0].targetPort: Invalid value: 65536: ${PORT_RANGE}`],
  },
  {
    name: 'duplicate port and protocol',
    kind: 'Service',
    obj: svc({
      ports: [
        { name: 'a', port: 53, protocol: 'UDP' },
        { name: 'b', port: 53, protocol: 'TCP' },
        { name: 'c', port: 53, protocol: 'UDP' },
      ],
    }),
    want: ['spec.ports[2]: Duplicate value: {"protocol":"UDP","port":53}'],
  },
  {
    name: 'unsupported type',
    kind: 'Service',
    obj: svc({ ports: [port80], type: 'Internal' }),
    want: [
      'spec.type: Unsupported value: "Internal": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
    ],
  },
  {
    name: 'unsupported session affinity',
    kind: 'Service',
    obj: svc({ ports: [port80], sessionAffinity: 'Sticky' }),
    want: ['spec.sessionAffinity: Unsupported value: "Sticky": supported values: "ClientIP", "None"'],
  },
  {
    name: 'ClientIP timeout out of range',
    kind: 'Service',
    obj: svc({
      ports: [port80],
      sessionAffinity: 'ClientIP',
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 0 } },
    }),
    want: [
      'spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400',
    ],
  },
  {
    name: 'sessionAffinityConfig with None',
    kind: 'Service',
    obj: svc({ ports: [port80], sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } } }),
    want: ['spec.sessionAffinityConfig: Forbidden: must not be set when session affinity is None'],
  },
  {
    name: 'clusterIP not an IP',
    kind: 'Service',
    obj: svc({ ports: [port80], clusterIP: 'foo' }),
    want: [`spec.clusterIPs[0]: Invalid value: "foo": ${IP_MSG}`],
  },
  {
    name: 'clusterIP with a leading zero',
    kind: 'Service',
    obj: svc({ ports: [port80], clusterIP: '10.96.0.010' }),
    want: [`spec.clusterIPs[0]: Invalid value: "10.96.0.010": ${IP_MSG}`],
  },
  {
    name: 'clusterIPs[0] must match clusterIP',
    kind: 'Service',
    obj: svc({ ports: [port80], clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.6'] }),
    want: ['spec.clusterIPs: Invalid value: []string{"10.96.0.6"}: first value must match `clusterIP`'],
  },
  {
    name: 'clusterIPs without clusterIP',
    kind: 'Service',
    obj: svc({ ports: [port80], clusterIPs: ['10.96.0.6'] }),
    want: [
      'spec.clusterIPs: Invalid value: []string{"10.96.0.6"}: must be empty when `clusterIP` is not specified',
    ],
  },
  {
    name: "'None' must be alone",
    kind: 'Service',
    obj: svc({ ports: [port80], clusterIP: 'None', clusterIPs: ['None', '10.96.0.6'] }),
    want: [
      'spec.clusterIPs: Invalid value: []string{"None", "10.96.0.6"}: \'None\' must be the first and only value',
    ],
  },
  {
    name: 'two IPs of one family',
    kind: 'Service',
    obj: svc({ ports: [port80], clusterIP: '10.96.0.5', clusterIPs: ['10.96.0.5', '10.96.0.6'] }),
    want: [
      'spec.clusterIPs: Invalid value: []string{"10.96.0.5", "10.96.0.6"}: may specify no more than one IP for each IP family',
    ],
  },
  {
    name: 'ipFamilies unsupported and duplicated',
    kind: 'Service',
    obj: svc({ ports: [port80], ipFamilies: ['IPv4', 'IPv5', 'IPv4'] }),
    want: [
      'spec.ipFamilies[1]: Unsupported value: "IPv5": supported values: "IPv4", "IPv6"',
      'spec.ipFamilies[2]: Duplicate value: "IPv4"',
    ],
  },
  {
    name: 'ipFamilyPolicy unsupported',
    kind: 'Service',
    obj: svc({ ports: [port80], ipFamilyPolicy: 'Dual' }),
    want: [
      'spec.ipFamilyPolicy: Unsupported value: "Dual": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"',
    ],
  },
  {
    name: 'clusterIP family mismatch',
    kind: 'Service',
    obj: svc({ ports: [port80], clusterIP: '10.96.0.5', ipFamilies: ['IPv6'] }),
    want: [
      'spec.clusterIPs[0]: Invalid value: "10.96.0.5": expected an IPv6 value as indicated by `ipFamilies[0]`',
    ],
  },
  {
    name: 'nodePort on a ClusterIP service',
    kind: 'Service',
    obj: svc({ ports: [{ port: 80, nodePort: 30080 }] }),
    want: ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
  },
  {
    name: 'headless NodePort',
    kind: 'Service',
    obj: svc({ type: 'NodePort', clusterIP: 'None', ports: [port80] }),
    want: ['spec.clusterIPs[0]: Invalid value: "None": may not be set to \'None\' for NodePort services'],
  },
  {
    name: 'duplicate nodePort for one protocol (not across protocols)',
    kind: 'Service',
    obj: svc({
      type: 'NodePort',
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP', nodePort: 30053 },
        { name: 'dns-tcp', port: 53, protocol: 'TCP', nodePort: 30053 },
        { name: 'x', port: 54, protocol: 'TCP', nodePort: 30053 },
      ],
    }),
    want: ['spec.ports[2].nodePort: Duplicate value: 30053'],
  },
  {
    name: 'ExternalName without externalName, with clusterIP',
    kind: 'Service',
    obj: svc({ type: 'ExternalName', clusterIP: '10.96.0.9' }),
    want: [
      'spec.clusterIPs: Forbidden: may not be set for ExternalName services',
      'spec.externalName: Required value',
    ],
  },
  {
    name: 'ExternalName with a trailing dot is fine',
    kind: 'Service',
    obj: svc({ type: 'ExternalName', externalName: 'db.example.com.' }),
    want: [],
  },
  {
    name: 'ExternalName not a subdomain',
    kind: 'Service',
    obj: svc({ type: 'ExternalName', externalName: 'Bad_Host' }),
    want: [`spec.externalName: Invalid value: "Bad_Host": ${SUBDOMAIN_MSG}`],
  },
  {
    name: 'external IPs must be valid and not special',
    kind: 'Service',
    obj: svc({ ports: [port80], externalIPs: ['1.2.3', '127.0.0.1', '203.0.113.7'] }),
    want: [
      `spec.externalIPs[0]: Invalid value: "1.2.3": ${IP_MSG}`,
      'spec.externalIPs[1]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
    ],
  },
  {
    name: 'externalTrafficPolicy on an internal service',
    kind: 'Service',
    obj: svc({ ports: [port80], externalTrafficPolicy: 'Local' }),
    want: [
      'spec.externalTrafficPolicy: Invalid value: "Local": may only be set for externally-accessible services',
    ],
  },
  {
    name: 'externalTrafficPolicy unsupported',
    kind: 'Service',
    obj: svc({ type: 'NodePort', ports: [port80], externalTrafficPolicy: 'Nearest' }),
    want: ['spec.externalTrafficPolicy: Unsupported value: "Nearest": supported values: "Cluster", "Local"'],
  },
  {
    name: 'internalTrafficPolicy unsupported',
    kind: 'Service',
    obj: svc({ ports: [port80], internalTrafficPolicy: 'Node' }),
    want: ['spec.internalTrafficPolicy: Unsupported value: "Node": supported values: "Cluster", "Local"'],
  },
  {
    name: 'trafficDistribution unsupported',
    kind: 'Service',
    obj: svc({ ports: [port80], trafficDistribution: 'Anywhere' }),
    want: [
      'spec.trafficDistribution: Unsupported value: "Anywhere": supported values: "PreferClose", "PreferSameZone", "PreferSameNode"',
    ],
  },
  {
    name: 'topologyKeys: hostname, zone, then any',
    kind: 'Service',
    obj: svc({
      ports: [port80],
      topologyKeys: ['kubernetes.io/hostname', 'topology.kubernetes.io/zone', '*'],
    }),
    want: [],
  },
  {
    name: 'topologyKeys: any not last, a duplicate, a bad key (the whole list as the value)',
    kind: 'Service',
    obj: svc({ ports: [port80], topologyKeys: ['*', 'zone', 'zone', 'bad key'] }),
    want: [
      'spec.topologyKeys[0]: Invalid value: "*": "*" must be the last value specified',
      'spec.topologyKeys[2]: Duplicate value: "zone"',
      `spec.topologyKeys[3]: Invalid value: []string{"*", "zone", "zone", "bad key"}: ${NAME_PART_MSG}`,
    ],
  },
  {
    name: 'topologyKeys: a non-string entry is only a type error',
    kind: 'Service',
    obj: svc({ ports: [port80], topologyKeys: ['zone', 7] }),
    want: ['spec.topologyKeys[1]: Invalid value: 7: must be of type string'],
  },
  {
    name: 'topologyKeys with externalTrafficPolicy Local',
    kind: 'Service',
    obj: svc({ type: 'NodePort', ports: [port80], externalTrafficPolicy: 'Local', topologyKeys: ['*'] }),
    want: ['spec.topologyKeys: Forbidden: may not be specified when `externalTrafficPolicy=Local`'],
  },
  {
    name: 'LoadBalancer-only fields on ClusterIP',
    kind: 'Service',
    obj: svc({
      ports: [port80],
      allocateLoadBalancerNodePorts: false,
      loadBalancerClass: 'example.com/lb',
      healthCheckNodePort: 30999,
    }),
    want: [
      "spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'",
      "spec.loadBalancerClass: Forbidden: may only be used when `type` is 'LoadBalancer'",
      "spec.healthCheckNodePort: Invalid value: 30999: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
    ],
  },
  {
    name: 'undefaulted LoadBalancer (upstream reports allocateLoadBalancerNodePorts without spec.)',
    kind: 'Service',
    raw: true,
    obj: svc({
      type: 'LoadBalancer',
      ports: [{ port: 80, targetPort: 80, protocol: 'TCP' }],
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
      externalTrafficPolicy: 'Cluster',
    }),
    want: ['allocateLoadBalancerNodePorts: Required value'],
  },
  {
    name: 'undefaulted service',
    kind: 'Service',
    raw: true,
    obj: svc({ ports: [{ port: 80, targetPort: 80 }] }),
    want: [
      'spec.ports[0].protocol: Required value',
      'spec.sessionAffinity: Required value',
      'spec.type: Required value',
    ],
  },
  {
    name: 'source ranges only for LoadBalancer',
    kind: 'Service',
    obj: svc({ ports: [port80], loadBalancerSourceRanges: ['10.0.0.0/8', '10.0.0.0/33'] }),
    want: [
      "spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'",
      'spec.LoadBalancerSourceRanges[1]: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
    ],
  },
  {
    name: 'selector label value',
    kind: 'Service',
    obj: svc({ ports: [port80], selector: { app: 'bad value' } }),
    want: [`spec.selector: Invalid value: "bad value": ${LABEL_VALUE_MSG}`],
  },
  {
    name: 'service names are DNS-1035 labels',
    kind: 'Service',
    obj: svc({ ports: [port80] }, { name: '1web' }),
    want: [`metadata.name: Invalid value: "1web": ${DNS1035_MSG}`],
  },
  {
    name: 'generateName prefix may end in a dash',
    kind: 'Service',
    obj: svc({ ports: [port80] }, { name: undefined, generateName: 'web-' }),
    want: [],
  },
  {
    name: 'topology annotations must agree',
    kind: 'Service',
    obj: svc(
      { ports: [port80] },
      {
        annotations: {
          'service.kubernetes.io/topology-mode': 'Auto',
          'service.kubernetes.io/topology-aware-hints': 'Disabled',
        },
      },
    ),
    want: [
      'metadata.annotations[service.kubernetes.io/topology-mode]: Invalid value: "Auto": must match annotations[service.kubernetes.io/topology-aware-hints] when both are specified',
    ],
  },
  {
    name: 'wrong JSON types are reported, not thrown',
    kind: 'Service',
    obj: svc({ ports: 'http', selector: ['a'] }),
    want: [
      'spec.ports: Invalid value: "http": must be of type array',
      'spec.selector: Invalid value: []string{"a"}: must be of type object',
      'spec.ports: Required value',
    ],
  },

  // ---- ObjectMeta ----
  {
    name: 'name or generateName is required',
    kind: 'Service',
    obj: svc({ ports: [port80] }, { name: undefined }),
    want: ['metadata.name: Required value: name or generateName is required'],
  },
  {
    name: 'namespaced objects need a namespace',
    kind: 'Service',
    obj: { metadata: { name: 'web' }, spec: { ports: [port80] } },
    want: ['metadata.namespace: Required value'],
  },
  {
    name: 'cluster-scoped objects refuse one',
    kind: 'Node',
    obj: { metadata: { name: 'n1', namespace: 'default' } },
    want: ['metadata.namespace: Forbidden: not allowed on this type'],
  },
  {
    name: 'label keys and values',
    kind: 'Pod',
    obj: pod({}, { labels: { '-bad': 'ok', good: 'bad value' } }),
    want: [
      `metadata.labels: Invalid value: "-bad": ${NAME_PART_MSG}`,
      `metadata.labels: Invalid value: "bad value": ${LABEL_VALUE_MSG}`,
    ],
  },
  {
    name: 'annotation keys are checked case-insensitively, sizes summed',
    kind: 'Pod',
    obj: pod({}, { annotations: { 'Example.COM/Note': 'x', big: 'x'.repeat(262144) } }),
    want: ['metadata.annotations: Too long: must have at most 262144 bytes'],
  },
  {
    name: 'owner references need apiVersion, kind, name and uid',
    kind: 'Pod',
    obj: pod({}, { ownerReferences: [{ apiVersion: 'apps/', kind: '', name: '', uid: '' }] }),
    want: [
      'metadata.ownerReferences.apiVersion: Invalid value: "apps/": version must not be empty',
      'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
      'metadata.ownerReferences.name: Invalid value: "": must not be empty',
      'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
    ],
  },
  {
    name: 'only one controller owner',
    kind: 'Pod',
    obj: pod(
      {},
      {
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'a', uid: '1', controller: true },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'b', uid: '2', controller: true },
        ],
      },
    ),
    want: [
      'metadata.ownerReferences: Invalid value: [{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"a","uid":"1","controller":true},{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"b","uid":"2","controller":true}]: Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/a and ReplicaSet/b',
    ],
  },
  {
    name: 'finalizers must be qualified or standard',
    kind: 'Pod',
    obj: pod({}, { finalizers: ['foo', 'example.com/keep', 'foregroundDeletion'] }),
    want: [
      'metadata.finalizers[0]: Invalid value: "foo": name is neither a standard finalizer name nor is it fully qualified',
    ],
  },
  {
    name: 'negative generation',
    kind: 'Pod',
    obj: pod({}, { generation: -1 }),
    want: ['metadata.generation: Invalid value: -1: must be greater than or equal to 0'],
  },

  // ---- Pod ----
  { name: 'valid pod', kind: 'Pod', obj: pod({}), want: [] },
  {
    name: 'pod without containers',
    kind: 'Pod',
    obj: pod({ containers: [] }),
    want: ['spec.containers: Required value'],
  },
  {
    name: 'container without image',
    kind: 'Pod',
    obj: pod({ containers: [{ name: 'app' }] }),
    want: ['spec.containers[0].image: Required value'],
  },
  {
    name: 'container names: DNS label, unique',
    kind: 'Pod',
    obj: pod({ containers: [ctr({ name: 'App' }), ctr({ name: 'x' }), ctr({ name: 'x' })] }),
    want: [
      `spec.containers[0].name: Invalid value: "App": ${LABEL_MSG}`,
      'spec.containers[2].name: Duplicate value: "x"',
    ],
  },
  {
    name: 'restart policy',
    kind: 'Pod',
    obj: pod({ restartPolicy: 'Sometimes' }),
    want: [
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    ],
  },
  {
    name: 'container ports',
    kind: 'Pod',
    obj: pod({ containers: [ctr({ ports: [{ name: 'web--1', containerPort: 0, protocol: 'HTTP' }] })] }),
    want: [
      'spec.containers[0].ports[0].name: Invalid value: "web--1": must not contain consecutive hyphens (--)',
      'spec.containers[0].ports[0].containerPort: Required value',
      `spec.containers[0].ports[0].protocol: Unsupported value: "HTTP": ${PROTOCOLS}`,
    ],
  },
  {
    name: 'node name is a subdomain',
    kind: 'Pod',
    obj: pod({ nodeName: 'Node_1' }),
    want: [`spec.nodeName: Invalid value: "Node_1": ${SUBDOMAIN_MSG}`],
  },
  {
    name: 'volume mounts must name a volume',
    kind: 'Pod',
    obj: pod({
      volumes: [{ name: 'data' }],
      containers: [ctr({ volumeMounts: [{ name: 'cache', mountPath: '/c' }, { name: 'data' }] })],
    }),
    want: [
      'spec.containers[0].volumeMounts[0].name: Not found: "cache"',
      'spec.containers[0].volumeMounts[1].mountPath: Required value',
    ],
  },
  {
    name: 'dnsPolicy None needs dnsConfig',
    kind: 'Pod',
    obj: pod({ dnsPolicy: 'None' }),
    want: ['spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None'],
  },
  {
    name: 'tolerations',
    kind: 'Pod',
    obj: pod({
      tolerations: [
        { key: 'k', operator: 'Exists', value: 'v' },
        { operator: 'Equal', effect: 'Never' },
      ],
    }),
    want: [
      'spec.tolerations[0].operator: Invalid value: {"key":"k","operator":"Exists","value":"v"}: value must be empty when `operator` is \'Exists\'',
      'spec.tolerations[1].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all values and all keys"',
      'spec.tolerations[1].effect: Unsupported value: "Never": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    ],
  },
  {
    name: 'hostNetwork: hostPort must match containerPort',
    kind: 'Pod',
    obj: pod({ hostNetwork: true, containers: [ctr({ ports: [{ containerPort: 80, hostPort: 8080 }] })] }),
    want: [
      'spec.containers[0].ports[0].hostPort: Invalid value: 8080: must match `containerPort` when `hostNetwork` is true',
    ],
  },
  {
    name: 'image pull policy',
    kind: 'Pod',
    obj: pod({ containers: [ctr({ imagePullPolicy: 'Sometimes' })] }),
    want: [
      'spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": supported values: "Always", "IfNotPresent", "Never"',
    ],
  },

  // ---- Node ----
  {
    name: 'valid node',
    kind: 'Node',
    obj: { metadata: { name: 'edge-1' }, spec: { podCIDRs: ['10.244.1.0/24', 'fd00:1::/64'] } },
    want: [],
  },
  {
    name: 'node taints (reported under metadata.taints, as upstream)',
    kind: 'Node',
    obj: {
      metadata: { name: 'n1' },
      spec: {
        taints: [
          { key: 'k', effect: 'Sometimes' },
          { key: 'k', effect: 'NoSchedule' },
          { key: 'k', effect: 'NoSchedule' },
        ],
      },
    },
    want: [
      'metadata.taints[0].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
      'metadata.taints[2]: Duplicate value: {"key":"k","effect":"NoSchedule"}: taints must be unique by key and effect pair',
    ],
  },
  {
    name: 'pod CIDRs',
    kind: 'Node',
    obj: { metadata: { name: 'n1' }, spec: { podCIDRs: ['10.244.1.0/24', '10.244.2.0/24', 'x'] } },
    want: [
      'spec.podCIDRs[2]: Invalid value: "x": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
      'spec.podCIDRs: Invalid value: []string{"10.244.1.0/24", "10.244.2.0/24", "x"}: may specify no more than one CIDR for each IP family',
    ],
  },

  // ---- Namespace ----
  {
    name: 'namespace name is a DNS label',
    kind: 'Namespace',
    obj: { metadata: { name: 'Bad_Name' } },
    want: [`metadata.name: Invalid value: "Bad_Name": ${LABEL_MSG}`],
  },
  {
    name: 'namespace spec finalizers',
    kind: 'Namespace',
    obj: { metadata: { name: 'ns' }, spec: { finalizers: ['kubernetes', 'custom'] } },
    want: [
      'spec.finalizers: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
    ],
  },

  // ---- Endpoints ----
  {
    name: 'valid endpoints',
    kind: 'Endpoints',
    obj: {
      metadata: meta('web'),
      subsets: [{ addresses: [{ ip: '10.244.1.5', nodeName: 'n1' }], ports: [{ port: 8080 }] }],
    },
    want: [],
  },
  {
    name: 'subset without addresses',
    kind: 'Endpoints',
    obj: { metadata: meta('web'), subsets: [{ ports: [{ port: 80 }] }] },
    want: ['subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`'],
  },
  {
    name: 'endpoint addresses must be valid, non-special IPs',
    kind: 'Endpoints',
    obj: {
      metadata: meta('web'),
      subsets: [{ addresses: [{ ip: '10.0.0.256' }], notReadyAddresses: [{ ip: '127.0.0.1' }] }],
    },
    want: [
      `subsets[0].addresses[0].ip: Invalid value: "10.0.0.256": ${IP_MSG}`,
      'subsets[0].addresses[0].ip: Invalid value: "10.0.0.256": must be a valid IP address',
      'subsets[0].notReadyAddresses[0].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
    ],
  },
  {
    name: 'endpoint ports',
    kind: 'Endpoints',
    obj: {
      metadata: meta('web'),
      subsets: [
        { addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 0 }, { name: 'b', port: 80, protocol: 'ICMP' }] },
      ],
    },
    want: [
      'subsets[0].ports[0].name: Required value',
      `subsets[0].ports[0].port: Invalid value: 0: ${PORT_RANGE}`,
      `subsets[0].ports[1].protocol: Unsupported value: "ICMP": ${PROTOCOLS}`,
    ],
  },

  // ---- EndpointSlice ----
  {
    name: 'valid slice',
    kind: 'EndpointSlice',
    obj: slice({
      endpoints: [{ addresses: ['10.244.1.5'], conditions: { ready: true }, nodeName: 'n1', zone: 'a' }],
      ports: [{ name: 'http', port: 8080 }],
    }),
    want: [],
  },
  {
    name: 'address type',
    kind: 'EndpointSlice',
    obj: slice({ addressType: 'IP' }),
    want: ['addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"'],
  },
  {
    name: 'addresses must fit the address type',
    kind: 'EndpointSlice',
    obj: slice({ addressType: 'IPv6', endpoints: [{ addresses: ['10.0.0.1'] }, { addresses: [] }] }),
    want: [
      'endpoints[0].addresses[0]: Invalid value: "10.0.0.1": must be a valid IPv6 address',
      'endpoints[1].addresses: Required value: must contain at least 1 address',
    ],
  },
  {
    name: 'FQDN addresses need two labels',
    kind: 'EndpointSlice',
    obj: slice({ addressType: 'FQDN', endpoints: [{ addresses: ['example'] }] }),
    want: [
      'endpoints[0].addresses[0]: Invalid value: "example": should be a domain with at least two segments separated by dots',
    ],
  },
  {
    name: 'at most 1000 endpoints',
    kind: 'EndpointSlice',
    obj: slice({ endpoints: Array.from({ length: 1001 }, () => ({ addresses: ['10.0.0.1'] })) }),
    want: ['endpoints: Too many: 1001: must have at most 1000 items'],
  },
  {
    name: 'at most 100 addresses per endpoint',
    kind: 'EndpointSlice',
    obj: slice({ endpoints: [{ addresses: Array.from({ length: 101 }, (_, i) => `10.0.${i}.1`) }] }),
    want: ['endpoints[0].addresses: Too many: 101: must have at most 100 items'],
  },
  {
    name: 'slice ports: unique names (unnamed counts), protocol',
    kind: 'EndpointSlice',
    obj: slice({ ports: [{ port: 80 }, { port: 81 }, { name: 'x', port: 82, protocol: 'ICMP' }] }),
    want: [
      'ports[1].name: Duplicate value: ""',
      `ports[2].protocol: Unsupported value: "ICMP": ${PROTOCOLS}`,
    ],
  },
  {
    name: 'zone hints',
    kind: 'EndpointSlice',
    obj: slice({
      endpoints: [{ addresses: ['10.0.0.1'], hints: { forZones: [{ name: 'a' }, { name: 'a' }] } }],
    }),
    want: ['endpoints[0].hints.forZones[1].name: Duplicate value: "a"'],
  },

  // ---- Events ----
  {
    name: 'core event: involvedObject namespace must match',
    kind: 'Event',
    obj: {
      metadata: meta('p.1'),
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'other' },
      reason: 'X',
      message: 'm',
    },
    want: ['involvedObject.namespace: Invalid value: "other": does not match event.namespace'],
  },
  { name: 'valid events.k8s.io event (microseconds)', kind: 'events/Event', obj: v1event(), want: [] },
  {
    name: 'eventTime with milliseconds is accepted',
    kind: 'events/Event',
    obj: v1event({ eventTime: '2024-05-01T10:00:00.123Z' }),
    want: [],
  },
  {
    name: 'events.k8s.io event: required fields',
    kind: 'events/Event',
    obj: { metadata: meta('e1'), regarding: { kind: 'Node', name: 'n1' }, type: 'Normal' },
    want: ['eventTime: Required value'],
  },
  {
    name: 'events.k8s.io event with eventTime: reporting fields',
    kind: 'events/Event',
    obj: v1event({
      reportingController: undefined,
      reportingInstance: undefined,
      action: undefined,
      reason: 'x'.repeat(129),
    }),
    want: [
      'reportingController: Required value',
      'reportingController: Invalid value: "": name part must be non-empty',
      `reportingController: Invalid value: "": ${NAME_PART_MSG}`,
      'reportingInstance: Required value',
      'action: Required value',
      'reason: Invalid value: "": can have at most 128 characters',
    ],
  },
  {
    name: 'events.k8s.io event: type and deprecated fields',
    kind: 'events/Event',
    obj: v1event({ type: 'Info', deprecatedCount: 3, deprecatedSource: { component: 'kubelet' } }),
    want: [
      'type: Invalid value: "": has invalid value: Info',
      'count: Invalid value: "": needs to be unset',
      'source: Invalid value: "": needs to be unset',
    ],
  },
  {
    name: 'events.k8s.io event: bad eventTime',
    kind: 'events/Event',
    obj: v1event({ eventTime: '2024-13-01T10:00:00Z' }),
    want: [
      'eventTime: Invalid value: "2024-13-01T10:00:00Z": must be an RFC 3339 timestamp with microsecond precision (e.g. 2006-01-02T15:04:05.000000Z)',
    ],
  },
  {
    name: 'events.k8s.io series',
    kind: 'events/Event',
    obj: v1event({ series: { count: 1 } }),
    want: [
      'series.count: Invalid value: "": should be at least 2',
      'series.lastObservedTime: Required value',
    ],
  },

  // ---- Lease ----
  {
    name: 'valid lease',
    kind: 'Lease',
    obj: {
      metadata: meta('n1'),
      spec: { holderIdentity: 'n1', leaseDurationSeconds: 40, renewTime: '2024-05-01T10:00:00.000000Z' },
    },
    want: [],
  },
  {
    name: 'lease durations',
    kind: 'Lease',
    obj: { metadata: meta('n1'), spec: { leaseDurationSeconds: 0, leaseTransitions: -1 } },
    want: [
      'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
      'spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0',
    ],
  },
  {
    name: 'preferredHolder needs a strategy',
    kind: 'Lease',
    obj: { metadata: meta('n1'), spec: { preferredHolder: 'a' } },
    want: ['spec.preferredHolder: Forbidden: may only be specified if `strategy` is defined'],
  },

  // ---- Deployment ----
  { name: 'valid deployment', kind: 'Deployment', obj: deploy(), want: [] },
  {
    name: 'deployment without selector',
    kind: 'Deployment',
    obj: deploy({ selector: undefined }),
    want: [
      'spec.selector: Required value',
      'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`',
    ],
  },
  {
    name: 'empty selector',
    kind: 'Deployment',
    obj: deploy({ selector: {} }),
    want: ['spec.selector: Invalid value: {}: empty selector is invalid for deployment'],
  },
  {
    name: 'selector does not match template labels',
    kind: 'Deployment',
    obj: deploy({ selector: { matchLabels: { app: 'api' } } }),
    want: [
      'spec.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`',
    ],
  },
  {
    name: 'negative replicas',
    kind: 'Deployment',
    obj: deploy({ replicas: -1 }),
    want: ['spec.replicas: Invalid value: -1: must be greater than or equal to 0'],
  },
  {
    name: 'Recreate with rollingUpdate',
    kind: 'Deployment',
    obj: deploy({ strategy: { type: 'Recreate', rollingUpdate: { maxSurge: 1 } } }),
    want: ["spec.strategy.rollingUpdate: Forbidden: may not be specified when strategy `type` is 'Recreate'"],
  },
  {
    name: 'maxSurge and maxUnavailable both 0',
    kind: 'Deployment',
    obj: deploy({ strategy: { rollingUpdate: { maxSurge: 0, maxUnavailable: '0%' } } }),
    want: [
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "0%": may not be 0 when `maxSurge` is 0',
    ],
  },
  {
    name: 'maxUnavailable over 100% and not a percent',
    kind: 'Deployment',
    obj: deploy({ strategy: { rollingUpdate: { maxSurge: '25', maxUnavailable: '150%' } } }),
    want: [
      `spec.strategy.rollingUpdate.maxSurge: Invalid value: "25": a valid percent string must be a numeric string followed by an ending '%' (${eg('1%', '93%')}regex used for validation is '[0-9]+%')`,
      'spec.strategy.rollingUpdate.maxUnavailable: Invalid value: "150%": must not be greater than 100%',
    ],
  },
  {
    name: 'template restartPolicy must be Always',
    kind: 'Deployment',
    obj: deploy({
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { restartPolicy: 'Never', containers: [ctr()] },
      },
    }),
    want: ['spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"'],
  },
  {
    name: 'progressDeadlineSeconds must exceed minReadySeconds',
    kind: 'Deployment',
    obj: deploy({ minReadySeconds: 700 }),
    want: ['spec.progressDeadlineSeconds: Invalid value: 600: must be greater than minReadySeconds'],
  },
  {
    name: 'invalid selector operator skips the template checks',
    kind: 'Deployment',
    obj: deploy({ selector: { matchExpressions: [{ key: 'app', operator: 'Like', values: ['web'] }] } }),
    want: [
      'spec.selector.matchExpressions[0].operator: Invalid value: "Like": not a valid selector operator',
      'spec.selector: Invalid value: {"matchExpressions":[{"key":"app","operator":"Like","values":["web"]}]}: invalid label selector',
    ],
  },
  {
    name: 'template labels are reported at spec.template.labels',
    kind: 'Deployment',
    obj: deploy({
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web', '-x': 'y' } }, spec: { containers: [ctr()] } },
    }),
    want: [`spec.template.labels: Invalid value: "-x": ${NAME_PART_MSG}`],
  },

  // ---- Grids ----
  {
    name: 'valid ServiceGrid',
    kind: 'ServiceGrid',
    obj: {
      metadata: meta('sg'),
      spec: { gridUniqKey: 'zone', template: { selector: { app: 'web' }, ports: [port80] } },
    },
    want: [],
  },
  {
    name: 'ServiceGrid needs gridUniqKey and a template with ports',
    kind: 'ServiceGrid',
    obj: { metadata: meta('sg'), spec: {} },
    want: ['spec.gridUniqKey: Required value', 'spec.template.ports: Required value'],
  },
  {
    name: 'ServiceGrid template validated as a ServiceSpec',
    kind: 'ServiceGrid',
    obj: {
      metadata: meta('sg'),
      spec: {
        gridUniqKey: 'topology.kubernetes.io/zone',
        template: { type: 'LoadBalancer', clusterIP: 'None', ports: [{ port: 80, protocol: 'QUIC' }] },
      },
    },
    want: [
      'spec.template.clusterIPs[0]: Invalid value: "None": may not be set to \'None\' for LoadBalancer services',
      `spec.template.ports[0].protocol: Unsupported value: "QUIC": ${PROTOCOLS}`,
    ],
  },
  {
    name: 'a ServiceGrid whose Service name <name>-svc would be invalid (too long, or not a DNS-1035 label)',
    kind: 'ServiceGrid',
    obj: { metadata: meta('s'.repeat(60)), spec: { gridUniqKey: 'zone', template: { ports: [port80] } } },
    want: [
      `metadata.name: Invalid value: "${'s'.repeat(60)}": the Service it produces, "${'s'.repeat(60)}-svc", would be an invalid Service name: must be no more than 63 characters`,
    ],
  },
  {
    name: 'a ServiceGrid named like a subdomain but not a DNS-1035 label',
    kind: 'ServiceGrid',
    obj: { metadata: meta('1st.grid'), spec: { gridUniqKey: 'zone', template: { ports: [port80] } } },
    want: [
      `metadata.name: Invalid value: "1st.grid": the Service it produces, "1st.grid-svc", would be an invalid Service name: ${DNS1035_MSG}`,
    ],
  },
  {
    name: 'gridUniqKey must be a label key',
    kind: 'ServiceGrid',
    obj: { metadata: meta('sg'), spec: { gridUniqKey: 'bad key', template: { ports: [port80] } } },
    want: [`spec.gridUniqKey: Invalid value: "bad key": ${NAME_PART_MSG}`],
  },
  {
    name: 'valid DeploymentGrid',
    kind: 'DeploymentGrid',
    obj: { metadata: meta('dg'), spec: { gridUniqKey: 'zone', template: deploySpec() } },
    want: [],
  },
  {
    name: 'DeploymentGrid template validated as a DeploymentSpec',
    kind: 'DeploymentGrid',
    obj: {
      metadata: meta('dg'),
      spec: { template: deploySpec({ selector: { matchLabels: { app: 'api' } } }) },
    },
    want: [
      'spec.gridUniqKey: Required value',
      'spec.template.template.metadata.labels: Invalid value: {"app":"web"}: `selector` does not match template `labels`',
    ],
  },
];

const stored = (m: object): object => ({
  uid: 'u-1',
  resourceVersion: '5',
  creationTimestamp: '2024-05-01T10:00:00Z',
  ...m,
});
const storedSvc = (spec: object, m: object = {}): object => ({ metadata: stored(meta('web', m)), spec });

const updates: Case[] = [
  {
    name: 'unchanged service update',
    kind: 'Service',
    old: storedSvc({ ports: [port80], clusterIP: '10.96.0.5' }),
    obj: storedSvc({ ports: [port80], clusterIP: '10.96.0.5' }),
    want: [],
  },
  {
    name: 'topologyKeys are checked on update too',
    kind: 'Service',
    old: storedSvc({ ports: [port80], clusterIP: '10.96.0.5', topologyKeys: ['zone'] }),
    obj: storedSvc({ ports: [port80], clusterIP: '10.96.0.5', topologyKeys: ['*', 'zone'] }),
    want: ['spec.topologyKeys[0]: Invalid value: "*": "*" must be the last value specified'],
  },
  {
    name: 'kubectl replace without clusterIP keeps it',
    kind: 'Service',
    old: storedSvc({
      ports: [port80],
      clusterIP: '10.96.0.5',
      clusterIPs: ['10.96.0.5'],
      ipFamilies: ['IPv4'],
      ipFamilyPolicy: 'SingleStack',
    }),
    obj: { metadata: meta('web'), spec: { ports: [port80] } },
    want: [],
  },
  {
    name: 'NodePort to ClusterIP drops node ports and externalTrafficPolicy',
    kind: 'Service',
    old: storedSvc({ type: 'NodePort', ports: [{ ...port80, nodePort: 30080 }], clusterIP: '10.96.0.5' }),
    obj: storedSvc({
      type: 'ClusterIP',
      ports: [{ ...port80, nodePort: 30080, protocol: 'TCP' }],
      clusterIP: '10.96.0.5',
      clusterIPs: ['10.96.0.5'],
      externalTrafficPolicy: 'Cluster',
    }),
    want: [],
  },
  {
    name: 'ClusterIP to ExternalName drops the cluster IP',
    kind: 'Service',
    old: storedSvc({ ports: [port80], clusterIP: '10.96.0.5' }),
    obj: storedSvc({
      type: 'ExternalName',
      externalName: 'db.example.com',
      ports: [port80],
      clusterIP: '10.96.0.5',
      clusterIPs: ['10.96.0.5'],
    }),
    want: [],
  },
  {
    name: 'clusterIP may not change',
    kind: 'Service',
    old: storedSvc({ ports: [port80], clusterIP: '10.96.0.5' }),
    obj: storedSvc({ ports: [port80], clusterIP: '10.96.0.6' }),
    want: ['spec.clusterIPs[0]: Invalid value: []string{"10.96.0.6"}: may not change once set'],
  },
  {
    name: 'clusterIP may not be unset (without the registry carry-over)',
    kind: 'Service',
    raw: true,
    old: storedSvc({ ports: [port80], clusterIP: '10.96.0.5' }),
    obj: storedSvc({
      ports: [{ ...port80, protocol: 'TCP' }],
      type: 'ClusterIP',
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
    }),
    want: ['spec.clusterIPs[0]: Invalid value: []string{}: primary clusterIP can not be unset'],
  },
  {
    name: 'releasing the secondary clusterIP needs SingleStack',
    kind: 'Service',
    old: storedSvc({
      ports: [port80],
      clusterIP: '10.96.0.5',
      clusterIPs: ['10.96.0.5', 'fd00::5'],
      ipFamilyPolicy: 'RequireDualStack',
    }),
    obj: storedSvc({
      ports: [port80],
      clusterIP: '10.96.0.5',
      clusterIPs: ['10.96.0.5'],
      ipFamilyPolicy: 'PreferDualStack',
    }),
    want: [
      'spec.ipFamilyPolicy: Invalid value: "PreferDualStack": must be set to \'SingleStack\' when releasing the secondary clusterIP',
    ],
  },
  {
    name: 'loadBalancerClass may not change',
    kind: 'Service',
    old: storedSvc({ type: 'LoadBalancer', ports: [port80], loadBalancerClass: 'a.io/lb' }),
    obj: storedSvc({ type: 'LoadBalancer', ports: [port80], loadBalancerClass: 'b.io/lb' }),
    want: ['spec.loadBalancerClass: Invalid value: "b.io/lb": may not change once set'],
  },
  {
    name: 'name and uid are immutable',
    kind: 'Service',
    old: storedSvc({ ports: [port80] }),
    obj: storedSvc({ ports: [port80] }, { name: 'web2', uid: 'u-2' }),
    want: [
      'metadata.name: Invalid value: "web2": field is immutable',
      'metadata.uid: Invalid value: "u-2": field is immutable',
    ],
  },
  {
    name: 'no new finalizers while deleting',
    kind: 'Service',
    old: storedSvc(
      { ports: [port80] },
      { deletionTimestamp: '2024-05-02T00:00:00Z', finalizers: ['a.io/x'] },
    ),
    obj: storedSvc(
      { ports: [port80] },
      { deletionTimestamp: '2024-05-02T00:00:00Z', finalizers: ['a.io/x', 'b.io/y'] },
    ),
    want: [
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"b.io/y"}',
    ],
  },
  {
    name: 'pod: only images may change',
    kind: 'Pod',
    old: { metadata: stored(meta('p')), spec: { containers: [ctr()] } },
    obj: { metadata: stored(meta('p')), spec: { containers: [ctr({ ports: [{ containerPort: 80 }] })] } },
    want: [
      'spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
    ],
  },
  {
    name: 'pod: image change and added toleration are fine',
    kind: 'Pod',
    old: { metadata: stored(meta('p')), spec: { containers: [ctr()] } },
    obj: {
      metadata: stored(meta('p')),
      spec: { containers: [ctr({ image: 'nginx:1.26' })], tolerations: [{ key: 'k', operator: 'Exists' }] },
    },
    want: [],
  },
  {
    name: 'deployment selector is immutable',
    kind: 'Deployment',
    old: { metadata: stored(meta('d')), spec: deploySpec() },
    obj: {
      metadata: stored(meta('d')),
      spec: deploySpec({
        selector: { matchLabels: { app: 'web', tier: 'fe' } },
        template: { metadata: { labels: { app: 'web', tier: 'fe' } }, spec: { containers: [ctr()] } },
      }),
    },
    want: ['spec.selector: Invalid value: {"matchLabels":{"app":"web","tier":"fe"}}: field is immutable'],
  },
  {
    name: 'endpointslice addressType is immutable',
    kind: 'EndpointSlice',
    old: { metadata: stored(meta('s')), addressType: 'IPv4' },
    obj: { metadata: stored(meta('s')), addressType: 'IPv6' },
    want: ['addressType: Invalid value: "IPv6": field is immutable'],
  },
  {
    name: 'node podCIDRs are set once',
    kind: 'Node',
    old: { metadata: stored({ name: 'n1' }), spec: { podCIDRs: ['10.244.1.0/24'] } },
    obj: { metadata: stored({ name: 'n1' }), spec: { podCIDRs: ['10.244.2.0/24'] } },
    want: ['spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid'],
  },
  {
    name: 'events.k8s.io: note is immutable',
    kind: 'events/Event',
    old: v1event({ metadata: stored(meta('n1.17a')) }),
    obj: v1event({ metadata: stored(meta('n1.17a')), note: 'changed' }),
    want: ['message: Invalid value: "changed": field is immutable'],
  },
  {
    name: 'namespace status: Active unless deleting',
    kind: 'Namespace',
    status: true,
    old: { metadata: stored({ name: 'ns' }) },
    obj: { metadata: stored({ name: 'ns' }), status: { phase: 'Terminating' } },
    want: [
      'status.Phase: Invalid value: "Terminating": may only be \'Active\' if `deletionTimestamp` is empty',
    ],
  },
  {
    name: 'deployment status counts',
    kind: 'Deployment',
    status: true,
    old: { metadata: stored(meta('d')), spec: deploySpec() },
    obj: {
      metadata: stored(meta('d')),
      spec: deploySpec(),
      status: { replicas: 1, readyReplicas: 1, availableReplicas: 2 },
    },
    want: [
      'status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas',
      'status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas',
    ],
  },
  {
    name: 'pod status IPs',
    kind: 'Pod',
    status: true,
    old: { metadata: stored(meta('p')), spec: { containers: [ctr()] } },
    obj: {
      metadata: stored(meta('p')),
      spec: { containers: [ctr()] },
      status: { podIP: '10.244.1.5', podIPs: [{ ip: '10.244.1.5' }, { ip: '10.244.1.6' }] },
    },
    want: [
      'status.podIPs: Invalid value: [{"ip":"10.244.1.5"},{"ip":"10.244.1.6"}]: may specify no more than one IP for each IP family',
    ],
  },
  {
    name: 'service status ingress IP',
    kind: 'Service',
    status: true,
    old: storedSvc({ type: 'LoadBalancer', ports: [port80] }),
    obj: {
      ...storedSvc({ type: 'LoadBalancer', ports: [port80] }),
      status: { loadBalancer: { ingress: [{ ip: '203.0.113.300' }] } },
    },
    want: [`status.loadBalancer.ingress[0].ip: Invalid value: "203.0.113.300": ${IP_MSG}`],
  },
];

describe('validateCreate: kube-apiserver field errors', () => {
  for (const c of cases) it(`${c.kind}: ${c.name}`, () => assert.deepEqual(run(c), c.want));
});

describe('validateUpdate / validateStatusUpdate', () => {
  for (const c of updates) it(`${c.kind}: ${c.name}`, () => assert.deepEqual(run(c), c.want));
});

describe('coverage of the table', () => {
  it('has at least 60 cases and touches every kind', () => {
    assert.ok(cases.length + updates.length >= 60);
    const kinds = new Set([...cases, ...updates].map((c) => c.kind));
    assert.equal(kinds.size, Object.keys(GROUPS).length);
  });
});

describe('ValidationOptions.allowLoopbackEndpoints', () => {
  const endpoints = {
    metadata: { name: 'web', namespace: 'default' },
    subsets: [
      {
        addresses: [{ ip: '127.10.0.5' }],
        notReadyAddresses: [{ ip: '::1' }],
        ports: [{ port: 80, protocol: 'TCP' }],
      },
    ],
  } as unknown as KObject;
  const slice = {
    metadata: { name: 'web-abc', namespace: 'default' },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['127.10.0.5'] }],
    ports: [{ port: 80, protocol: 'TCP' }],
  } as unknown as KObject;
  const rOf = (group: string, resource: string): ResourceInfo =>
    RESOURCES.find((r) => r.group === group && r.resource === resource)!;

  it('refuses loopback endpoint addresses by default, as kube-apiserver does', () => {
    assert.equal(validateCreate(rOf('', 'endpoints'), endpoints).length, 2);
    assert.equal(validateCreate(rOf('discovery.k8s.io', 'endpointslices'), slice).length, 1);
  });

  it('accepts them when allowed, and still refuses link-local and unspecified ones', () => {
    const opts = { allowLoopbackEndpoints: true };
    assert.deepEqual(validateCreate(rOf('', 'endpoints'), endpoints, opts), []);
    assert.deepEqual(validateCreate(rOf('discovery.k8s.io', 'endpointslices'), slice, opts), []);
    const linkLocal = { ...slice, endpoints: [{ addresses: ['169.254.1.1'] }] } as unknown as KObject;
    assert.match(
      validateCreate(rOf('discovery.k8s.io', 'endpointslices'), linkLocal, opts).map(fieldErrorString).join(),
      /link-local/,
    );
  });
});
