import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { OwnerReference } from '../../api/object.js';
import {
  FINALIZER_FOREGROUND,
  FINALIZER_ORPHAN,
  decideItem,
  decideOwner,
  deletingDependents,
  policyFromFinalizers,
  unblocked,
  withoutOwners,
  type DependentFacts,
  type ItemDecision,
  type ItemFacts,
  type OwnerDecision,
  type OwnerState,
} from './gc.js';

const ref = (uid: string, blockOwnerDeletion?: boolean): OwnerReference => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name: `owner-${uid}`,
  uid,
  ...(blockOwnerDeletion === undefined ? {} : { blockOwnerDeletion }),
});

const item = (over: Partial<ItemFacts>): ItemFacts => ({
  ownerReferences: [],
  finalizers: [],
  beingDeleted: false,
  dependents: 0,
  dependentDeletingDependents: false,
  ...over,
});

const states = (entries: Record<string, OwnerState>): Map<string, OwnerState> =>
  new Map(Object.entries(entries));

describe('decideItem', () => {
  const rows: Array<[string, ItemFacts, Map<string, OwnerState>, ItemDecision]> = [
    ['no owners: nothing to do', item({}), states({}), { action: 'none' }],
    [
      'no owners, even with a GC finalizer: nothing to do',
      item({ finalizers: [FINALIZER_ORPHAN] }),
      states({}),
      { action: 'none' },
    ],
    [
      'being deleted: left to the deletion in progress, even with every owner dangling',
      item({ beingDeleted: true, ownerReferences: [ref('a')] }),
      states({ a: 'dangling' }),
      { action: 'none' },
    ],
    [
      'being deleted with a waiting owner and dependents: still nothing',
      item({ beingDeleted: true, ownerReferences: [ref('a', true)], dependents: 3 }),
      states({ a: 'waiting' }),
      { action: 'none' },
    ],
    [
      'one solid owner: stays',
      item({ ownerReferences: [ref('a')] }),
      states({ a: 'solid' }),
      { action: 'none' },
    ],
    [
      'two solid owners: stays',
      item({ ownerReferences: [ref('a'), ref('b')] }),
      states({ a: 'solid', b: 'solid' }),
      { action: 'none' },
    ],
    [
      'solid + dangling + waiting: the dangling and waiting references are removed',
      item({ ownerReferences: [ref('d'), ref('s'), ref('w', true)] }),
      states({ s: 'solid', d: 'dangling', w: 'waiting' }),
      { action: 'removeOwnerReferences', uids: ['d', 'w'] },
    ],
    [
      'solid + dangling: only the dangling reference is removed',
      item({ ownerReferences: [ref('s'), ref('d')] }),
      states({ s: 'solid', d: 'dangling' }),
      { action: 'removeOwnerReferences', uids: ['d'] },
    ],
    [
      'solid + waiting, with dependents: the waiting reference is removed, no delete',
      item({ ownerReferences: [ref('s'), ref('w', true)], dependents: 2, dependentDeletingDependents: true }),
      states({ s: 'solid', w: 'waiting' }),
      { action: 'removeOwnerReferences', uids: ['w'] },
    ],
    [
      'an unknown kind counts as solid and is never removed',
      item({ ownerReferences: [ref('u'), ref('d')] }),
      states({ u: 'unknown', d: 'dangling' }),
      { action: 'removeOwnerReferences', uids: ['d'] },
    ],
    [
      'an unknown kind alone: stays',
      item({ ownerReferences: [ref('u')] }),
      states({ u: 'unknown' }),
      { action: 'none' },
    ],
    [
      'an owner missing from the map is unknown, so solid',
      item({ ownerReferences: [ref('x'), ref('d')] }),
      states({ d: 'dangling' }),
      { action: 'removeOwnerReferences', uids: ['d'] },
    ],
    [
      'all dangling: deleted in the background',
      item({ ownerReferences: [ref('a'), ref('b')] }),
      states({ a: 'dangling', b: 'dangling' }),
      { action: 'delete', policy: 'Background', unblock: [] },
    ],
    [
      'all dangling, with dependents: still Background (nobody waits)',
      item({ ownerReferences: [ref('a')], dependents: 4, dependentDeletingDependents: true }),
      states({ a: 'dangling' }),
      { action: 'delete', policy: 'Background', unblock: [] },
    ],
    [
      'all dangling with the orphan finalizer: deleted with the Orphan policy',
      item({ ownerReferences: [ref('a')], finalizers: ['example.com/x', FINALIZER_ORPHAN] }),
      states({ a: 'dangling' }),
      { action: 'delete', policy: 'Orphan', unblock: [] },
    ],
    [
      'all dangling with the foregroundDeletion finalizer: deleted in the Foreground',
      item({ ownerReferences: [ref('a')], finalizers: [FINALIZER_FOREGROUND] }),
      states({ a: 'dangling' }),
      { action: 'delete', policy: 'Foreground', unblock: [] },
    ],
    [
      'waiting owner, dependents of its own: Foreground, nothing unblocked when no dependent deletes its dependents',
      item({ ownerReferences: [ref('w', true)], dependents: 1 }),
      states({ w: 'waiting' }),
      { action: 'delete', policy: 'Foreground', unblock: [] },
    ],
    [
      'waiting owner, dependents, one of them deleting its dependents (a cycle): blocking waiting refs unblocked',
      item({
        ownerReferences: [ref('w1', true), ref('w2', false), ref('w3'), ref('d', true), ref('w4', true)],
        dependents: 2,
        dependentDeletingDependents: true,
      }),
      states({ w1: 'waiting', w2: 'waiting', w3: 'waiting', d: 'dangling', w4: 'waiting' }),
      { action: 'delete', policy: 'Foreground', unblock: ['w1', 'w4'] },
    ],
    [
      'waiting owner + dangling owner, dependents: Foreground (dangling does not make it solid)',
      item({ ownerReferences: [ref('d'), ref('w', true)], dependents: 1 }),
      states({ d: 'dangling', w: 'waiting' }),
      { action: 'delete', policy: 'Foreground', unblock: [] },
    ],
    [
      'waiting owner, dependents, orphan finalizer: Foreground wins (the owner waits for the chain)',
      item({ ownerReferences: [ref('w', true)], dependents: 1, finalizers: [FINALIZER_ORPHAN] }),
      states({ w: 'waiting' }),
      { action: 'delete', policy: 'Foreground', unblock: [] },
    ],
    [
      'waiting owner without dependents: deleted in the background',
      item({ ownerReferences: [ref('w', true)], dependentDeletingDependents: true }),
      states({ w: 'waiting' }),
      { action: 'delete', policy: 'Background', unblock: [] },
    ],
    [
      'waiting owner without dependents, orphan finalizer: Orphan',
      item({ ownerReferences: [ref('w', true)], finalizers: [FINALIZER_ORPHAN] }),
      states({ w: 'waiting' }),
      { action: 'delete', policy: 'Orphan', unblock: [] },
    ],
  ];
  for (const [name, facts, owners, want] of rows) {
    it(name, () => assert.deepEqual(decideItem(facts, owners), want));
  }
});

