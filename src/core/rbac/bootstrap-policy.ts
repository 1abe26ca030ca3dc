// The default RBAC policy every start reconciles (kube-apiserver's bootstrap policy,
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy): the roles everyone gets (discovery, self reviews,
// public information), the user-facing cluster-admin, admin, edit and view (the last three aggregated
// from the rbac.authorization.k8s.io/aggregate-to-* labels, with the rules for the kinds svcplane
// serves, SuperEdge's grids included), the roles of nodes, kube-proxy, the controller manager and
// the scheduler, and one role per controller svcplane runs: system:controller:<name>, bound to the
// ServiceAccount kube-system/<name>, with exactly the verbs that controller uses.
import { RBAC_GROUP, type PolicyRule, type Subject } from './types.js';

/** The ClusterRole that lets a user open `svcplane up`'s /dashboard/. */
export const DASHBOARD_VIEWER_ROLE = 'svcplane:dashboard-viewer';

/** The user (and its ClusterRole) `svcplane up`'s dashboard reads the API as. */
export const DASHBOARD_READER = 'system:svcplane:dashboard';

export const BOOTSTRAPPING_LABEL = 'kubernetes.io/bootstrapping';
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';
const AGGREGATE_TO = (role: string): string => `rbac.authorization.k8s.io/aggregate-to-${role}`;

export interface BootstrapClusterRole {
  readonly name: string;
  readonly rules: readonly PolicyRule[];
  /** The labels of the ClusterRoles whose rules this one gathers (admin, edit, view). */
  readonly aggregateFrom?: readonly Record<string, string>[];
  readonly labels?: Readonly<Record<string, string>>;
}

export interface BootstrapClusterRoleBinding {
  readonly name: string;
  readonly role: string;
  readonly subjects: readonly Subject[];
}

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'delete', 'deletecollection', 'patch', 'update'];
const rule = (
  verbs: string[],
  apiGroups: string[],
  resources: string[],
  resourceNames?: string[],
): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
  ...(resourceNames === undefined ? {} : { resourceNames }),
});
const urls = (verbs: string[], nonResourceURLs: string[]): PolicyRule => ({ verbs, nonResourceURLs });
/** What an event recorder needs (upstream's eventsRule). */
const EVENTS = rule(['create', 'patch', 'update'], ['', 'events.k8s.io'], ['events']);

const group = (name: string): Subject => ({ kind: 'Group', apiGroup: RBAC_GROUP, name });
const user = (name: string): Subject => ({ kind: 'User', apiGroup: RBAC_GROUP, name });
const serviceAccount = (name: string): Subject => ({
  kind: 'ServiceAccount',
  name,
  namespace: 'kube-system',
});

/** The controllers svcplane runs (controllers/manager.ts KNOWN_CONTROLLERS) → their role's name and rules. */
const CSR_GROUP = 'certificates.k8s.io';
const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
const CERTIFICATE_CONTROLLER: readonly PolicyRule[] = [
  rule(READ, [CSR_GROUP], ['certificatesigningrequests']),
  rule(['update'], [CSR_GROUP], ['certificatesigningrequests/approval', 'certificatesigningrequests/status']),
  rule(['approve'], [CSR_GROUP], ['signers'], [KUBELET_CLIENT_SIGNER]),
  rule(['sign'], [CSR_GROUP], ['signers'], [KUBELET_CLIENT_SIGNER, 'kubernetes.io/kube-apiserver-client']),
  rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
  EVENTS,
];

export const CONTROLLER_ROLES: Readonly<
  Record<string, { readonly name: string; readonly rules: readonly PolicyRule[] }>
