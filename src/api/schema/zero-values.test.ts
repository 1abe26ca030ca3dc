import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openAPIV3Document } from '../openapi/v3.js';
import { schemaFor } from './index.js';
import type { Schema } from './schema.js';
import { withZeroValues, zeroValue } from './zero-values.js';

const always = (s: Schema): Schema => ({ ...s, 'x-svcplane-always': true });
const schema: Schema = {
  type: 'object',
  properties: {
    spec: always({
      type: 'object',
      properties: {
        items: {
          type: 'array',
          items: { type: 'object', properties: { conditions: always({ type: 'object', properties: {} }) } },
        },
        name: { type: 'string' },
      },
    }),
    status: always({
      type: 'object',
      properties: {
        when: always({ type: 'string', format: 'date-time' }),
        text: always({ type: 'string' }),
        port: always({ type: 'integer' }),
        on: always({ type: 'boolean' }),
        list: always({ type: 'array', items: { type: 'string' } }),
        map: always({ type: 'object', additionalProperties: { type: 'string' } }),
        optional: { type: 'string' },
      },
    }),
  },
};

describe('withZeroValues', () => {
  it('writes Go zero values: {} with its own fields, null for times, lists and maps, "", 0, false', () => {
    assert.deepEqual(withZeroValues({ spec: { name: 'x' } }, schema), {
      spec: { name: 'x' },
      status: { when: null, text: '', port: 0, on: false, list: null, map: null },
    });
    assert.deepEqual(zeroValue(schema.properties!['spec']!), {});
  });

  it('fills inside list items, keeps what is there, and never changes its input', () => {
    const input = { spec: { items: [{}, { conditions: { ready: true } }] }, status: { port: 8, text: 'a' } };
    const before = structuredClone(input);
    const out = withZeroValues(input, schema);
    assert.deepEqual(out, {
      spec: { items: [{ conditions: {} }, { conditions: { ready: true } }] },
      status: { port: 8, text: 'a', when: null, on: false, list: null, map: null },
    });
    assert.deepEqual(input, before);
    assert.equal(out.spec.items[1], input.spec.items[1]); // shared where nothing was added
  });

  it('returns the object itself when nothing is missing or the schema marks nothing', () => {
    const full = withZeroValues({}, schema);
    assert.equal(withZeroValues(full, schema), full);
    const plain = { a: 1 };
    assert.equal(withZeroValues(plain, { type: 'object', properties: { a: { type: 'integer' } } }), plain);
    assert.equal(withZeroValues(plain, undefined), plain);
  });

  it('is never published: the OpenAPI documents carry no x-svcplane-always', () => {
    assert.ok(schemaFor('', 'Service') !== undefined);
    const doc = JSON.stringify(openAPIV3Document('api/v1')?.json ?? '');
    assert.ok(doc.length > 1000);
    assert.ok(!doc.includes('x-svcplane-always'));
  });
});