describe('policyFromFinalizers', () => {
  const rows: Array<[string[], string]> = [
    [[], 'Background'],
    [['example.com/hold'], 'Background'],
    [[FINALIZER_ORPHAN], 'Orphan'],
    [[FINALIZER_FOREGROUND], 'Foreground'],
    [[FINALIZER_FOREGROUND, FINALIZER_ORPHAN], 'Orphan'],
    [['foregrounddeletion', 'Orphan'], 'Background'],
  ];
  for (const [finalizers, want] of rows) {
    it(`${JSON.stringify(finalizers)} → ${want}`, () => assert.equal(policyFromFinalizers(finalizers), want));
  }
});

const dep = (uid: string, blockOwnerDeletion: boolean | undefined, beingDeleted = false): DependentFacts => ({
  reference: ref(uid, blockOwnerDeletion),
  beingDeleted,
});

describe('decideOwner', () => {
  const deleting = (...finalizers: string[]): { finalizers: string[]; beingDeleted: boolean } => ({
    finalizers,
    beingDeleted: true,
  });
  const rows: Array<
    [string, { finalizers: string[]; beingDeleted: boolean }, DependentFacts[], OwnerDecision]
  > = [
    [
      'not being deleted: nothing, even with GC finalizers and blocking dependents',
      { finalizers: [FINALIZER_FOREGROUND, FINALIZER_ORPHAN], beingDeleted: false },
      [dep('o', true)],
      { action: 'none' },
    ],
    [
      'being deleted without GC finalizers: nothing',
      deleting('example.com/hold'),
      [dep('o', true)],
      { action: 'none' },
    ],
    [
      'orphan: every dependent, blocking or not, being deleted or not',
      deleting(FINALIZER_ORPHAN),
      [dep('o', true), dep('o', false, true), dep('o', undefined)],
      { action: 'orphan', dependents: [0, 1, 2] },
    ],
    [
      'orphan without dependents: orphan nothing',
      deleting(FINALIZER_ORPHAN),
      [],
      { action: 'orphan', dependents: [] },
    ],
    [
      'orphan and foregroundDeletion together: orphan first',
      deleting(FINALIZER_FOREGROUND, FINALIZER_ORPHAN),
      [dep('o', true)],
      { action: 'orphan', dependents: [0] },
    ],
    [
      'foreground without dependents: the finalizer goes',
      deleting(FINALIZER_FOREGROUND),
      [],
      { action: 'removeForegroundFinalizer' },
    ],
    [
      'foreground with only non-blocking dependents: the finalizer goes',
      deleting('example.com/hold', FINALIZER_FOREGROUND),
      [dep('o', false), dep('o', undefined), dep('o', false, true)],
      { action: 'removeForegroundFinalizer' },
    ],
    [
      'foreground with blocking dependents: wait, checking every dependent not being deleted',
      deleting(FINALIZER_FOREGROUND),
      [dep('o', true), dep('o', false), dep('o', true, true), dep('o', undefined)],
      { action: 'waitForDependents', check: [0, 1, 3] },
    ],
    [
      'foreground with a blocking dependent that is already being deleted: still waits, checks nothing',
      deleting(FINALIZER_FOREGROUND),
      [dep('o', true, true)],
      { action: 'waitForDependents', check: [] },
    ],
  ];
  for (const [name, owner, dependents, want] of rows) {
    it(name, () => assert.deepEqual(decideOwner(owner, dependents), want));
  }
});

