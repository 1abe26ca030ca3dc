import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import {
  DEPLOYMENT_GRID_PRINTER_COLUMNS,
  SERVICE_GRID_PRINTER_COLUMNS,
  type PrinterColumn,
} from '../printers/custom.js';
import { isPlainObject } from '../json.js';
import { crdSchema, gridCRDs, type CustomResourceDefinition, type JSONSchemaProps } from './crds.js';
import { schemaFor } from './index.js';
import type { Schema } from './schema.js';
import { findUnknownFields } from './unknown-fields.js';

// The keys apiextensions.k8s.io/v1 JSONSchemaProps may carry in a structural schema as generated here:
// no $ref, no logical junctors (the int-or-string anyOf is not needed), no nullable.
const ALLOWED_KEYS: ReadonlySet<string> = new Set([
  'description',
  'type',
  'format',
  'default',
  'enum',
  'required',
  'items',
  'properties',
  'additionalProperties',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
]);
const TYPES: ReadonlySet<string> = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
const SCALARS: ReadonlySet<string> = new Set(['string', 'integer', 'number', 'boolean']);
// Formats kube-apiserver validates for CRDs (k8s.io/kube-openapi strfmt) that these schemas use.
const FORMATS: ReadonlySet<string> = new Set(['int32', 'int64', 'double', 'float', 'date-time', 'byte']);

/** Whether a JSON value fits a node's type (and enum): what apiextensions checks of a default. */
function fits(v: unknown, s: JSONSchemaProps): boolean {
  if (s['x-kubernetes-int-or-string'] === true) return typeof v === 'string' || Number.isInteger(v);
  if (s.enum !== undefined && !s.enum.includes(v as string)) return false;
  switch (s.type) {
    case 'string':
      return typeof v === 'string';
    case 'integer':
      return Number.isInteger(v);
    case 'number':
      return typeof v === 'number';
    case 'boolean':
      return typeof v === 'boolean';
    case 'array':
      return Array.isArray(v);
    case 'object':
      return isPlainObject(v);
    default:
      return s['x-kubernetes-preserve-unknown-fields'] === true;
  }
}

/** Every violation of the structural-schema rules below `s`, as `path: problem`. */
function structuralProblems(s: JSONSchemaProps, path: string, out: string[]): string[] {
  const bad = (why: string): void => {
    out.push(`${path || '<root>'}: ${why}`);
  };
  for (const k of Object.keys(s)) if (!ALLOWED_KEYS.has(k)) bad(`key ${k} is not allowed`);
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
  if (intOrString) {
    if (s.type !== undefined) bad('an int-or-string node has no type');
    if (s.properties !== undefined || s.items !== undefined || s.additionalProperties !== undefined)
      bad('an int-or-string node has no properties, items or additionalProperties');
  } else if (s.type === undefined) {
    if (!preserve) bad('type is missing');
  } else if (!TYPES.has(s.type)) bad(`unknown type ${s.type}`);
  if (s.format !== undefined && !FORMATS.has(s.format)) bad(`unknown format ${s.format}`);
  if (s.properties !== undefined && s.type !== 'object') bad('properties on a non-object');
  if (s.additionalProperties !== undefined && s.type !== 'object')
    bad('additionalProperties on a non-object');
  if (s.properties !== undefined && s.additionalProperties !== undefined)
    bad('both properties and additionalProperties');
  if (s.type === 'array' && s.items === undefined) bad('an array without items');
  if (s.items !== undefined && s.type !== 'array') bad('items on a non-array');
  if (s.required !== undefined) {
    if (s.type !== 'object') bad('required on a non-object');
    for (const r of s.required) if (s.properties?.[r] === undefined) bad(`required ${r} is not a property`);
  }
  if (s.enum !== undefined) {
    const { enum: values, ...typeOnly } = s;
    for (const e of values) if (!fits(e, typeOnly)) bad(`enum ${e}`);
  }
  if (s.default !== undefined && !fits(s.default, s))
    bad(`default ${JSON.stringify(s.default)} does not fit`);
  if (s['x-kubernetes-map-type'] !== undefined && s.type !== 'object') bad('map-type on a non-object');
  const listType = s['x-kubernetes-list-type'];
  if (listType !== undefined && s.type !== 'array') bad('list-type on a non-array');
  if (s['x-kubernetes-list-map-keys'] !== undefined && listType !== 'map')
    bad('list-map-keys without list-type map');
  if (listType === 'map') {
    const item = s.items;
    const keys = s['x-kubernetes-list-map-keys'] ?? [];
    if (keys.length === 0) bad('list-type map without keys');
    if (item?.type !== 'object') bad('list-type map over non-objects');
    for (const k of keys) {
      const p = item?.properties?.[k];
      if (p === undefined) bad(`list-map key ${k} is not a property of the items`);
      else {
        if (!(p.type !== undefined && SCALARS.has(p.type)) && p['x-kubernetes-int-or-string'] !== true)
          bad(`list-map key ${k} is not a scalar`);
        // apiextensions: "this property is in x-kubernetes-list-map-keys, so it must have a default or be
        // a required property".
        if (!(item?.required ?? []).includes(k) && p.default === undefined)
          bad(`list-map key ${k} is neither required nor defaulted`);
      }
    }
  }
  if (listType === 'set') {
    const item = s.items;
    const ok =
      (item?.type !== undefined && SCALARS.has(item.type)) ||
      (item?.type === 'object' && item['x-kubernetes-map-type'] === 'atomic') ||
      (item?.type === 'array' && item['x-kubernetes-list-type'] === 'atomic');
    if (!ok) bad('list-type set over items that are not scalars or atomic');
  }
  if (s.items !== undefined) structuralProblems(s.items, `${path}[*]`, out);
  if (s.additionalProperties !== undefined) structuralProblems(s.additionalProperties, `${path}{*}`, out);
  for (const [k, v] of Object.entries(s.properties ?? {}))
    structuralProblems(v, path ? `${path}.${k}` : k, out);
  return out;
}

