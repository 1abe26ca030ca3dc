// The resources this server serves: one row per resource, the single source for routing,
// discovery, storage keys and field selectors.
import type { KObject } from './object.js';

export interface ResourceInfo {
  readonly group: string;
  readonly version: string;
  /** Plural, lower-case: `services`. */
  readonly resource: string;
  readonly kind: string;
  readonly listKind: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly namespaced: boolean;
  readonly hasStatus: boolean;
  /**
   * Served the way kube-apiserver serves a CustomResourceDefinition: strategic merge patch is
   * refused with 415, and the object is stored as sent (after pruning to the schema).
   */
  readonly custom: boolean;
  /** Storage key segment under /registry; kube-apiserver's layout (`services/specs`, `minions`). */
  readonly storagePath: string;
  /** Field selectors beyond metadata.name and metadata.namespace, and how to read each. */
  readonly fieldSelectors: Readonly<Record<string, (obj: KObject) => string>>;
  /** The verbs served (kube serves no deletecollection for services and namespaces). */
  readonly verbs: readonly string[];
  /** Whether `metadata.name` is a DNS-1123 label (namespaces, services) or subdomain (the rest). */
  readonly nameRule: 'label' | 'subdomain' | 'path-segment';
}

const str = (v: unknown): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : String(v);
const at =
  (...path: string[]) =>
  (obj: KObject): string => {
    let cur: unknown = obj;
    for (const p of path)
      cur = typeof cur === 'object' && cur !== null ? (cur as Record<string, unknown>)[p] : undefined;
    return str(cur);
  };
const bool =
  (...path: string[]) =>
  (obj: KObject): string =>
    at(...path)(obj) === 'true' ? 'true' : 'false';

const verbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;

type Row = Omit<
  ResourceInfo,
  'verbs' | 'listKind' | 'singular' | 'custom' | 'shortNames' | 'categories' | 'fieldSelectors'
> &
  Partial<Pick<ResourceInfo, 'singular' | 'verbs'>> &
  Partial<Pick<ResourceInfo, 'custom' | 'shortNames' | 'categories' | 'fieldSelectors'>>;

const row = (r: Row): ResourceInfo => ({
  listKind: `${r.kind}List`,
  singular: r.kind.toLowerCase(),
  custom: false,
  shortNames: [],
  categories: [],
  fieldSelectors: {},
  verbs,
  ...r,
});

/** kube-apiserver serves no deletecollection for these (their REST storage has no collection deleter). */
const withoutDeleteCollection = verbs.filter((v) => v !== 'deletecollection');

const coreEventFields = {
  'involvedObject.kind': at('involvedObject', 'kind'),
  'involvedObject.namespace': at('involvedObject', 'namespace'),
  'involvedObject.name': at('involvedObject', 'name'),
  'involvedObject.uid': at('involvedObject', 'uid'),
  'involvedObject.apiVersion': at('involvedObject', 'apiVersion'),
  'involvedObject.resourceVersion': at('involvedObject', 'resourceVersion'),
  'involvedObject.fieldPath': at('involvedObject', 'fieldPath'),
  reason: at('reason'),
  reportingComponent: at('reportingComponent'),
  source: at('source', 'component'),
  type: at('type'),
};

