// Custom resources print the way kube-apiserver prints a CustomResourceDefinition's objects: a Name
// column, then one column per additionalPrinterColumn, each read by a simple JSON path and typed by
// the column's OpenAPI type. A CRD without printer columns gets a single `Age` date column.
import type { KObject } from '../object.js';
import { isPlainObject } from '../json.js';
import { parseRFC3339, since } from './time.js';
import { NAME_COLUMN, type Printer, type TableColumnDefinition } from './types.js';

/** A CustomResourceColumnDefinition, limited to dotted JSON paths (`.spec.gridUniqKey`). */
export interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly jsonPath: string;
  readonly description?: string;
  readonly format?: string;
  readonly priority?: number;
}

const MISSING = Symbol('missing');

function lookup(o: unknown, jsonPath: string): unknown {
  let cur: unknown = o;
  for (const key of jsonPath.split('.').filter((k) => k !== '')) {
    if (!isPlainObject(cur) || !(key in cur)) return MISSING;
    cur = cur[key];
  }
  return cur;
}

/** A string column prints any value as text, as kube's JSONPath printer would. */
function asText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** The cell for a value found at a column's path; null (printed `<none>`) when absent or mistyped. */
function cellFor(type: PrinterColumn['type'], v: unknown, nowMs: number): unknown {
  if (v === MISSING || v === null || v === undefined) return null;
  switch (type) {
    case 'string':
      return asText(v);
    case 'integer':
      return typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : null;
    case 'number':
      return typeof v === 'number' && Number.isFinite(v) ? v : null;
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    case 'date':
      if (typeof v !== 'string') return null;
      return parseRFC3339(v) === undefined ? '<invalid>' : since(v, nowMs);
  }
}

/** kube-apiserver's column for a CRD that defines no printer columns. */
export const DEFAULT_CUSTOM_COLUMNS: readonly PrinterColumn[] = [
  {
    name: 'Age',
    type: 'date',
    jsonPath: '.metadata.creationTimestamp',
    description: 'Time elapsed since the server created the object (metadata.creationTimestamp).',
  },
];

export function customPrinter(printerColumns: readonly PrinterColumn[]): Printer {
  const cols = printerColumns.length > 0 ? printerColumns : DEFAULT_CUSTOM_COLUMNS;
  const columns: TableColumnDefinition[] = [
    NAME_COLUMN,
    ...cols.map((c) => ({
      name: c.name,
      type: c.type,
      format: c.format ?? '',
      description:
        c.description !== undefined && c.description !== ''
          ? c.description
          : `Custom resource definition column (in JSONPath format): ${c.jsonPath}`,
      priority: c.priority ?? 0,
    })),
  ];
  return {
    columns,
    cells: (o: KObject, nowMs: number) => [
      o.metadata.name ?? '',
      ...cols.map((c) => cellFor(c.type, lookup(o, c.jsonPath), nowMs)),
    ],
  };
}

// The superedge.io grid kinds print with these columns, and `svcplane crds` writes the very same lists
// as the CRDs' additionalPrinterColumns. A CRD that lists columns gets no Age column of its own, so Age
// is listed explicitly, as real CRDs do.

const GRID_KEY_COLUMN: PrinterColumn = {
  name: 'Grid-Key',
  type: 'string',
  jsonPath: '.spec.gridUniqKey',
  description: 'The node label key whose values divide the nodes into units.',
};

const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

/** ServiceGrid: Name, Grid-Key, Service, Age. */
export const SERVICE_GRID_PRINTER_COLUMNS: readonly PrinterColumn[] = [
  GRID_KEY_COLUMN,
  {
    name: 'Service',
    type: 'string',
    jsonPath: '.status.service',
    description: 'The Service the grid produced (<name>-svc).',
  },
  AGE_COLUMN,
];

/** DeploymentGrid: Name, Grid-Key, Units, Ready, Age. */
export const DEPLOYMENT_GRID_PRINTER_COLUMNS: readonly PrinterColumn[] = [
  GRID_KEY_COLUMN,
  {
    name: 'Units',
    type: 'integer',
    jsonPath: '.status.units',
    description: 'Units (node label values) the grid keeps a Deployment in.',
  },
  {
    name: 'Ready',
    type: 'integer',
    jsonPath: '.status.readyUnits',
    description: 'Units whose Deployment has all the replicas it asks for ready.',
  },
  AGE_COLUMN,
];