> = {
  endpoints: {
    name: 'endpoint-controller',
    rules: [
      rule(READ, [''], ['services', 'pods']),
      rule(['get', 'list', 'watch', 'create', 'update', 'delete'], [''], ['endpoints']),
      rule(['create'], [''], ['endpoints/restricted']),
      EVENTS,
    ],
  },
  endpointslice: {
    name: 'endpointslice-controller',
    rules: [
      rule(READ, [''], ['services', 'pods', 'nodes']),
      rule(['get', 'list', 'watch', 'create', 'update', 'delete'], ['discovery.k8s.io'], ['endpointslices']),
      EVENTS,
    ],
  },
  servicetopology: { name: 'servicetopology-controller', rules: [rule(READ, [''], ['services']), EVENTS] },
  garbagecollector: {
    name: 'generic-garbage-collector',
    rules: [rule(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*'])],
  },
  servicegrid: {
    name: 'servicegrid-controller',
    rules: [
      rule(['get', 'list', 'watch', 'update'], ['superedge.io'], ['servicegrids']),
      rule(['update'], ['superedge.io'], ['servicegrids/status']),
      rule(['get', 'list', 'watch', 'create', 'update', 'delete'], [''], ['services']),
      EVENTS,
    ],
  },
  deploymentgrid: {
    name: 'deploymentgrid-controller',
    rules: [
      rule(['get', 'list', 'watch', 'update'], ['superedge.io'], ['deploymentgrids']),
      rule(['update'], ['superedge.io'], ['deploymentgrids/status']),
      rule(['get', 'list', 'watch', 'create', 'update', 'delete'], ['apps'], ['deployments']),
      rule(READ, [''], ['nodes']),
      EVENTS,
    ],
  },
  nodelifecycle: {
    name: 'node-controller',
    rules: [
      rule(['get', 'list', 'watch', 'update', 'patch', 'delete'], [''], ['nodes']),
      rule(['patch', 'update'], [''], ['nodes/status']),
      rule(['get', 'list', 'watch', 'delete'], [''], ['pods']),
      rule(['patch', 'update'], [''], ['pods/status']),
      rule(READ, ['coordination.k8s.io'], ['leases']),
      EVENTS,
    ],
  },
  podgc: {
    name: 'pod-garbage-collector',
    rules: [
      rule(['list', 'watch', 'delete'], [''], ['pods']),
      rule(['patch'], [''], ['pods/status']),
      rule(READ, [''], ['nodes']),
    ],
  },
  replicaset: {
    name: 'replicaset-controller',
    rules: [
      rule(['get', 'list', 'watch', 'update'], ['apps'], ['replicasets']),
      rule(['update'], ['apps'], ['replicasets/status', 'replicasets/finalizers']),
      rule(['list', 'watch', 'patch', 'create', 'delete'], [''], ['pods']),
      EVENTS,
    ],
  },
  'clusterrole-aggregation': {
    name: 'clusterrole-aggregation-controller',
    // escalate: the rules it writes are other roles' rules, which it does not hold itself
    rules: [
      rule(['escalate', 'get', 'list', 'watch', 'update'], ['rbac.authorization.k8s.io'], ['clusterroles']),
    ],
  },
  serviceaccount: {
    name: 'service-account-controller',
    rules: [
      rule(['list', 'watch', 'create'], [''], ['serviceaccounts']),
      rule(READ, [''], ['namespaces']),
      EVENTS,
    ],
  },
  // Upstream's certificate-controller account runs both: approving kubelet client requests (after a
  // SubjectAccessReview of the requester) and signing the client signers' approved requests.
  csrapproving: { name: 'certificate-controller', rules: CERTIFICATE_CONTROLLER },
  csrsigning: { name: 'certificate-controller', rules: CERTIFICATE_CONTROLLER },
  deployment: {
    name: 'deployment-controller',
    rules: [
      rule(['get', 'list', 'watch', 'update'], ['apps'], ['deployments']),
      rule(['update'], ['apps'], ['deployments/status', 'deployments/finalizers']),
      rule(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], ['apps'], ['replicasets']),
      rule(['get', 'list', 'watch'], [''], ['pods']),
      EVENTS,
    ],
  },
};

/** The controllers' accounts, each once (two controllers may share one, as upstream's certificate-controller). */
function controllerAccounts(): { readonly name: string; readonly rules: readonly PolicyRule[] }[] {
  return [...new Map(Object.values(CONTROLLER_ROLES).map((c) => [c.name, c])).values()];
}

/** The scheduler is not a controller upstream: it has system:kube-scheduler, its user's role. */
const KUBE_SCHEDULER: readonly PolicyRule[] = [
  EVENTS,
  rule(['create'], ['coordination.k8s.io'], ['leases']),
  rule(['get', 'update'], ['coordination.k8s.io'], ['leases'], ['kube-scheduler']),
  rule(READ, [''], ['nodes', 'namespaces', 'services']),
  rule(['get', 'list', 'watch', 'delete'], [''], ['pods']),
  rule(['create'], [''], ['bindings', 'pods/binding']),
  rule(['patch', 'update'], [''], ['pods/status']),
  rule(READ, ['apps'], ['replicasets']),
];

const KUBE_CONTROLLER_MANAGER: readonly PolicyRule[] = [
  EVENTS,
  rule(['create'], ['coordination.k8s.io'], ['leases']),
  rule(
    ['get', 'update'],
    ['coordination.k8s.io'],
    ['leases'],
    ['kube-controller-manager', 'svcplane-controller-manager'],
  ),
  rule(['list', 'watch'], ['*'], ['*']),
  // --use-service-account-credentials: each controller's ServiceAccount in kube-system, and its tokens
  rule(['get', 'create'], [''], ['serviceaccounts']),
  rule(['create'], [''], ['serviceaccounts/token']),
];

const NODE: readonly PolicyRule[] = [
  rule(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], [''], ['nodes']),
  rule(['patch', 'update'], [''], ['nodes/status']),
  rule(['get', 'list', 'watch', 'create', 'delete'], [''], ['pods']),
  rule(['patch', 'update'], [''], ['pods/status']),
  rule(READ, [''], ['services', 'endpoints']),
  rule(READ, ['discovery.k8s.io'], ['endpointslices']),
  rule(['get', 'create', 'update', 'patch', 'delete'], ['coordination.k8s.io'], ['leases']),
  EVENTS,
];