/** Walk the source schema and the generated one side by side, calling `f` on each pair of nodes. */
function walkPair(
  src: Schema,
  gen: JSONSchemaProps,
  path: string,
  f: (src: Schema, gen: JSONSchemaProps, path: string) => void,
): void {
  f(src, gen, path);
  if (src.items !== undefined) walkPair(src.items, gen.items ?? {}, `${path}[*]`, f);
  if (src.additionalProperties !== undefined)
    walkPair(src.additionalProperties, gen.additionalProperties ?? {}, `${path}{*}`, f);
  for (const [k, v] of Object.entries(src.properties ?? {}))
    walkPair(v, gen.properties?.[k] ?? {}, path ? `${path}.${k}` : k, f);
}

const crds = gridCRDs();
const byKind = (kind: string): CustomResourceDefinition => {
  const c = crds.find((x) => x.spec.names.kind === kind);
  assert.ok(c !== undefined, kind);
  return c;
};
const schemaOf = (c: CustomResourceDefinition): JSONSchemaProps => c.spec.versions[0]!.schema.openAPIV3Schema;

describe('gridCRDs', () => {
  it('names both kinds as kube-apiserver requires: <plural>.<group>, with short names sg and dg', () => {
    assert.deepEqual(
      crds.map((c) => [c.metadata.name, c.spec.group, c.spec.scope, c.spec.names]),
      [
        [
          'servicegrids.superedge.io',
          'superedge.io',
          'Namespaced',
          {
            plural: 'servicegrids',
            singular: 'servicegrid',
            kind: 'ServiceGrid',
            listKind: 'ServiceGridList',
            shortNames: ['sg'],
          },
        ],
        [
          'deploymentgrids.superedge.io',
          'superedge.io',
          'Namespaced',
          {
            plural: 'deploymentgrids',
            singular: 'deploymentgrid',
            kind: 'DeploymentGrid',
            listKind: 'DeploymentGridList',
            shortNames: ['dg'],
          },
        ],
      ],
    );
    for (const c of crds) {
      assert.equal(c.apiVersion, 'apiextensions.k8s.io/v1');
      assert.equal(c.kind, 'CustomResourceDefinition');
    }
  });

  it('serves one version, v1, as the storage version, with the status subresource', () => {
    for (const c of crds) {
      assert.equal(c.spec.versions.length, 1);
      const v = c.spec.versions[0]!;
      assert.deepEqual([v.name, v.served, v.storage, v.subresources], ['v1', true, true, { status: {} }]);
    }
  });

  it('prints with the same columns as this server, Age included (a CRD gets no default Age once it lists columns)', () => {
    const cols = (list: readonly PrinterColumn[]): unknown => list.map((c) => ({ ...c }));
    assert.deepEqual(
      byKind('ServiceGrid').spec.versions[0]!.additionalPrinterColumns,
      cols(SERVICE_GRID_PRINTER_COLUMNS),
    );
    assert.deepEqual(
      byKind('DeploymentGrid').spec.versions[0]!.additionalPrinterColumns,
      cols(DEPLOYMENT_GRID_PRINTER_COLUMNS),
    );
    assert.deepEqual(
      byKind('DeploymentGrid').spec.versions[0]!.additionalPrinterColumns?.map((c) => [
        c.name,
        c.jsonPath,
        c.type,
      ]),
      [
        ['Grid-Key', '.spec.gridUniqKey', 'string'],
        ['Units', '.status.units', 'integer'],
        ['Ready', '.status.readyUnits', 'integer'],
        ['Age', '.metadata.creationTimestamp', 'date'],
      ],
    );
    assert.deepEqual(
      byKind('ServiceGrid').spec.versions[0]!.additionalPrinterColumns?.map((c) => [c.name, c.jsonPath]),
      [
        ['Grid-Key', '.spec.gridUniqKey'],
        ['Service', '.status.service'],
        ['Age', '.metadata.creationTimestamp'],
      ],
    );
  });

  it('has structural schemas: every node typed (or int-or-string, or preserving), no $ref, well-formed list markers', () => {
    for (const c of crds) assert.deepEqual(structuralProblems(schemaOf(c), '', []), [], c.metadata.name);
  });

  it('the checker itself catches what a structural schema must not have', () => {
    const problems = structuralProblems(
      {
        type: 'object',
        properties: {
          a: { description: 'untyped' },
          b: { $ref: '#/x' } as JSONSchemaProps,
          c: { type: 'string', items: { type: 'string' } },
          d: { type: 'array', items: { type: 'object' }, 'x-kubernetes-list-type': 'map' },
          e: { type: 'integer', 'x-kubernetes-int-or-string': true },
          f: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['k'],
            items: { type: 'object', properties: { k: { type: 'string' } } },
          },
        },
      },
      '',
      [],
    );
    assert.deepEqual(problems, [
      'a: type is missing',
      'b: key $ref is not allowed',
      'b: type is missing',
      'c: items on a non-array',
      'd: list-type map without keys',
      'e: an int-or-string node has no type',
      'f: list-map key k is neither required nor defaulted',
    ]);
  });

  it('reduces the root metadata to {type: object} and keeps apiVersion, kind, spec and status', () => {
    for (const c of crds) {
      const root = schemaOf(c);
      assert.equal(root.type, 'object');
      assert.deepEqual(root.properties?.['metadata'], { type: 'object' });
      assert.deepEqual(Object.keys(root.properties ?? {}), [
        'apiVersion',
        'kind',
        'metadata',
        'spec',
        'status',
      ]);
      assert.ok((root.description ?? '').length > 0);
    }
  });

  it('is generated from the same schemas: same fields, descriptions and list/map markers, minus svcplane-only keys', () => {
    for (const c of crds) {
      const src = schemaFor(c.spec.group, c.spec.names.kind);
      assert.ok(src !== undefined);
      let nodes = 0;
      walkPair(
        { ...src, properties: { ...src.properties, metadata: { type: 'object' } } },
        schemaOf(c),
        '',
        (s, g, path) => {
          nodes++;
          assert.equal(g.description, s.description, `${path}: description`);
          for (const k of [
            'x-kubernetes-list-type',
            'x-kubernetes-list-map-keys',
            'x-kubernetes-map-type',
          ] as const)
            assert.deepEqual(g[k], s[k], `${path}: ${k}`);
          assert.deepEqual(
            Object.keys(g.properties ?? {}),
            Object.keys(s.properties ?? {}),
            `${path}: properties`,
          );
          assert.equal(g['x-kubernetes-int-or-string'], s['x-kubernetes-int-or-string'], path);
          assert.equal(
            g['x-kubernetes-preserve-unknown-fields'],
            s['x-kubernetes-preserve-unknown-fields'],
            path,
          );
          const raw = g as Record<string, unknown>;
          for (const k of [
            'name',
            'x-svcplane-always',
            'x-kubernetes-patch-strategy',
            'x-kubernetes-patch-merge-key',
            'nullable',
          ])
            assert.equal(raw[k], undefined, `${path}: ${k}`);
        },
      );
      assert.ok(nodes > 50, `${c.metadata.name}: walked ${nodes} nodes`);
    }
  });

  it('marks int-or-string and free-form nodes the way apiextensions expects', () => {
    const dg = schemaOf(byKind('DeploymentGrid'));
    const rolling =
      dg.properties?.['spec']?.properties?.['template']?.properties?.['strategy']?.properties?.[
        'rollingUpdate'
      ];
    assert.deepEqual(rolling?.properties?.['maxSurge'], {
      description: rolling?.properties?.['maxSurge']?.description,
      'x-kubernetes-int-or-string': true,
    });
    const sg = schemaOf(byKind('ServiceGrid'));
    const targetPort =
      sg.properties?.['spec']?.properties?.['template']?.properties?.['ports']?.items?.properties?.[
        'targetPort'
      ];
    assert.equal(targetPort?.['x-kubernetes-int-or-string'], true);
    assert.equal(targetPort?.type, undefined);
    const ports = sg.properties?.['spec']?.properties?.['template']?.properties?.['ports'];
    assert.equal(ports?.['x-kubernetes-list-type'], 'map');
    assert.deepEqual(ports?.['x-kubernetes-list-map-keys'], ['port', 'protocol']);
    assert.equal(ports?.items?.properties?.['protocol']?.default, 'TCP');
  });

  it('types the statuses: ServiceGrid is a ServiceStatus plus service; DeploymentGrid has states, counts and conditions', () => {
    const sgStatus = schemaOf(byKind('ServiceGrid')).properties?.['status'];
    assert.deepEqual(Object.keys(sgStatus?.properties ?? {}), [
      'loadBalancer',
      'conditions',
      'observedGeneration',
      'service',
    ]);
    assert.equal(sgStatus?.['x-kubernetes-preserve-unknown-fields'], undefined);
    const dgStatus = schemaOf(byKind('DeploymentGrid')).properties?.['status'];
    assert.deepEqual(Object.keys(dgStatus?.properties ?? {}), [
      'states',
      'conditions',
      'observedGeneration',
      'units',
      'readyUnits',
    ]);
    assert.equal(
      dgStatus?.properties?.['states']?.additionalProperties?.properties?.['readyReplicas']?.type,
      'integer',
    );
    assert.deepEqual(dgStatus?.properties?.['conditions']?.['x-kubernetes-list-map-keys'], ['type']);
    const spec = schemaOf(byKind('DeploymentGrid')).properties?.['spec'];
    assert.deepEqual(spec?.properties?.['templates'], {
      description: spec?.properties?.['templates']?.description,
      type: 'object',
      additionalProperties: { type: 'string' },
    });
  });

  it('accepts, unpruned, a realistic DeploymentGrid (metadata aside)', () => {
    const dg = {
      apiVersion: 'superedge.io/v1',
      kind: 'DeploymentGrid',
      spec: {
        gridUniqKey: 'zone',
        templates: { 'zone-b': 'arm' },
        template: {
          replicas: 2,
          selector: { matchLabels: { app: 'echo' } },
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 0 } },
          template: {
            metadata: { labels: { app: 'echo' } },
            spec: { containers: [{ name: 'echo', image: 'echo:1', ports: [{ containerPort: 8080 }] }] },
          },
        },
        templatePool: { arm: { selector: { matchLabels: { app: 'echo' } }, template: {} } },
      },
      status: {
        observedGeneration: 3,
        units: 2,
        readyUnits: 1,
        states: { 'zone-a': { replicas: 2, readyReplicas: 2 }, 'zone-b': { replicas: 2 } },
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'UnitsNotReady',
            message: '1 of 2',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
      },
    };
    // The CRD schema is read with the same walker that prunes this server's requests.
    assert.deepEqual(
      findUnknownFields(dg, crdSchema(schemaFor('superedge.io', 'DeploymentGrid')!) as Schema),
      [],
    );
  });

  it('round-trips through YAML unchanged, with no anchors or aliases', () => {
    for (const c of crds) {
      const text = stringify(c, { aliasDuplicateObjects: false, lineWidth: 0 });
      assert.doesNotMatch(text, /^\s*[^#\n]*[&*]a\d+\b/m);
      assert.deepEqual(parse(text), JSON.parse(JSON.stringify(c)));
    }
    // Nothing is shared between nodes, so even the default serializer writes no aliases.
    assert.doesNotMatch(stringify(crds), / [&*]a\d+/);
  });
});
