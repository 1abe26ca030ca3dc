// The apiextensions.k8s.io/v1 CustomResourceDefinitions of the superedge.io/v1 kinds, generated from the
// very schemas (superedge.ts), resource rows (resources.ts) and printer columns (printers/custom.ts) this
// server serves them with, so a real kube-apiserver given these CRDs serves the same API and the grid
// controllers run against either. `svcplane crds` prints them.
//
// A CRD's schema must be structural (apiextensions-apiserver's pkg/apiserver/schema, "structural
// schema" in the CRD docs): every node has a type, except an int-or-string node (no type) and a node
// that preserves unknown fields; properties only on objects, items only on arrays, a map is an object
// with additionalProperties; no $ref; the root's metadata is a bare `{type: object}`; list-map keys
// must be required or defaulted. The internal schemas are already inline trees (a `name` is only a
// hoisting hint for the OpenAPI documents), so the conversion is a walk that keeps the keys
// JSONSchemaProps knows and drops svcplane's own (`name`, `x-svcplane-always`) and the strategic merge
// patch keys (`x-kubernetes-patch-*`), which custom resources do not support.
import {
  DEPLOYMENT_GRID_PRINTER_COLUMNS,
  SERVICE_GRID_PRINTER_COLUMNS,
  type PrinterColumn,
} from '../printers/custom.js';
import { mustFindResource, type ResourceInfo } from '../resources.js';
import { kindSchemaFor } from './index.js';
import type { Schema } from './schema.js';

/** The subset of apiextensions.k8s.io/v1 JSONSchemaProps the generated schemas use. */
export interface JSONSchemaProps {
  description?: string;
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  default?: unknown;
  enum?: string[];
  required?: string[];
  items?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: true;
  'x-kubernetes-embedded-resource'?: true;
  'x-kubernetes-int-or-string'?: true;
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
}

export interface CustomResourceColumnDefinition {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string };
  spec: {
    group: string;
    names: { plural: string; singular: string; kind: string; listKind: string; shortNames?: string[] };
    scope: 'Namespaced' | 'Cluster';
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JSONSchemaProps };
      subresources?: { status: Record<string, never> };
      additionalPrinterColumns?: CustomResourceColumnDefinition[];
    }>;
  };
}

/**
 * `s` as a CRD schema node: a fresh tree (nothing shared, so YAML output has no anchors), in
 * JSONSchemaProps' field order.
 */
export function crdSchemaNode(s: Schema): JSONSchemaProps {
  const out: JSONSchemaProps = {};
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  if (s.description !== undefined) out.description = s.description;
  // An int-or-string node has no type of its own (its value is typed either way).
  if (s.type !== undefined && !intOrString) out.type = s.type;
  if (s.format !== undefined && !intOrString) out.format = s.format;
  if (s.default !== undefined) out.default = structuredClone(s.default);
  if (s.enum !== undefined) out.enum = [...s.enum];
  if (s.required !== undefined) out.required = [...s.required];
  if (s.items !== undefined) out.items = crdSchemaNode(s.items);
  if (s.properties !== undefined) {
    const props: Record<string, JSONSchemaProps> = {};
    for (const [k, v] of Object.entries(s.properties)) props[k] = crdSchemaNode(v);
    out.properties = props;
  }
  if (s.additionalProperties !== undefined) out.additionalProperties = crdSchemaNode(s.additionalProperties);
  if (s['x-kubernetes-preserve-unknown-fields'] === true) out['x-kubernetes-preserve-unknown-fields'] = true;
  if (s['x-kubernetes-embedded-resource'] === true) out['x-kubernetes-embedded-resource'] = true;
  if (intOrString) out['x-kubernetes-int-or-string'] = true;
  if (s['x-kubernetes-list-map-keys'] !== undefined)
    out['x-kubernetes-list-map-keys'] = [...s['x-kubernetes-list-map-keys']];
  if (s['x-kubernetes-list-type'] !== undefined) out['x-kubernetes-list-type'] = s['x-kubernetes-list-type'];
  if (s['x-kubernetes-map-type'] !== undefined) out['x-kubernetes-map-type'] = s['x-kubernetes-map-type'];
  return out;
}

/**
 * The openAPIV3Schema of a kind: its schema converted node by node, with the root's `metadata` reduced
 * to `{type: object}` (apiextensions validates metadata itself and allows nothing more at the root).
 */
export function crdSchema(kindSchema: Schema): JSONSchemaProps {
  const root = crdSchemaNode(kindSchema);
  if (root.properties?.['metadata'] !== undefined) root.properties['metadata'] = { type: 'object' };
  return root;
}

const columnDefinition = (c: PrinterColumn): CustomResourceColumnDefinition => ({
  name: c.name,
  type: c.type,
  jsonPath: c.jsonPath,
  ...(c.description !== undefined ? { description: c.description } : {}),
  ...(c.format !== undefined ? { format: c.format } : {}),
  ...(c.priority !== undefined ? { priority: c.priority } : {}),
});

/** The CRD of a custom resource this server serves, with the printer columns it prints with. */
export function customResourceDefinition(
  r: ResourceInfo,
  printerColumns: readonly PrinterColumn[],
): CustomResourceDefinition {
  const k = kindSchemaFor(r.group, r.kind);
  if (k === undefined) throw new Error(`no schema for ${r.group}/${r.kind}`);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${r.resource}.${r.group}` },
    spec: {
      group: r.group,
      names: {
        plural: r.resource,
        singular: r.singular,
        kind: r.kind,
        listKind: r.listKind,
        ...(r.shortNames.length > 0 ? { shortNames: [...r.shortNames] } : {}),
      },
      scope: r.namespaced ? 'Namespaced' : 'Cluster',
      versions: [
        {
          name: r.version,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: crdSchema(k.schema) },
          ...(r.hasStatus ? { subresources: { status: {} } } : {}),
          // A CRD that lists columns replaces the default Age column, so the lists carry Age themselves.
          ...(printerColumns.length > 0
            ? { additionalPrinterColumns: printerColumns.map(columnDefinition) }
            : {}),
        },
      ],
    },
  };
}

/** The CRDs of the superedge.io/v1 kinds: ServiceGrid, then DeploymentGrid. */
export function gridCRDs(): CustomResourceDefinition[] {
  return [
    customResourceDefinition(mustFindResource('superedge.io', 'servicegrids'), SERVICE_GRID_PRINTER_COLUMNS),
    customResourceDefinition(
      mustFindResource('superedge.io', 'deploymentgrids'),
      DEPLOYMENT_GRID_PRINTER_COLUMNS,
    ),
  ];
}
