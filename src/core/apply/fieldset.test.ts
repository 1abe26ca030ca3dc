import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Json } from '../patch/merge-patch.js';
import {
  canonicalJson,
  comparePathElements,
  decodePathElement,
  encodePathElement,
  field,
  FieldSet,
  FieldSetWalker,
  FieldsV1Error,
  index,
  key,
  pathToString,
  value,
  type FieldPath,
  type PathElement,
} from './fieldset.js';

const f = field;
const P = (...pes: PathElement[]): FieldPath => pes;

describe('FieldsV1 encoding', () => {
  const wire = {
    'f:metadata': { 'f:labels': { 'f:app': {} } },
    'f:spec': {
      'f:ports': { 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:targetPort': {} } },
    },
  };

  it('decodes the wire form into exact paths', () => {
    const s = FieldSet.fromFieldsV1(wire);
    assert.deepEqual(s.toStrings(), [
      '.metadata.labels.app',
      '.spec.ports[port=80,protocol="TCP"]',
      '.spec.ports[port=80,protocol="TCP"].targetPort',
    ]);
    assert.equal(s.size, 3);
    assert.ok(s.has([f('spec'), f('ports'), key({ port: 80, protocol: 'TCP' })]));
    assert.ok(!s.has([f('spec'), f('ports')]), 'a prefix is not a member');
    assert.ok(!s.has([f('metadata')]));
  });

  it('encodes back byte for byte, "." first where a member has children', () => {
    const s = FieldSet.fromFieldsV1(wire);
    assert.equal(JSON.stringify(s.toFieldsV1()), JSON.stringify(wire));
  });

  it('orders fields by name, then keys, then values, then indices', () => {
    const s = FieldSet.fromPaths([
      [f('l'), index(2)],
      [f('l'), value('b')],
      [f('l'), key({ name: 'z' })],
      [f('l'), index(10)],
      [f('l'), value(1)],
      [f('l'), key({ name: 'a' })],
      [f('l'), f('zeta')],
      [f('l'), f('alpha')],
    ]);
    assert.deepEqual(Object.keys((s.toFieldsV1() as Record<string, Record<string, unknown>>)['f:l'] ?? {}), [
      'f:alpha',
      'f:zeta',
      'k:{"name":"a"}',
      'k:{"name":"z"}',
      'v:1',
      'v:"b"',
      'i:2',
      'i:10',
    ]);
  });

  it('sorts key fields by name, whatever order they come in', () => {
    const a = key({ protocol: 'TCP', port: 80 });
    assert.equal(encodePathElement(a), 'k:{"port":80,"protocol":"TCP"}');
    assert.equal(
      encodePathElement(decodePathElement('k:{"protocol":"TCP","port":80}')),
      'k:{"port":80,"protocol":"TCP"}',
    );
  });

  it('escapes HTML characters in k: and v: keys the way Go does', () => {
    assert.equal(encodePathElement(value('a<b>&c')), 'v:"a\\u003cb\\u003e\\u0026c"');
    assert.deepEqual(decodePathElement('v:"a\\u003cb"'), value('a<b'));
    assert.equal(
      canonicalJson({ b: [1, { d: null, c: true }], a: 'x' }),
      '{"a":"x","b":[1,{"c":true,"d":null}]}',
    );
  });

  it('decodes set values and indices', () => {
    const s = FieldSet.fromFieldsV1({
      'f:metadata': { 'f:finalizers': { '.': {}, 'v:"a"': {} } },
      'f:x': { 'i:0': {} },
    });
    assert.deepEqual(s.toStrings(), ['.metadata.finalizers', '.metadata.finalizers[="a"]', '.x[0]']);
  });

  it('refuses what is not FieldsV1', () => {
    assert.throws(() => FieldSet.fromFieldsV1([]), FieldsV1Error);
    assert.throws(() => FieldSet.fromFieldsV1({ 'x:y': {} }), FieldsV1Error);
    assert.throws(() => FieldSet.fromFieldsV1({ 'f:a': 1 }), FieldsV1Error);
    assert.throws(() => FieldSet.fromFieldsV1({ 'k:{bad': {} }), FieldsV1Error);
    assert.throws(() => FieldSet.fromFieldsV1({ 'k:[1]': {} }), FieldsV1Error);
    assert.throws(() => FieldSet.fromFieldsV1({ 'i:-1': {} }), FieldsV1Error);
  });

  it('treats "__proto__" as an ordinary field name', () => {
    const doc = JSON.parse('{"f:__proto__":{"f:x":{}}}') as Record<string, unknown>;
    const s = FieldSet.fromFieldsV1(doc);
    assert.deepEqual(s.toStrings(), ['.__proto__.x']);
    assert.equal(JSON.stringify(s.toFieldsV1()), '{"f:__proto__":{"f:x":{}}}');
    assert.equal(({} as { x?: unknown }).x, undefined);
  });

  it('an empty document is the empty set, and drops empty subtrees', () => {
    assert.ok(FieldSet.fromFieldsV1({}).isEmpty());
    assert.deepEqual(FieldSet.empty().toFieldsV1(), {});
  });
});

describe('paths as kube-apiserver prints them', () => {
  it('prints fields, keys, values and indices', () => {
    assert.equal(
      pathToString([f('spec'), f('ports'), key({ port: 80, protocol: 'TCP' }), f('targetPort')]),
      '.spec.ports[port=80,protocol="TCP"].targetPort',
    );
    assert.equal(pathToString([f('metadata'), f('finalizers'), value('x')]), '.metadata.finalizers[="x"]');
    assert.equal(pathToString([f('a'), index(3)]), '.a[3]');
    assert.equal(pathToString([f('c'), key({ name: 'x', on: true })]), '.c[name="x",on=true]');
  });
});

describe('set operations', () => {
  const a = FieldSet.fromPaths([P(f('a')), P(f('a'), f('b')), P(f('c'))]);
  const b = FieldSet.fromPaths([P(f('a'), f('b')), P(f('d'))]);

  it('union, intersection and difference work on exact paths', () => {
    assert.deepEqual(a.union(b).toStrings(), ['.a', '.a.b', '.c', '.d']);
    assert.deepEqual(a.intersection(b).toStrings(), ['.a.b']);
    assert.deepEqual(a.difference(b).toStrings(), ['.a', '.c']);
    assert.deepEqual(b.difference(a).toStrings(), ['.d']);
  });

  it('recursiveDifference also drops what is below a member of the other set', () => {
    const ignore = FieldSet.fromPaths([P(f('a'))]);
    assert.deepEqual(a.recursiveDifference(ignore).toStrings(), ['.c']);
    assert.deepEqual(a.difference(ignore).toStrings(), ['.a.b', '.c']);
  });

  it('child, hasPrefix and childElements navigate the trie', () => {
    assert.deepEqual(a.child(f('a')).toStrings(), ['.b']);
    assert.ok(a.child(f('zz')).isEmpty());
    assert.ok(a.hasPrefix([f('a')]));
    assert.ok(!a.hasPrefix([f('b')]));
    assert.deepEqual(a.childElements(), [f('a'), f('c')]);
    assert.ok(a.hasChildMember(f('a')));
  });
});

// ---------------------------------------------------------------------------------------------------
// Properties.

const name = fc.constantFrom('a', 'b', 'spec', 'f:x', '.', '<&>', 'é', '__proto__', 'k:1', '', 'z z');
const scalar: fc.Arbitrary<Json> = fc.oneof(
  fc.integer({ min: -3, max: 1000 }),
  fc.constantFrom('TCP', 'UDP', '', 'x"y', 'a<b'),
  fc.boolean(),
  fc.constant(null),
);
const element: fc.Arbitrary<PathElement> = fc.oneof(
  { weight: 4, arbitrary: name.map((n) => field(n)) },
  {
    weight: 2,
    arbitrary: fc
      .uniqueArray(fc.tuple(fc.constantFrom('port', 'protocol', 'name'), scalar), {
        minLength: 1,
        maxLength: 2,
        selector: ([k]) => k,
      })
      .map((fields) => key(fields)),
  },
  { weight: 1, arbitrary: scalar.map((v) => value(v)) },
  { weight: 1, arbitrary: fc.nat(20).map((i) => index(i)) },
);
const fieldPath = fc.array(element, { minLength: 1, maxLength: 4 });
const pathList = fc.array(fieldPath, { maxLength: 12 });
const fieldSet = pathList.map((ps) => FieldSet.fromPaths(ps));

const keyOf = (p: FieldPath): string => p.map(encodePathElement).join('\u0000');
const pathKeys = (s: FieldSet): Set<string> => new Set(s.paths().map(keyOf));

describe('field set laws (fast-check)', () => {
  it('holds exactly the inserted paths', () => {
    fc.assert(
      fc.property(pathList, (ps) => {
        const s = FieldSet.fromPaths(ps);
        assert.deepEqual(pathKeys(s), new Set(ps.map(keyOf)));
        for (const p of ps) assert.ok(s.has(p));
        assert.equal(s.size, new Set(ps.map(keyOf)).size);
      }),
    );
  });

  it('round-trips through FieldsV1 and its JSON text', () => {
    fc.assert(
      fc.property(fieldSet, (s) => {
        const doc = s.toFieldsV1();
        assert.ok(FieldSet.fromFieldsV1(doc).equals(s));
        const text = JSON.stringify(doc);
        const again = FieldSet.fromFieldsV1(JSON.parse(text));
        assert.ok(again.equals(s));
        assert.equal(JSON.stringify(again.toFieldsV1()), text, 'the encoding is canonical');
      }),
    );
  });

  it('path elements round-trip through their keys', () => {
    fc.assert(
      fc.property(element, (pe) => {
        const back = decodePathElement(encodePathElement(pe));
        assert.equal(comparePathElements(back, pe), 0);
        assert.equal(encodePathElement(back), encodePathElement(pe));
      }),
    );
  });

  it('lists paths in sorted order, each once', () => {
    fc.assert(
      fc.property(fieldSet, (s) => {
        const ps = s.paths();
        const cmp = (x: FieldPath, y: FieldPath): number => {
          for (let i = 0; i < Math.min(x.length, y.length); i++) {
            const c = comparePathElements(x[i] as PathElement, y[i] as PathElement);
            if (c !== 0) return c;
          }
          return x.length - y.length;
        };
        for (let i = 1; i < ps.length; i++) assert.ok(cmp(ps[i - 1] as FieldPath, ps[i] as FieldPath) < 0);
      }),
    );
  });

  it('union is commutative, associative and idempotent, with the empty set as identity', () => {
    fc.assert(
      fc.property(fieldSet, fieldSet, fieldSet, (a, b, c) => {
        assert.ok(a.union(b).equals(b.union(a)));
        assert.ok(
          a
            .union(b)
            .union(c)
            .equals(a.union(b.union(c))),
        );
        assert.ok(a.union(a).equals(a));
        assert.ok(a.union(FieldSet.empty()).equals(a));
        assert.deepEqual(pathKeys(a.union(b)), new Set([...pathKeys(a), ...pathKeys(b)]));
      }),
    );
  });

  it('intersection and difference agree with the sets of paths', () => {
    fc.assert(
      fc.property(fieldSet, fieldSet, (a, b) => {
        const ka = pathKeys(a);
        const kb = pathKeys(b);
        assert.deepEqual(pathKeys(a.intersection(b)), new Set([...ka].filter((k) => kb.has(k))));
        assert.deepEqual(pathKeys(a.difference(b)), new Set([...ka].filter((k) => !kb.has(k))));
        assert.ok(a.intersection(b).equals(b.intersection(a)));
      }),
    );
  });

  it('difference laws: (a−b)∩b = ∅, (a−b)∪(a∩b) = a, a−a = ∅, a−(b∪c) = (a−b)−c', () => {
    fc.assert(
      fc.property(fieldSet, fieldSet, fieldSet, (a, b, c) => {
        assert.ok(a.difference(b).intersection(b).isEmpty());
        assert.ok(a.difference(b).union(a.intersection(b)).equals(a));
        assert.ok(a.difference(a).isEmpty());
        assert.ok(a.difference(b.union(c)).equals(a.difference(b).difference(c)));
      }),
    );
  });

  it('recursiveDifference drops exactly the paths with a member of the other set as prefix', () => {
    fc.assert(
      fc.property(fieldSet, fieldSet, (a, b) => {
        const kb = pathKeys(b);
        const want = a
          .paths()
          .filter((p) => !p.some((_, i) => kb.has(keyOf(p.slice(0, i + 1)))))
          .map(keyOf);
        assert.deepEqual(pathKeys(a.recursiveDifference(b)), new Set(want));
      }),
    );
  });
});

describe('FieldSetWalker', () => {
  // A walk: push an element, pop, or add the current path to one of two sets.
  const pe = fc.oneof(
    fc.constantFrom('a', 'b', 'spec', 'x').map((n) => field(n)),
    fc.nat(3).map((i) => index(i)),
    fc.constantFrom<Json>('v', 1, true).map((v) => value(v)),
    fc.constantFrom(80, 443).map((p) => key([['port', p]])),
  );
  const step = fc.oneof(
    pe.map((e) => ({ op: 'push' as const, e })),
    fc.constant({ op: 'pop' as const }),
    fc.nat(1).map((set) => ({ op: 'add' as const, set })),
  );

  it('builds the same sets as inserting each path it added (property)', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const walker = new FieldSetWalker(2);
        const path: PathElement[] = [];
        const added: FieldPath[][] = [[], []];
        for (const s of steps) {
          if (s.op === 'push') {
            path.push(s.e);
            walker.push(s.e);
          } else if (s.op === 'pop') {
            if (path.length === 0) continue;
            path.pop();
            walker.pop();
          } else {
            walker.add(s.set);
            added[s.set]!.push([...path]);
          }
        }
        for (const set of [0, 1]) {
          const want = FieldSet.fromPaths(added[set]!);
          assert.ok(walker.set(set).equals(want), `set ${set}`);
          assert.deepEqual(walker.set(set).toStrings(), want.toStrings());
        }
      }),
      { numRuns: 500 },
    );
  });

  it('never adds the empty path', () => {
    const w = new FieldSetWalker(1);
    w.add(0);
    assert.ok(w.set(0).isEmpty());
  });
});