const NODE_PROXIER: readonly PolicyRule[] = [
  rule(['list', 'watch'], [''], ['services', 'endpoints']),
  rule(READ, [''], ['nodes']),
  rule(['list', 'watch'], ['discovery.k8s.io'], ['endpointslices']),
  EVENTS,
];

const PUBLIC_INFO = ['/healthz', '/livez', '/readyz', '/version', '/version/'];

/** view: reading what svcplane serves in a namespace; edit adds writing it; admin adds RBAC within it. */
const AGGREGATE_TO_VIEW: readonly PolicyRule[] = [
  rule(
    READ,
    [''],
    [
      'pods',
      'pods/status',
      'services',
      'services/status',
      'endpoints',
      'events',
      'namespaces',
      'namespaces/status',
    ],
  ),
  rule(READ, ['events.k8s.io'], ['events']),
  rule(READ, ['discovery.k8s.io'], ['endpointslices']),
  rule(
    READ,
    ['apps'],
    [
      'deployments',
      'deployments/scale',
      'deployments/status',
      'replicasets',
      'replicasets/scale',
      'replicasets/status',
    ],
  ),
  rule(
    READ,
    ['superedge.io'],
    ['servicegrids', 'servicegrids/status', 'deploymentgrids', 'deploymentgrids/status'],
  ),
];

const AGGREGATE_TO_EDIT: readonly PolicyRule[] = [
  rule(WRITE, [''], ['pods', 'services', 'endpoints']),
  rule(WRITE, ['discovery.k8s.io'], ['endpointslices']),
  rule(WRITE, ['apps'], ['deployments', 'deployments/scale', 'replicasets', 'replicasets/scale']),
  rule(WRITE, ['superedge.io'], ['servicegrids', 'deploymentgrids']),
  rule(['impersonate'], [''], ['serviceaccounts']),
];

const AGGREGATE_TO_ADMIN: readonly PolicyRule[] = [
  rule([...READ, ...WRITE], [RBAC_GROUP], ['roles', 'rolebindings']),
  rule(['create'], ['authorization.k8s.io'], ['localsubjectaccessreviews']),
];

export const BOOTSTRAP_CLUSTER_ROLES: readonly BootstrapClusterRole[] = [
  {
    name: 'cluster-admin',
    rules: [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])],
  },
  ...(['admin', 'edit', 'view'] as const).map((name) => ({
    name,
    rules: [],
    aggregateFrom: [{ [AGGREGATE_TO(name)]: 'true' }],
    // edit's and view's rules belong to the roles above them too, as upstream aggregates them.
    ...(name === 'admin' ? {} : { labels: { [AGGREGATE_TO(name === 'edit' ? 'admin' : 'edit')]: 'true' } }),
  })),
  {
    name: 'system:aggregate-to-admin',
    rules: AGGREGATE_TO_ADMIN,
    labels: { [AGGREGATE_TO('admin')]: 'true' },
  },
  {
    name: 'system:aggregate-to-edit',
    rules: AGGREGATE_TO_EDIT,
    labels: { [AGGREGATE_TO('edit')]: 'true' },
  },
  {
    name: 'system:aggregate-to-view',
    rules: AGGREGATE_TO_VIEW,
    labels: { [AGGREGATE_TO('view')]: 'true' },
  },
  {
    name: 'system:discovery',
    rules: [
      urls(
        ['get'],
        [
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/openapi',
          '/openapi/*',
          '/readyz',
          '/version',
          '/version/',
        ],
      ),
    ],
  },
  {
    name: 'system:basic-user',
    rules: [
      rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
      rule(['create'], ['authentication.k8s.io'], ['selfsubjectreviews']),
    ],
  },
  { name: 'system:public-info-viewer', rules: [urls(['get'], PUBLIC_INFO)] },
  // Bound to no one: for delegated authentication and authorization (a kubelet's webhook, an extension server).
  {
    name: 'system:auth-delegator',
    rules: [
      rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
      rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews']),
    ],
  },
  {
    name: 'system:service-account-issuer-discovery',
    rules: [
      urls(
        ['get'],
        [
          '/.well-known/openid-configuration',
          '/.well-known/openid-configuration/',
          '/openid/v1/jwks',
          '/openid/v1/jwks/',
        ],
      ),
    ],
  },
  { name: 'system:node', rules: NODE },
  { name: 'system:node-proxier', rules: NODE_PROXIER },
  { name: 'system:kube-controller-manager', rules: KUBE_CONTROLLER_MANAGER },
  { name: 'system:kube-scheduler', rules: KUBE_SCHEDULER },
  // TLS bootstrapping (the kubelet's): a bootstrap identity may ask for a node client certificate, which
  // the certificate controller approves for it; a node may renew its own.
  {
    name: 'system:node-bootstrapper',
    rules: [rule(['create', 'get', 'list', 'watch'], [CSR_GROUP], ['certificatesigningrequests'])],
  },
  {
    name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
    rules: [rule(['create'], [CSR_GROUP], ['certificatesigningrequests/nodeclient'])],
  },
  {
    name: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
    rules: [rule(['create'], [CSR_GROUP], ['certificatesigningrequests/selfnodeclient'])],
  },
  ...controllerAccounts().map((c) => ({ name: `system:controller:${c.name}`, rules: c.rules })),
  // `svcplane up`'s dashboard (docs/dashboard.md): a non-resource `get` on its paths. Bound to no one by
  // default (system:masters passes anyway); bind it to whoever may see every node's and Service's routing.
  { name: DASHBOARD_VIEWER_ROLE, rules: [urls(['get'], ['/dashboard', '/dashboard/*'])] },
  // What that dashboard reads, in-process, as its own user: list and watch, as deploy/rbac/dashboard.yaml
  // grants `svcplane dashboard` on another cluster.
  {
    name: DASHBOARD_READER,
    rules: [
      rule(['list', 'watch'], [''], ['endpoints', 'nodes', 'services']),
      rule(['list', 'watch'], ['discovery.k8s.io'], ['endpointslices']),
      rule(['list', 'watch'], ['superedge.io'], ['deploymentgrids', 'servicegrids']),
    ],
  },
];

