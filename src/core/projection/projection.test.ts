import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Json } from '../patch/merge-patch.js';
import { project, unionProjections, type Projection } from './projection.js';

const pod = {
  metadata: { name: 'a', labels: { app: 'x' } },
  spec: {
    nodeName: 'n1',
    containers: [
      { name: 'c', image: 'i', ports: [{ containerPort: 80 }] },
      { name: 'd', image: 'j' },
    ],
  },
  status: { phase: 'Running', podIP: '10.0.0.1', startTime: 't' },
} as const;

describe('project', () => {
  it('keeps named fields, whole or by sub-fields, through lists, and drops the rest', () => {
    const view: Projection = {
      metadata: true,
      spec: { nodeName: true, hostname: true, containers: { name: true, ports: true } },
      status: { phase: true },
    };
    assert.deepEqual(project(pod as unknown as Json, view), {
      metadata: { name: 'a', labels: { app: 'x' } },
      spec: { nodeName: 'n1', containers: [{ name: 'c', ports: [{ containerPort: 80 }] }, { name: 'd' }] },
      status: { phase: 'Running' },
    });
  });

  it('shares what it keeps whole and never changes its input', () => {
    const input = structuredClone(pod) as unknown as Json;
    const before = structuredClone(input);
    const out = project(input, { metadata: true, spec: { containers: { name: true } } }) as Record<
      string,
      unknown
    >;
    assert.equal(out['metadata'], (input as Record<string, unknown>)['metadata']);
    assert.deepEqual(input, before);
  });

  it('keeps a value whose shape does not match (a scalar where sub-fields are named), and __proto__ as a member', () => {
    assert.deepEqual(project({ spec: 'x' }, { spec: { a: true } }), { spec: 'x' });
    const evil = JSON.parse('{"__proto__": {"polluted": 1}, "a": 1}') as Json;
    const out = project(evil, { ['__proto__']: true, a: true }) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.keys(out), ['__proto__', 'a']);
  });
});

// Arbitrary projections and JSON values over a small alphabet, so that they overlap.
const name = fc.constantFrom('a', 'b', 'c', 'd');
const projection: fc.Arbitrary<Projection> = fc.letrec((tie) => ({
  p: fc.dictionary(name, fc.oneof({ depthSize: 'small' }, fc.constant(true as const), tie('p')), {
    maxKeys: 3,
  }),
})).p as fc.Arbitrary<Projection>;
const json: fc.Arbitrary<Json> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    fc.integer(),
    fc.string({ maxLength: 2 }),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(name, tie('v'), { maxKeys: 4 }),
  ),
})).v as fc.Arbitrary<Json>;

describe('unionProjections (properties)', () => {
  it('projecting by the union and then by either one equals projecting by that one', () => {
    fc.assert(
      fc.property(json, projection, projection, (v, a, b) => {
        const u = unionProjections(a, b);
        assert.deepEqual(project(project(v, u), a), project(v, a));
        assert.deepEqual(project(project(v, u), b), project(v, b));
      }),
      { numRuns: 500 },
    );
  });

  it('is idempotent and keeps no more than the value had', () => {
    fc.assert(
      fc.property(json, projection, (v, a) => {
        assert.deepEqual(project(project(v, a), a), project(v, a));
        // (fast-check's dictionaries have no prototype; compare as JSON)
        assert.deepEqual(JSON.stringify(unionProjections(a, a)), JSON.stringify(a));
      }),
      { numRuns: 300 },
    );
  });
});
