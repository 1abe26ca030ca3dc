// Printers for the non-core built-in kinds: EndpointSlices, Leases and Deployments.
import {
  containerCells,
  firstWithMore,
  formatLabelSelector,
  int,
  obj,
  objects,
  str,
  strings,
} from './fields.js';
import { since } from './time.js';
import { AGE_COLUMN, NAME_COLUMN, column, wide, type Printer } from './types.js';

// ---- endpointslices ---------------------------------------------------------------------------

/** Up to three port numbers (or names, or `*` for all ports), `+ N more...`, or `<unset>`. */
function slicePorts(ports: unknown): string {
  const items = objects(ports).map((p) => {
    const port = p['port'];
    if (typeof port === 'number') return String(Math.trunc(port));
    const name = p['name'];
    return typeof name === 'string' ? name : '*';
  });
  return firstWithMore(items) || '<unset>';
}

/** Up to three addresses over all endpoints, `+ N more...`, or `<unset>`. */
function sliceEndpoints(endpoints: unknown): string {
  const items = objects(endpoints).flatMap((e) => strings(e['addresses']));
  return firstWithMore(items) || '<unset>';
}

export const endpointSlicePrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('AddressType', 'The kind of addresses in the slice: IPv4, IPv6 or FQDN.'),
    column('Ports', 'The ports every endpoint in the slice exposes.'),
    column('Endpoints', 'The addresses of the endpoints in the slice.'),
    AGE_COLUMN,
  ],
  cells: (slice, nowMs) => [
    slice.metadata.name ?? '',
    str(slice['addressType']),
    slicePorts(slice['ports']),
    sliceEndpoints(slice['endpoints']),
    since(slice.metadata.creationTimestamp, nowMs),
  ],
};

// ---- leases -----------------------------------------------------------------------------------

export const leasePrinter: Printer = {
  columns: [NAME_COLUMN, column('Holder', 'The identity of the current holder of the lease.'), AGE_COLUMN],
  cells: (lease, nowMs) => [
    lease.metadata.name ?? '',
    str(obj(lease['spec'])['holderIdentity']),
    since(lease.metadata.creationTimestamp, nowMs),
  ],
};

// ---- deployments ------------------------------------------------------------------------------

export const deploymentPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Ready', 'How many pods of the deployment are ready, out of how many are desired.'),
    column('Up-to-date', 'How many pods run the latest pod template.'),
    column('Available', 'How many pods have been ready for at least minReadySeconds.'),
    AGE_COLUMN,
    wide('Containers', 'The names of the containers in the pod template.'),
    wide('Images', 'The images of the containers in the pod template.'),
    wide('Selector', 'The label selector of the pods the deployment manages.'),
  ],
  cells: (deploy, nowMs) => {
    const spec = obj(deploy['spec']);
    const status = obj(deploy['status']);
    // spec.replicas defaults to 1.
    const desired = typeof spec['replicas'] === 'number' ? int(spec['replicas']) : 1;
    const [containers, images] = containerCells(obj(obj(spec['template'])['spec'])['containers']);
    return [
      deploy.metadata.name ?? '',
      `${int(status['readyReplicas'])}/${desired}`,
      int(status['updatedReplicas']),
      int(status['availableReplicas']),
      since(deploy.metadata.creationTimestamp, nowMs),
      containers,
      images,
      formatLabelSelector(spec['selector']),
    ];
  },
};

// ---- replicasets ------------------------------------------------------------------------------

export const replicaSetPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Desired', 'Number of desired pods (spec.replicas).', { type: 'integer' }),
    column('Current', 'Number of pods the replica set has (status.replicas).', { type: 'integer' }),
    column('Ready', 'Number of ready pods (status.readyReplicas).', { type: 'integer' }),
    AGE_COLUMN,
    wide('Containers', 'The names of the containers in the pod template.'),
    wide('Images', 'The images of the containers in the pod template.'),
    wide('Selector', 'The label selector of the pods the replica set manages.'),
  ],
  cells: (rs, nowMs) => {
    const spec = obj(rs['spec']);
    const status = obj(rs['status']);
    const desired = typeof spec['replicas'] === 'number' ? int(spec['replicas']) : 1;
    const [containers, images] = containerCells(obj(obj(spec['template'])['spec'])['containers']);
    return [
      rs.metadata.name ?? '',
      desired,
      int(status['replicas']),
      int(status['readyReplicas']),
      since(rs.metadata.creationTimestamp, nowMs),
      containers,
      images,
      formatLabelSelector(spec['selector']),
    ];
  },
};