export const BOOTSTRAP_CLUSTER_ROLE_BINDINGS: readonly BootstrapClusterRoleBinding[] = [
  { name: 'cluster-admin', role: 'cluster-admin', subjects: [group('system:masters')] },
  { name: 'system:discovery', role: 'system:discovery', subjects: [group('system:authenticated')] },
  { name: 'system:basic-user', role: 'system:basic-user', subjects: [group('system:authenticated')] },
  {
    name: 'system:public-info-viewer',
    role: 'system:public-info-viewer',
    subjects: [group('system:authenticated'), group('system:unauthenticated')],
  },
  {
    name: 'system:service-account-issuer-discovery',
    role: 'system:service-account-issuer-discovery',
    subjects: [group('system:serviceaccounts')],
  },
  { name: 'system:node-proxier', role: 'system:node-proxier', subjects: [user('system:kube-proxy')] },
  {
    name: 'system:kube-controller-manager',
    role: 'system:kube-controller-manager',
    subjects: [user('system:kube-controller-manager')],
  },
  { name: 'system:kube-scheduler', role: 'system:kube-scheduler', subjects: [user('system:kube-scheduler')] },
  { name: DASHBOARD_READER, role: DASHBOARD_READER, subjects: [user(DASHBOARD_READER)] },
  {
    name: 'system:node-bootstrapper',
    role: 'system:node-bootstrapper',
    subjects: [group('system:bootstrappers')],
  },
  {
    name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
    role: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
    subjects: [group('system:bootstrappers')],
  },
  {
    name: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
    role: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
    subjects: [group('system:nodes')],
  },
  ...controllerAccounts().map((c) => ({
    name: `system:controller:${c.name}`,
    role: `system:controller:${c.name}`,
    subjects: [serviceAccount(c.name)],
  })),
];

const bootstrapMeta = (
  name: string,
  labels: Readonly<Record<string, string>> = {},
): Record<string, unknown> => ({
  name,
  labels: { ...labels, [BOOTSTRAPPING_LABEL]: 'rbac-defaults' },
  annotations: { [AUTOUPDATE_ANNOTATION]: 'true' },
});

/** A ClusterRole object of the bootstrap policy. */
export function clusterRoleObject(role: BootstrapClusterRole): Record<string, unknown> {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRole',
    metadata: bootstrapMeta(role.name, role.labels),
    ...(role.aggregateFrom === undefined
      ? {}
      : {
          aggregationRule: {
            clusterRoleSelectors: role.aggregateFrom.map((matchLabels) => ({ matchLabels })),
          },
        }),
    rules: role.rules,
  };
}

/** A ClusterRoleBinding object of the bootstrap policy. */
export function clusterRoleBindingObject(b: BootstrapClusterRoleBinding): Record<string, unknown> {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: bootstrapMeta(b.name),
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: b.role },
    subjects: b.subjects,
  };
}
