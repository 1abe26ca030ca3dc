// The schema of every kind this server serves, looked up by group and kind, with the names the
// OpenAPI documents publish them under.
import { deployment, replicaSet } from './apps.js';
import { lease } from './coordination.js';
import { certificateSigningRequest } from './certificates.js';
import { coreEvent, endpoints, namespace, node, pod, service, serviceAccount } from './core.js';
import { endpointSlice } from './discovery.js';
import { event } from './events.js';
import { listSchema } from './meta.js';
import { clusterRole, clusterRoleBinding, role, roleBinding } from './rbac.js';
import type { Schema } from './schema.js';
import { deploymentGrid, serviceGrid } from './superedge.js';

export type { Schema } from './schema.js';

export interface KindSchema {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly listKind: string;
  /** Name of the kind in the OpenAPI documents: `io.k8s.api.core.v1.Service`. */
  readonly definitionName: string;
  /** Name of the list kind in the OpenAPI documents: `io.k8s.api.core.v1.ServiceList`. */
  readonly listDefinitionName: string;
  readonly schema: Schema;
  readonly listSchema: Schema;
}

const entry = (group: string, version: string, kind: string, schema: Schema): KindSchema => {
  const definitionName = schema.name;
  if (definitionName === undefined) throw new Error(`schema of ${kind} has no name`);
  const listDefinitionName = `${definitionName}List`;
  return {
    group,
    version,
    kind,
    listKind: `${kind}List`,
    definitionName,
    listDefinitionName,
    schema,
    listSchema: listSchema(listDefinitionName, kind, schema),
  };
};

export const KIND_SCHEMAS: readonly KindSchema[] = [
  entry('', 'v1', 'Namespace', namespace),
  entry('', 'v1', 'Node', node),
  entry('', 'v1', 'Pod', pod),
  entry('', 'v1', 'Service', service),
  entry('', 'v1', 'Endpoints', endpoints),
  entry('', 'v1', 'Event', coreEvent),
  entry('', 'v1', 'ServiceAccount', serviceAccount),
  entry('events.k8s.io', 'v1', 'Event', event),
  entry('discovery.k8s.io', 'v1', 'EndpointSlice', endpointSlice),
  entry('coordination.k8s.io', 'v1', 'Lease', lease),
  entry('apps', 'v1', 'Deployment', deployment),
  entry('apps', 'v1', 'ReplicaSet', replicaSet),
  entry('superedge.io', 'v1', 'ServiceGrid', serviceGrid),
  entry('superedge.io', 'v1', 'DeploymentGrid', deploymentGrid),
  entry('rbac.authorization.k8s.io', 'v1', 'Role', role),
  entry('rbac.authorization.k8s.io', 'v1', 'ClusterRole', clusterRole),
  entry('rbac.authorization.k8s.io', 'v1', 'RoleBinding', roleBinding),
  entry('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', clusterRoleBinding),
  entry('certificates.k8s.io', 'v1', 'CertificateSigningRequest', certificateSigningRequest),
];

const byGroupKind = new Map<string, KindSchema>();
for (const k of KIND_SCHEMAS) byGroupKind.set(`${k.group}/${k.kind}`, k);

/** The entry for a kind (`Service`) of a group (`''` for core). */
export const kindSchemaFor = (group: string, kind: string): KindSchema | undefined =>
  byGroupKind.get(`${group}/${kind}`);

/** The structural schema of a kind, or of its list kind (`ServiceList`); undefined for kinds not served. */
export function schemaFor(group: string, kind: string): Schema | undefined {
  const k = kindSchemaFor(group, kind);
  if (k !== undefined) return k.schema;
  if (kind.endsWith('List')) return kindSchemaFor(group, kind.slice(0, -'List'.length))?.listSchema;
  return undefined;
}
