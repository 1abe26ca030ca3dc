import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
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
import { KIND_SCHEMAS, schemaFor } from './index.js';
import type { Schema } from './schema.js';
import { typeErrorText, typeErrors } from './type-check.js';

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
    assert.deepEqual(typeErrors(sample, 'x'), [{ path: '', want: 'object', got: 'string' }]);
    assert.deepEqual(typeErrorText(typeErrors(sample, 'x')[0]!), '.: string where an object is expected');
    assert.deepEqual(typeErrors(sample, { port: 'x' }, 'spec'), [
      { path: 'spec.port', want: 'integer', got: 'string' },
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
