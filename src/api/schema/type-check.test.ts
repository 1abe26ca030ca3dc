import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  decodeErrorText,
  findTypeMismatch,
  schemaTypeErrorText,
  typeErrorText,
  typeErrors,
} from './type-check.js';
import { KIND_SCHEMAS, schemaFor } from './index.js';
import {
  arr,
  bool,
  free,
  int32,
  int64,
  intOrString,
  mapOf,
  obj,
  quantity,
  quantityMap,
  str,
  time,
} from './build.js';
import type { Schema } from './schema.js';

const text = (group: string, kind: string, obj: unknown): string | undefined => {
  const m = findTypeMismatch(obj, schemaFor(group, kind)!);
  return m === undefined ? undefined : decodeErrorText(m);
};

describe('findTypeMismatch: Go decoder wording (encoding/json UnmarshalTypeError)', () => {
  const cases: Array<[string, string, string, unknown, string | undefined]> = [
    [
      'status of the wrong type',
      '',
      'Node',
      { status: 'garbage' },
      'json: cannot unmarshal string into Go struct field Node.status of type v1.NodeStatus',
    ],
    [
      'a list given a string',
      '',
      'Node',
      { status: { conditions: 'x' } },
      'json: cannot unmarshal string into Go struct field NodeStatus.status.conditions of type []v1.NodeCondition',
    ],
    [
      'list items: no index in the field name',
      '',
      'Node',
      { status: { conditions: [{ type: 'Ready' }, 'x'] } },
      'json: cannot unmarshal string into Go struct field NodeStatus.status.conditions of type v1.NodeCondition',
    ],
    [
      'a field inside a list item',
      '',
      'Service',
      { spec: { ports: [{ port: '80' }] } },
      'json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32',
    ],
    [
      'a fraction where Go has an integer',
      'apps',
      'Deployment',
      { spec: { replicas: 1.5 } },
      'json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32',
    ],
    [
      'a map value: the key is not part of the name',
      '',
      'Pod',
      { metadata: { labels: { app: 1 } } },
      'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    ],
    [
      'a bool where a map is',
      '',
      'Pod',
      { metadata: { annotations: true } },
      'json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.annotations of type map[string]string',
    ],
    [
      'an object where a string is',
      '',
      'Service',
      { spec: { type: {} } },
      'json: cannot unmarshal object into Go struct field ServiceSpec.spec.type of type string',
    ],
    [
      'an array where a struct is',
      '',
      'Pod',
      { spec: [] },
      'json: cannot unmarshal array into Go struct field Pod.spec of type v1.PodSpec',
    ],
    [
      'IntOrString given a bool',
      '',
      'Service',
      { spec: { ports: [{ port: 80, targetPort: true }] } },
      'json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32',
    ],
    [
      'Quantity given a bool: the quantity parser answers',
      '',
      'Node',
      { status: { capacity: { cpu: true } } },
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ],
    ['Quantity given a number', '', 'Node', { status: { capacity: { cpu: 2, memory: '1Gi' } } }, undefined],
    ['IntOrString given a string', '', 'Service', { spec: { ports: [{ targetPort: 'http' }] } }, undefined],
    ['null anywhere', '', 'Node', { spec: null, status: { conditions: null, capacity: null } }, undefined],
    ['unknown fields are not this check', '', 'Node', { status: { bogus: 3 } }, undefined],
    [
      'free-form fields (managedFields fieldsV1) take anything',
      '',
      'Node',
      { metadata: { managedFields: [{ fieldsV1: 'x' }] } },
      undefined,
    ],
    [
      'the first mismatch in document order',
      '',
      'Node',
      { spec: { unschedulable: 'yes' }, status: 'garbage' },
      'json: cannot unmarshal string into Go struct field NodeSpec.spec.unschedulable of type bool',
    ],
  ];
  for (const [name, group, kind, obj, want] of cases) {
    it(name, () => assert.equal(text(group, kind, obj), want));
  }
});

describe('findTypeMismatch: custom resources (OpenAPI validation wording)', () => {
  it('names the path with indices and the JSON type found', () => {
    const m = findTypeMismatch(
      { spec: { template: { ports: [{ port: 'x' }] } } },
      schemaFor('superedge.io', 'ServiceGrid')!,
    );
    assert.ok(m);
    assert.equal(m.path, 'spec.template.ports[0].port');
    assert.equal(
      schemaTypeErrorText(m),
      'spec.template.ports[0].port in body must be of type integer: "string"',
    );
  });
  it('an object of the wrong type', () => {
    const m = findTypeMismatch({ status: 'garbage' }, schemaFor('superedge.io', 'DeploymentGrid')!);
    assert.equal(schemaTypeErrorText(m!), 'status in body must be of type object: "string"');
  });
});

const double: Schema = { type: 'number', format: 'double' };
const sample = obj({
  name: str(),
  port: int32(),
  big: int64(),
  ratio: double,
  on: bool(),
  at: time(),
  target: intOrString(),
  cpu: quantity(),
  sub: obj({ x: str() }),
  list: arr(obj({ key: str(), value: int32() })),
  labels: mapOf(str()),
  capacity: quantityMap(),
  raw: free(),
});

const one = (value: Record<string, unknown>): string[] => typeErrors(sample, value).map(typeErrorText);

describe('typeErrors', () => {
  const table: [string, Record<string, unknown>, string[]][] = [
    ['a well-typed value', { name: 'a', port: 80, big: 2 ** 40, ratio: 0.5, on: true }, []],
    ['a number for a string', { name: 5 }, ['name: number 5 where a string is expected']],
    ['an object for a string', { name: {} }, ['name: object where a string is expected']],
    ['a string for an integer', { port: '80' }, ['port: string where an integer is expected']],
    ['a fraction for an integer', { port: 1.5 }, ['port: number 1.5 where an integer is expected']],
    ['an int32 out of range', { port: 2 ** 31 }, [`port: number ${2 ** 31} where an integer is expected`]],
    ['a bool for a number', { ratio: true }, ['ratio: bool where a number is expected']],
    ['a string for a boolean', { on: 'true' }, ['on: string where a boolean is expected']],
    ['an array for an object', { sub: [] }, ['sub: array where an object is expected']],
    ['a string for an object', { sub: 'garbage' }, ['sub: string where an object is expected']],
    ['a string for an array', { list: 'x' }, ['list: string where an array is expected']],
    ['an object for an array', { list: {} }, ['list: object where an array is expected']],
    ['a time that does not parse', { at: 'yesterday' }, ['at: string where a date-time is expected']],
    ['a time', { at: '2026-01-02T03:04:05Z' }, []],
    ['IntOrString: a number or a string', { target: 8080 }, []],
    ['IntOrString: a name', { target: 'http' }, []],
    ['IntOrString: a fraction', { target: 1.5 }, ['target: number 1.5 where an int-or-string is expected']],
    ['IntOrString: an object', { target: {} }, ['target: object where an int-or-string is expected']],
    ['Quantity: a string', { cpu: '500m' }, []],
    ['Quantity: a number', { cpu: 1.5 }, []],
    ['Quantity: binary SI and exponents', { capacity: { memory: '2Gi', x: '1e3', y: '-.5' } }, []],
    ['Quantity: a bool', { cpu: false }, ['cpu: bool where a quantity is expected']],
    ['Quantity: text that does not parse', { cpu: 'lots' }, ['cpu: string where a quantity is expected']],
    ['null anywhere', { name: null, sub: null, list: null, target: null, cpu: null, at: null }, []],
    ['null inside lists and maps', { list: [null], labels: { a: null } }, []],
    ['undeclared fields', { bogus: { deep: 1 } }, []],
    ['anything below a free-form field', { raw: { a: [1, 'x', { b: false }] } }, []],
    [
      'nested arrays of objects',
      { list: [{ key: 'a', value: 1 }, 'x', { key: 2, value: 'y' }] },
      [
        'list[1]: string where an object is expected',
        'list[2].key: number 2 where a string is expected',
        'list[2].value: string where an integer is expected',
      ],
    ],
    [
      'map values',
      { labels: { a: 'b', c: 1 }, capacity: { cpu: {} } },
      ['labels.c: number 1 where a string is expected', 'capacity.cpu: object where a quantity is expected'],
    ],
  ];
  for (const [name, value, want] of table) it(name, () => assert.deepEqual(one(value), want));

  it('checks the value itself, and starts paths at the given one', () => {
    assert.deepEqual(typeErrors(sample, 'x').map(typeErrorText), ['.: string where an object is expected']);
    assert.deepEqual(typeErrors(sample, { port: 'x' }, 'spec').map(typeErrorText), [
      'spec.port: string where an integer is expected',
    ]);
  });

  it('finds what breaks a Node for Go clients', () => {
    const node = schemaFor('', 'Node')!;
    const broken = {
      metadata: { name: 'n1', labels: { a: 'b' }, creationTimestamp: '2026-01-02T03:04:05Z' },
      spec: { podCIDR: '10.0.0.0/24', unschedulable: 'no' },
      status: { conditions: 'x', capacity: { cpu: '4', pods: 110 } },
    };
    assert.deepEqual(typeErrors(node, broken).map(typeErrorText), [
      'spec.unschedulable: string where a boolean is expected',
      'status.conditions: string where an array is expected',
    ]);
    assert.deepEqual(
      typeErrors(node, { ...broken, status: 'garbage' })
        .map(typeErrorText)
        .slice(1),
      ['status: string where an object is expected'],
    );
  });

  it('property: every kind accepts its own empty object, and refuses a scalar for it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...KIND_SCHEMAS),
        fc.oneof(fc.string(), fc.integer(), fc.boolean()),
        (k, scalar) => {
          assert.deepEqual(typeErrors(k.schema, { metadata: { name: 'x' } }), []);
          assert.equal(typeErrors(k.schema, { metadata: scalar }).length, 1);
        },
      ),
    );
  });
});
