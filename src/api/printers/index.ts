// Server-side printing: the meta.k8s.io/v1 Table columns and row cells kube-apiserver returns for each
// kind, so that `kubectl get` (which has no printers of its own) shows the same columns and texts.
// Rows always carry every column, wide ones included; kubectl drops priority > 0 columns unless `-o wide`.
import type { KObject } from '../object.js';
import type { ResourceInfo } from '../resources.js';
import {
  endpointsPrinter,
  namespacePrinter,
  nodePrinter,
  serviceAccountPrinter,
  servicePrinter,
} from './core.js';
import { customPrinter, DEPLOYMENT_GRID_PRINTER_COLUMNS, SERVICE_GRID_PRINTER_COLUMNS } from './custom.js';
import { coreEventPrinter, eventsV1Printer } from './events.js';
import { deploymentPrinter, endpointSlicePrinter, leasePrinter, replicaSetPrinter } from './others.js';
import { podPrinter } from './pods.js';
import { bindingPrinter } from './rbac.js';
import { csrPrinter } from './certificates.js';
import { formatTimestamp, parseTimestamp, ZERO_TIME_MS } from './time.js';
import {
  NAME_COLUMN,
  column,
  type Printer,
  type TableColumnDefinition,
  type TableRowCondition,
} from './types.js';

export type { TableColumnDefinition, TableRowCondition } from './types.js';
export { DEPLOYMENT_GRID_PRINTER_COLUMNS, SERVICE_GRID_PRINTER_COLUMNS } from './custom.js';
export { formatTimestamp } from './time.js';

const serviceGridPrinter = customPrinter(SERVICE_GRID_PRINTER_COLUMNS);
const deploymentGridPrinter = customPrinter(DEPLOYMENT_GRID_PRINTER_COLUMNS);

const PRINTERS: ReadonlyMap<string, Printer> = new Map([
  ['/namespaces', namespacePrinter],
  ['/nodes', nodePrinter],
  ['/pods', podPrinter],
  ['/services', servicePrinter],
  ['/endpoints', endpointsPrinter],
  ['/events', coreEventPrinter],
  ['/serviceaccounts', serviceAccountPrinter],
  ['events.k8s.io/events', eventsV1Printer],
  ['discovery.k8s.io/endpointslices', endpointSlicePrinter],
  ['coordination.k8s.io/leases', leasePrinter],
  ['apps/deployments', deploymentPrinter],
  ['apps/replicasets', replicaSetPrinter],
  ['superedge.io/servicegrids', serviceGridPrinter],
  ['superedge.io/deploymentgrids', deploymentGridPrinter],
  ['rbac.authorization.k8s.io/rolebindings', bindingPrinter],
  ['rbac.authorization.k8s.io/clusterrolebindings', bindingPrinter],
  ['certificates.k8s.io/certificatesigningrequests', csrPrinter],
]);

/** kube-apiserver's default table for a built-in kind without a printer: name and RFC 3339 creation time. */
const defaultPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    column('Created At', 'When the server created the object (metadata.creationTimestamp).', {
      type: 'date',
    }),
  ],
  cells: (o) => [
    o.metadata.name ?? '',
    formatTimestamp(parseTimestamp(o.metadata.creationTimestamp) ?? ZERO_TIME_MS),
  ],
};

const defaultCustomPrinter = customPrinter([]);

function printerFor(r: ResourceInfo): Printer {
  return PRINTERS.get(`${r.group}/${r.resource}`) ?? (r.custom ? defaultCustomPrinter : defaultPrinter);
}

/** The Table columns for a resource, wide (priority 1) columns included. */
export function columnsFor(r: ResourceInfo): TableColumnDefinition[] {
  return printerFor(r).columns.map((c) => ({ ...c }));
}

/** One object's cells, in the order of columnsFor(r); ages are measured from nowMs (ms since epoch). */
export function rowCells(r: ResourceInfo, obj: KObject, nowMs: number): unknown[] {
  return printerFor(r).cells(obj, nowMs);
}

/** The row conditions kube attaches (`Completed` on pods that succeeded or failed); usually none. */
export function rowConditions(r: ResourceInfo, obj: KObject): TableRowCondition[] {
  return printerFor(r).conditions?.(obj) ?? [];
}