describe('reference helpers', () => {
  const refs = [ref('a', true), ref('b'), ref('c', false)];

  it('withoutOwners drops exactly the named uids and keeps the order', () => {
    assert.deepEqual(withoutOwners(refs, ['b']), [ref('a', true), ref('c', false)]);
    assert.deepEqual(withoutOwners(refs, ['a', 'c', 'zz']), [ref('b')]);
    assert.deepEqual(withoutOwners(refs, []), refs);
    assert.deepEqual(withoutOwners([], ['a']), []);
  });

  it('unblocked sets blockOwnerDeletion false only for the named uids and copies', () => {
    const out = unblocked(refs, ['a', 'b']);
    assert.deepEqual(out, [
      { ...ref('a'), blockOwnerDeletion: false },
      { ...ref('b'), blockOwnerDeletion: false },
      ref('c', false),
    ]);
    assert.deepEqual(refs, [ref('a', true), ref('b'), ref('c', false)], 'the input is not modified');
    assert.notEqual(out[2], refs[2], 'references are copies');
    assert.deepEqual(unblocked([ref('a', true)], []), [ref('a', true)]);
  });

  it('deletingDependents: deletionTimestamp and the foregroundDeletion finalizer, both', () => {
    const rows: Array<[Parameters<typeof deletingDependents>[0], boolean]> = [
      [{}, false],
      [{ finalizers: [FINALIZER_FOREGROUND] }, false],
      [{ deletionTimestamp: null, finalizers: [FINALIZER_FOREGROUND] }, false],
      [{ deletionTimestamp: '2024-01-01T00:00:00Z' }, false],
      [{ deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: [FINALIZER_ORPHAN] }, false],
      [{ deletionTimestamp: '2024-01-01T00:00:00Z', finalizers: ['x', FINALIZER_FOREGROUND] }, true],
    ];
    for (const [meta, want] of rows) assert.equal(deletingDependents(meta), want, JSON.stringify(meta));
  });
});

