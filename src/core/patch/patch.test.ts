import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyJsonPatch, MAX_JSON_PATCH_OPERATIONS } from './json-patch.js';
import { applyMergePatch, type Json } from './merge-patch.js';
import { PatchError } from './patch-error.js';

describe('JSON merge patch (RFC 7386, appendix A)', () => {
  const table: Array<[Json, Json, Json]> = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [target, patch, want] of table) {
    it(`${JSON.stringify(target)} + ${JSON.stringify(patch)} = ${JSON.stringify(want)}`, () => {
      const before = JSON.stringify(target);
      assert.deepEqual(applyMergePatch(target, patch), want);
      assert.equal(JSON.stringify(target), before, 'the target is not modified');
    });
  }

  it('kubectl label: a merge patch of metadata.labels changes only what it names', () => {
    const svc: Json = {
      metadata: { name: 'web', labels: { app: 'web', zone: 'a' } },
      spec: { ports: [{ port: 80 }] },
    };
    assert.deepEqual(applyMergePatch(svc, { metadata: { labels: { zone: 'b' } } }), {
      metadata: { name: 'web', labels: { app: 'web', zone: 'b' } },
      spec: { ports: [{ port: 80 }] },
    });
  });

  it('treats a "__proto__" key as data, never as the prototype', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Json;
    const out = applyMergePatch({}, patch) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.deepEqual(Object.keys(out).sort(), ['__proto__', 'a']);
    assert.equal(JSON.stringify(out), '{"__proto__":{"polluted":true},"a":1}');
    assert.equal(({} as { polluted?: boolean }).polluted, undefined);
    const removed = applyMergePatch(out as Json, JSON.parse('{"__proto__": null}') as Json);
    assert.deepEqual(Object.keys(removed as object), ['a']);
  });

  it('is idempotent, and never shares structure with the patch', () => {
    const json: fc.Arbitrary<Json> = fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>;
    fc.assert(
      fc.property(json, json, (target, patch) => {
        const once = applyMergePatch(target, patch);
        assert.deepEqual(applyMergePatch(once, patch), once);
      }),
      { numRuns: 1000 },
    );
    const patch: Json = { a: { b: [1] } };
    const out = applyMergePatch({}, patch) as { a: { b: number[] } };
    out.a.b.push(2);
    assert.deepEqual(patch, { a: { b: [1] } });
  });
});

describe('JSON patch (RFC 6902)', () => {
  const doc: Json = { metadata: { labels: { app: 'web' } }, spec: { ports: [{ port: 80 }, { port: 443 }] } };

  it('applies add, remove, replace, move, copy and test in order', () => {
    const out = applyJsonPatch(doc, [
      { op: 'test', path: '/spec/ports/0/port', value: 80 },
      { op: 'add', path: '/metadata/labels/zone', value: 'a' },
      { op: 'add', path: '/spec/ports/-', value: { port: 8080 } },
      { op: 'replace', path: '/spec/ports/0/port', value: 81 },
      { op: 'remove', path: '/spec/ports/1' },
      { op: 'copy', from: '/metadata/labels/app', path: '/metadata/labels/name' },
      { op: 'move', from: '/metadata/labels/zone', path: '/metadata/labels/region' },
    ]);
    assert.deepEqual(out, {
      metadata: { labels: { app: 'web', name: 'web', region: 'a' } },
      spec: { ports: [{ port: 81 }, { port: 8080 }] },
    });
    assert.deepEqual(doc, {
      metadata: { labels: { app: 'web' } },
      spec: { ports: [{ port: 80 }, { port: 443 }] },
    });
  });

  it('escapes ~1 and ~0 in paths (label keys with "/")', () => {
    const out = applyJsonPatch({ l: {} }, [
      { op: 'add', path: '/l/example.com~1zone', value: 'a' },
      { op: 'add', path: '/l/x~0y', value: 'b' },
    ]);
    assert.deepEqual(out, { l: { 'example.com/zone': 'a', 'x~y': 'b' } });
  });

  const fails = (patch: unknown, kind: PatchError['kind']): void => {
    assert.throws(
      () => applyJsonPatch(doc, patch),
      (e: unknown) => e instanceof PatchError && e.kind === kind,
    );
  };

  it('a document that is not a list of operations is Malformed (kube-apiserver: 400)', () => {
    fails({ op: 'add' }, 'Malformed');
    fails([5], 'Malformed');
  });

  it('a bad operation is NotApplicable (kube-apiserver: 422, from patchObj.Apply)', () => {
    fails([{ op: 'frobnicate', path: '/a' }], 'NotApplicable');
    fails([{ op: 'add', path: 'no-slash', value: 1 }], 'NotApplicable');
    fails([{ op: 'add', path: '/a' }], 'NotApplicable');
    fails([{ op: 'move', path: '/a' }], 'NotApplicable');
  });

  it('a patch that does not apply is NotApplicable (kube-apiserver: 422), and nothing is half-applied', () => {
    fails([{ op: 'remove', path: '/spec/nope' }], 'NotApplicable');
    fails([{ op: 'replace', path: '/metadata/nope', value: 1 }], 'NotApplicable');
    fails([{ op: 'test', path: '/spec/ports/0/port', value: 81 }], 'NotApplicable');
    fails([{ op: 'add', path: '/spec/ports/9', value: 1 }], 'NotApplicable');
    fails([{ op: 'add', path: '/a/b/c', value: 1 }], 'NotApplicable');
    const before = JSON.stringify(doc);
    fails(
      [
        { op: 'add', path: '/metadata/labels/x', value: 'y' },
        { op: 'remove', path: '/nope' },
      ],
      'NotApplicable',
    );
    assert.equal(JSON.stringify(doc), before);
  });

  it('refuses prototype pollution', () => {
    assert.throws(
      () => applyJsonPatch({}, [{ op: 'add', path: '/__proto__/polluted', value: 1 }]),
      PatchError,
    );
    assert.equal(({} as { polluted?: number }).polluted, undefined);
  });

  it(`more than ${MAX_JSON_PATCH_OPERATIONS} operations is TooLarge (kube-apiserver: 413)`, () => {
    const ops = Array.from({ length: MAX_JSON_PATCH_OPERATIONS + 1 }, () => ({
      op: 'test',
      path: '',
      value: {},
    }));
    assert.throws(
      () => applyJsonPatch({}, ops),
      (e: unknown) =>
        e instanceof PatchError &&
        e.kind === 'TooLarge' &&
        e.message === 'The allowed maximum operations in a JSON patch is 10000, got 10001',
    );
  });
});