export const RESOURCES: readonly ResourceInfo[] = [
  row({
    group: '',
    version: 'v1',
    resource: 'namespaces',
    kind: 'Namespace',
    verbs: withoutDeleteCollection,
    shortNames: ['ns'],
    namespaced: false,
    hasStatus: true,
    storagePath: 'namespaces',
    nameRule: 'label',
    fieldSelectors: { 'status.phase': at('status', 'phase') },
  }),
  row({
    group: '',
    version: 'v1',
    resource: 'nodes',
    kind: 'Node',
    shortNames: ['no'],
    namespaced: false,
    hasStatus: true,
    storagePath: 'minions',
    nameRule: 'subdomain',
    fieldSelectors: { 'spec.unschedulable': bool('spec', 'unschedulable') },
  }),
  row({
    group: '',
    version: 'v1',
    resource: 'pods',
    kind: 'Pod',
    shortNames: ['po'],
    categories: ['all'],
    namespaced: true,
    hasStatus: true,
    storagePath: 'pods',
    nameRule: 'subdomain',
    fieldSelectors: {
      'spec.nodeName': at('spec', 'nodeName'),
      'spec.restartPolicy': at('spec', 'restartPolicy'),
      'spec.schedulerName': at('spec', 'schedulerName'),
      'spec.serviceAccountName': at('spec', 'serviceAccountName'),
      'spec.hostNetwork': bool('spec', 'hostNetwork'),
      'status.phase': at('status', 'phase'),
      'status.podIP': at('status', 'podIP'),
      'status.nominatedNodeName': at('status', 'nominatedNodeName'),
    },
  }),
  row({
    group: '',
    version: 'v1',
    resource: 'services',
    kind: 'Service',
    verbs: withoutDeleteCollection,
    shortNames: ['svc'],
    categories: ['all'],
    namespaced: true,
    hasStatus: true,
    storagePath: 'services/specs',
    nameRule: 'label',
    fieldSelectors: { 'spec.clusterIP': at('spec', 'clusterIP'), 'spec.type': at('spec', 'type') },
  }),
  row({
    group: '',
    version: 'v1',
    resource: 'endpoints',
    kind: 'Endpoints',
    singular: 'endpoints',
    shortNames: ['ep'],
    namespaced: true,
    hasStatus: false,
    storagePath: 'services/endpoints',
    nameRule: 'subdomain',
  }),
  row({
    group: '',
    version: 'v1',
    resource: 'events',
    kind: 'Event',
    shortNames: ['ev'],
    namespaced: true,
    hasStatus: false,
    storagePath: 'events',
    nameRule: 'subdomain',
    fieldSelectors: coreEventFields,
  }),
  row({
    group: '',
    version: 'v1',
    resource: 'serviceaccounts',
    kind: 'ServiceAccount',
    shortNames: ['sa'],
    namespaced: true,
    hasStatus: false,
    storagePath: 'serviceaccounts',
    nameRule: 'subdomain',
  }),
  row({
    group: 'events.k8s.io',
    version: 'v1',
    resource: 'events',
    kind: 'Event',
    shortNames: ['ev'],
    namespaced: true,
    hasStatus: false,
    // kube-apiserver converts between the two Event APIs over one store; we keep them apart, so an
    // event written through one API is not listed through the other (docs/design/apiserver.md).
    storagePath: 'events.k8s.io/events',
    nameRule: 'subdomain',
    fieldSelectors: {
      'regarding.kind': at('regarding', 'kind'),
      'regarding.namespace': at('regarding', 'namespace'),
      'regarding.name': at('regarding', 'name'),
      'regarding.uid': at('regarding', 'uid'),
      reason: at('reason'),
      reportingController: at('reportingController'),
      type: at('type'),
    },
  }),
  row({
    group: 'discovery.k8s.io',
    version: 'v1',
    resource: 'endpointslices',
    kind: 'EndpointSlice',
    namespaced: true,
    hasStatus: false,
    storagePath: 'endpointslices',
    nameRule: 'subdomain',
    fieldSelectors: { addressType: at('addressType') },
  }),
  row({
    group: 'coordination.k8s.io',
    version: 'v1',
    resource: 'leases',
    kind: 'Lease',
    namespaced: true,
    hasStatus: false,
    storagePath: 'leases',
    nameRule: 'subdomain',
  }),
  row({
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    kind: 'Deployment',
    shortNames: ['deploy'],
    categories: ['all'],
    namespaced: true,
    hasStatus: true,
    storagePath: 'deployments',
    nameRule: 'subdomain',
  }),
  row({
    group: 'apps',
    version: 'v1',
    resource: 'replicasets',
    kind: 'ReplicaSet',
    shortNames: ['rs'],
    categories: ['all'],
    namespaced: true,
    hasStatus: true,
    storagePath: 'replicasets',
    nameRule: 'subdomain',
  }),
  row({
    group: 'superedge.io',
    version: 'v1',
    resource: 'servicegrids',
    kind: 'ServiceGrid',
    shortNames: ['sg'],
    namespaced: true,
    hasStatus: true,
    custom: true,
    storagePath: 'superedge.io/servicegrids',
    nameRule: 'subdomain',
  }),
  row({
    group: 'superedge.io',
    version: 'v1',
    resource: 'deploymentgrids',
    kind: 'DeploymentGrid',
    shortNames: ['dg'],
    namespaced: true,
    hasStatus: true,
    custom: true,
    storagePath: 'superedge.io/deploymentgrids',
    nameRule: 'subdomain',
  }),
  ...(
    [
      ['roles', 'Role', true],
      ['clusterroles', 'ClusterRole', false],
      ['rolebindings', 'RoleBinding', true],
      ['clusterrolebindings', 'ClusterRoleBinding', false],
    ] as const
  ).map(([resource, kind, namespaced]) =>
    // rbac.authorization.k8s.io/v1; names are path segments (upstream's ValidateRBACName).
    row({
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      resource,
      kind,
      namespaced,
      hasStatus: false,
      storagePath: resource,
      nameRule: 'path-segment',
    }),
  ),
  row({
    group: 'certificates.k8s.io',
    version: 'v1',
    resource: 'certificatesigningrequests',
    kind: 'CertificateSigningRequest',
    shortNames: ['csr'],
    namespaced: false,
    hasStatus: true,
    storagePath: 'certificatesigningrequests',
    // kube validates no CSR name ("we don't care what you call your certificate requests").
    nameRule: 'path-segment',
    fieldSelectors: { 'spec.signerName': at('spec', 'signerName') },
  }),
];

export const groupVersion = (r: Pick<ResourceInfo, 'group' | 'version'>): string =>
  r.group === '' ? r.version : `${r.group}/${r.version}`;

/** `services` or `events.events.k8s.io`: the name used in logs and errors. */
export const resourceId = (r: ResourceInfo): string =>
  r.group === '' ? r.resource : `${r.resource}.${r.group}`;

const byPath = new Map(RESOURCES.map((r) => [`${groupVersion(r)}/${r.resource}`, r]));
export const findResource = (group: string, version: string, resource: string): ResourceInfo | undefined =>
  byPath.get(`${group === '' ? version : `${group}/${version}`}/${resource}`);

export const mustFindResource = (group: string, resource: string): ResourceInfo => {
  const r = RESOURCES.find((x) => x.group === group && x.resource === resource);
  if (r === undefined) throw new Error(`unknown resource ${group}/${resource}`);
  return r;
};

/** Every field a selector may name for this resource, as kube-apiserver's field label conversion allows. */
export const selectableFields = (r: ResourceInfo): ReadonlySet<string> =>
  new Set([
    'metadata.name',
    ...(r.namespaced ? ['metadata.namespace'] : []),
    ...Object.keys(r.fieldSelectors),
  ]);

/** The field set a field selector is matched against. */
export function objectFields(r: ResourceInfo, obj: KObject): Record<string, string> {
  const out: Record<string, string> = { 'metadata.name': obj.metadata.name ?? '' };
  if (r.namespaced) out['metadata.namespace'] = obj.metadata.namespace ?? '';
  for (const [k, f] of Object.entries(r.fieldSelectors)) out[k] = f(obj);
  return out;
}