describe('properties', () => {
  const stateArb = fc.constantFrom<OwnerState>('solid', 'dangling', 'waiting', 'unknown');
  /** Owners with distinct uids, each with a state; some uids left out of the map (unknown). */
  const scenario = fc
    .uniqueArray(
      fc.record({
        uid: fc.string({ minLength: 1, maxLength: 4 }),
        block: fc.option(fc.boolean(), { nil: undefined }),
        state: stateArb,
        inMap: fc.boolean(),
      }),
      { minLength: 0, maxLength: 6, selector: (o) => o.uid },
    )
    .chain((owners) =>
      fc.record({
        owners: fc.constant(owners),
        finalizers: fc.subarray([FINALIZER_ORPHAN, FINALIZER_FOREGROUND, 'example.com/hold']),
        beingDeleted: fc.boolean(),
        dependents: fc.nat({ max: 3 }),
        dependentDeletingDependents: fc.boolean(),
      }),
    );
  type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;
  const run = (s: Scenario): { decision: ItemDecision; solidUids: Set<string> } => {
    const facts = item({
      ownerReferences: s.owners.map((o) => ref(o.uid, o.block)),
      finalizers: s.finalizers,
      beingDeleted: s.beingDeleted,
      dependents: s.dependents,
      dependentDeletingDependents: s.dependentDeletingDependents,
    });
    const map = new Map(s.owners.filter((o) => o.inMap).map((o) => [o.uid, o.state] as const));
    const solidUids = new Set(
      s.owners.filter((o) => !o.inMap || o.state === 'solid' || o.state === 'unknown').map((o) => o.uid),
    );
    return { decision: decideItem(facts, map), solidUids };
  };

  it('never deletes when some owner is solid or unknown, nor when being deleted or ownerless', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { decision, solidUids } = run(s);
        if (solidUids.size > 0 || s.beingDeleted || s.owners.length === 0) {
          assert.notEqual(decision.action, 'delete');
        } else {
          assert.equal(decision.action, 'delete', 'no solid owner: deleted');
        }
      }),
      { numRuns: 500 },
    );
  });

  it('removeOwnerReferences never lists a solid or unknown uid, and lists every other one', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { decision, solidUids } = run(s);
        if (decision.action !== 'removeOwnerReferences') return;
        assert.ok(decision.uids.length > 0);
        for (const uid of decision.uids) assert.ok(!solidUids.has(uid), `solid ${uid} removed`);
        assert.deepEqual(
          [...decision.uids].sort(),
          s.owners
            .map((o) => o.uid)
            .filter((u) => !solidUids.has(u))
            .sort(),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('unblock lists only blocking references to waiting owners', () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { decision } = run(s);
        if (decision.action !== 'delete') return;
        for (const uid of decision.unblock) {
          const o = s.owners.find((x) => x.uid === uid)!;
          assert.ok(o.inMap && o.state === 'waiting' && o.block === true, uid);
        }
        if (decision.unblock.length > 0) assert.equal(decision.policy, 'Foreground');
      }),
      { numRuns: 500 },
    );
  });

  it('decideOwner in the foreground waits exactly while some dependent blocks', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ block: fc.option(fc.boolean(), { nil: undefined }), beingDeleted: fc.boolean() }),
          { maxLength: 6 },
        ),
        (deps) => {
          const d = decideOwner(
            { finalizers: [FINALIZER_FOREGROUND], beingDeleted: true },
            deps.map((x) => dep('o', x.block, x.beingDeleted)),
          );
          if (deps.some((x) => x.block === true)) {
            assert.equal(d.action, 'waitForDependents');
            if (d.action === 'waitForDependents') {
              for (const i of d.check) assert.equal(deps[i]!.beingDeleted, false);
              assert.equal(d.check.length, deps.filter((x) => !x.beingDeleted).length);
            }
          } else {
            assert.deepEqual(d, { action: 'removeForegroundFinalizer' });
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
