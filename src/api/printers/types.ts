// The shapes shared by the per-kind printers.
import type { KObject } from '../object.js';

/** One column of a meta.k8s.io/v1 Table. Priority 0 columns are always shown; 1 only with `-o wide`. */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** A meta.k8s.io/v1 TableRowCondition (kube sets `Completed` on finished pods). */
export interface TableRowCondition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** How one kind prints: its columns, and the cells of one object in column order. */
export interface Printer {
  readonly columns: readonly TableColumnDefinition[];
  cells(obj: KObject, nowMs: number): unknown[];
  conditions?(obj: KObject): TableRowCondition[];
}

export const column = (
  name: string,
  description: string,
  opts: { type?: string; format?: string; priority?: number } = {},
): TableColumnDefinition => ({
  name,
  type: opts.type ?? 'string',
  format: opts.format ?? '',
  description,
  priority: opts.priority ?? 0,
});

/** Shown only with `-o wide`. */
export const wide = (name: string, description: string, type = 'string'): TableColumnDefinition =>
  column(name, description, { type, priority: 1 });

export const NAME_COLUMN = column(
  'Name',
  'The name of the object, unique among objects of its kind in its namespace (or in the cluster for cluster-scoped kinds).',
  { format: 'name' },
);

export const AGE_COLUMN = column(
  'Age',
  'Time elapsed since the server created the object (metadata.creationTimestamp).',
);
