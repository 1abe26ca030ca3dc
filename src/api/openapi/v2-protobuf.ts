// GET /openapi/v2 as kubectl 1.27 and 1.28 need it: a protobuf gnostic `openapi.v2.Document` (they
// ask for application/com.github.proto-openapi.spec.v2@v1.0+protobuf; a JSON body fails to parse).
// Those versions
// - validate through it: finding a PATCH operation that carries the object's
//   `x-kubernetes-group-version-kind` vendor extension and a `fieldValidation` query parameter, they
//   leave validation to the server and send fieldValidation=Strict;
// - compute client-side apply patches from it: a PATCH operation that consumes
//   application/strategic-merge-patch+json makes them build the strategic merge patch from the
//   definition of the kind (patch strategy and merge key as vendor extensions beside each $ref),
//   which is how fields their compiled-in types lack (spec.topologyKeys) still patch.
//
// Field numbers are those of gnostic's openapiv2/OpenAPIv2.proto (note Paths.path = 2). Vendor
// extension values, defaults and enum values are carried as YAML; JSON text is valid YAML. Serve the
// bytes with Content-Type application/octet-stream.
import { isPlainObject as isObject, type JsonRecord } from '../json.js';
import { RESOURCES, type ResourceInfo } from '../resources.js';
import { Components, defineKinds, GVK_EXTENSION, OPENAPI_INFO_VERSION } from './v3.js';
import { hasApproval } from '../subresources.js';

// ---------------------------------------------------------------------------------------------------
// A minimal protobuf writer: only length-delimited fields are needed.

type Field = Uint8Array;

function varint(n: number): number[] {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return out;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A length-delimited field (wire type 2): strings and embedded messages. */
const bytesField = (num: number, payload: Uint8Array): Field =>
  concat([Uint8Array.from([...varint(num * 8 + 2), ...varint(payload.length)]), payload]);

const encoder = new TextEncoder();
const strField = (num: number, s: string): Field => bytesField(num, encoder.encode(s));
const msgField = (num: number, ...fields: readonly Field[]): Field => bytesField(num, concat(fields));

// ---------------------------------------------------------------------------------------------------
// gnostic openapi.v2 messages, by field number

const Document = { swagger: 1, info: 2, paths: 8, definitions: 9 } as const;
const Info = { title: 1, version: 2 } as const;
const Paths = { path: 2 } as const;
/** NamedPathItem, NamedAny, NamedSchema. */
const Named = { name: 1, value: 2 } as const;
const PathItem = { patch: 8 } as const;
const Operation = {
  description: 3,
  operationId: 5,
  consumes: 7,
  parameters: 8,
  vendorExtension: 13,
} as const;
const ParametersItem = { parameter: 1 } as const;
const Parameter = { nonBodyParameter: 2 } as const;
const NonBodyParameter = { queryParameterSubSchema: 3 } as const;
const QueryParameterSubSchema = { in: 2, description: 3, name: 4, type: 6 } as const;
const Any = { yaml: 2 } as const;
/** Definitions, Properties: `additional_properties`; AdditionalPropertiesItem, ItemsItem: `schema`. */
const Repeated = { item: 1 } as const;
const Schema = {
  ref: 1,
  format: 2,
  description: 4,
  default: 5,
  required: 19,
  enum: 20,
  additionalProperties: 21,
  type: 22,
  items: 23,
  properties: 25,
  vendorExtension: 31,
} as const;

const anyField = (num: number, value: unknown): Field =>
  msgField(num, strField(Any.yaml, JSON.stringify(value)));
const namedAny = (num: number, name: string, value: unknown): Field =>
  msgField(num, strField(Named.name, name), anyField(Named.value, value));

/** One schema of the converted (Swagger 2.0 dialect) JSON form as a gnostic Schema message. */
function schemaMessage(s: JsonRecord): Uint8Array {
  const fields: Field[] = [];
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const ref = str(s['$ref']);
  if (ref !== undefined) fields.push(strField(Schema.ref, ref));
  const format = str(s['format']);
  if (format !== undefined) fields.push(strField(Schema.format, format));
  const description = str(s['description']);
  if (description !== undefined) fields.push(strField(Schema.description, description));
  if (s['default'] !== undefined) fields.push(anyField(Schema.default, s['default']));
  if (Array.isArray(s['required']))
    for (const r of s['required'] as unknown[]) fields.push(strField(Schema.required, String(r)));
  if (Array.isArray(s['enum'])) for (const e of s['enum'] as unknown[]) fields.push(anyField(Schema.enum, e));
  const additional = s['additionalProperties'];
  if (isObject(additional))
    fields.push(msgField(Schema.additionalProperties, bytesField(Repeated.item, schemaMessage(additional))));
  const type = str(s['type']);
  if (type !== undefined) fields.push(msgField(Schema.type, strField(Repeated.item, type)));
  const items = s['items'];
  if (isObject(items)) fields.push(msgField(Schema.items, bytesField(Repeated.item, schemaMessage(items))));
  const properties = s['properties'];
  if (isObject(properties))
    fields.push(
      msgField(
        Schema.properties,
        ...Object.entries(properties).map(([name, sub]) =>
          msgField(
            Repeated.item,
            strField(Named.name, name),
            bytesField(Named.value, schemaMessage(sub as JsonRecord)),
          ),
        ),
      ),
    );
  for (const [k, v] of Object.entries(s))
    if (k.startsWith('x-') && v !== undefined) fields.push(namedAny(Schema.vendorExtension, k, v));
  return concat(fields);
}

// ---------------------------------------------------------------------------------------------------
// Paths

const PATCH_QUERY_PARAMETERS: readonly (readonly [name: string, type: string, description: string])[] = [
  ['dryRun', 'string', 'When present, the request is fully processed but nothing is persisted.'],
  ['fieldManager', 'string', 'Name of the actor making the change.'],
  ['fieldValidation', 'string', 'Ignore, Warn or Strict handling of unknown and duplicate fields.'],
  ['force', 'boolean', 'For apply patches: take ownership of conflicting fields.'],
];

const queryParameter = (name: string, type: string, description: string): Field =>
  msgField(
    Operation.parameters,
    msgField(
      ParametersItem.parameter,
      msgField(
        Parameter.nonBodyParameter,
        msgField(
          NonBodyParameter.queryParameterSubSchema,
          strField(QueryParameterSubSchema.in, 'query'),
          strField(QueryParameterSubSchema.description, description),
          strField(QueryParameterSubSchema.name, name),
          strField(QueryParameterSubSchema.type, type),
        ),
      ),
    ),
  );

/** Patch formats accepted; custom resources, like CRDs, take no strategic merge patch. */
const consumes = (r: ResourceInfo): string[] => [
  'application/json-patch+json',
  'application/merge-patch+json',
  ...(r.custom ? [] : ['application/strategic-merge-patch+json']),
  'application/apply-patch+yaml',
];

function patchPath(path: string, r: ResourceInfo, operationId: string): Field {
  const operation = [
    strField(Operation.description, `Partially update the named ${r.kind}.`),
    strField(Operation.operationId, operationId),
    ...consumes(r).map((t) => strField(Operation.consumes, t)),
    ...PATCH_QUERY_PARAMETERS.map(([name, type, description]) => queryParameter(name, type, description)),
    namedAny(Operation.vendorExtension, GVK_EXTENSION, { group: r.group, kind: r.kind, version: r.version }),
  ];
  return msgField(
    Paths.path,
    strField(Named.name, path),
    msgField(Named.value, msgField(PathItem.patch, ...operation)),
  );
}

/** The item path of every resource, and its status path, each with a PATCH operation. */
function patchPaths(): Field[] {
  const out: Field[] = [];
  for (const r of RESOURCES) {
    const prefix = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
    const item = `${prefix}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.resource}/{name}`;
    const id = `patch${r.kind}_${r.group === '' ? 'core' : r.group}_${r.version}`;
    out.push(patchPath(item, r, id));
    if (r.hasStatus) out.push(patchPath(`${item}/status`, r, `${id}_status`));
    if (hasApproval(r)) out.push(patchPath(`${item}/approval`, r, `${id}_approval`));
  }
  return out;
}

function definitions(): Field {
  const c = new Components('v2');
  defineKinds(c, RESOURCES);
  return msgField(
    Document.definitions,
    ...[...c.schemas.keys()]
      .sort()
      .map((name) =>
        msgField(
          Repeated.item,
          strField(Named.name, name),
          bytesField(Named.value, schemaMessage(c.schemas.get(name) as JsonRecord)),
        ),
      ),
  );
}

let encoded: Uint8Array | undefined;

/** The protobuf-encoded OpenAPI v2 document; built once. */
export function openAPIV2Protobuf(): Uint8Array {
  if (encoded === undefined)
    encoded = concat([
      strField(Document.swagger, '2.0'),
      msgField(
        Document.info,
        strField(Info.title, 'Kubernetes'),
        strField(Info.version, OPENAPI_INFO_VERSION),
      ),
      msgField(Document.paths, ...patchPaths()),
      definitions(),
    ]);
  return encoded;
}
