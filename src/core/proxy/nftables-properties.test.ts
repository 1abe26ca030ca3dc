// Full and partial nftables transactions against a small model of nft: partial transactions applied in
// order leave exactly what one full transaction of the last state leaves, nft never has reason to refuse
// one, and a partial transaction mentions only what changed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  nftModel,
  nftTable,
  renderNftCleanup,
  renderNftFull,
  renderNftPartial,
  renderNftResync,
  type NftKept,
} from './nftables.js';
import { KEYS, changedKeys, nextArb, optionsArb, stateArb } from './testing/arbitraries.js';
import { NftInterpreter } from './testing/nft-interpreter.js';
import type { RenderOptions } from './iptables.js';
import { writeModel, type NftModel } from './nftables-model.js';
import type { ProxyState } from './types.js';

/** A fresh nft after one full transaction of `s`. */
function fullyApplied(s: ProxyState, o: RenderOptions): NftInterpreter {
  const nft = new NftInterpreter();
  nft.apply(renderNftFull(s, o).text);
  return nft;
}

/** What a fresh nft holds after writing the whole of `m`, as it routes (endpoint ranges resolved). */
const routing = (m: NftModel): unknown => {
  const nft = new NftInterpreter();
  nft.apply(writeModel(m).text);
  return nft.resolved();
};

/** The table alone of a model with what its ports own. */
const tableOf = ({ family, table, chains, sets }: NftModel): NftModel => ({ family, table, chains, sets });

/** Every chain a partial transaction flushes had other rules before, or goes. */
function assertMinimal(text: string, previous: NftModel, next: NftModel): void {
  for (const line of text.split('\n')) {
    const flushed = /^flush chain \S+ \S+ (\S+)$/.exec(line)?.[1];
    if (flushed === undefined) continue;
    const before = previous.chains.get(flushed)?.rules;
    const after = next.chains.get(flushed)?.rules;
    assert.notDeepEqual(before, after, `${line}: the chain did not change`);
  }
  assert.ok(!/^(add|delete) table/m.test(text), 'a partial transaction never replaces the table');
}

/**
 * What a partial render keeps holds nothing of what went: the state's ports only, the holders a full render
 * of the state finds, an endpoint range only for a chain whose rule uses it, and no range both used and free.
 */
function assertNothingLeaks(kept: NftKept, s: ProxyState, o: RenderOptions): void {
  assert.deepEqual(new Map(kept.ports), new Map(s), 'kept ports');
  assert.deepEqual(kept.holders, nftModel(s, o).holders, 'kept holders');
  const used = [...nftTable(kept).chains]
    .filter(([, c]) => c.rules.some((r) => / offset \d+ map @endpoints-/.test(r)))
    .map(([name]) => name);
  assert.deepEqual([...kept.slots.ranges.keys()].sort(), used.sort(), 'kept ranges');
  const free = new Set([...kept.slots.free.values()].flat());
  for (const r of kept.slots.ranges.values()) assert.ok(!free.has(r.base), `range ${r.base} used and free`);
}

const sequenceArb = stateArb.chain((s1) =>
  nextArb(s1).chain((s2) =>
    nextArb(s2).chain((s3) => fc.tuple(fc.constant(s1), fc.constant(s2), fc.constant(s3), nextArb(s3))),
  ),
);

describe('nftables full and partial transactions against a model of nft', () => {
  it('partial transactions applied in order leave what a full transaction of the last state leaves', () => {
    fc.assert(
      fc.property(
        sequenceArb,
        optionsArb,
        fc.array(fc.subarray(KEYS), { minLength: 3, maxLength: 3 }),
        (states, o, extras) => {
          const nft = new NftInterpreter();
          let plan = renderNftFull(states[0], o);
          nft.apply(plan.text);
          assertNothingLeaks(plan.model, states[0], o);
          for (const [i, s] of states.slice(1).entries()) {
            // Only the changed ports rendered again gives what rendering everything again gives.
            const changed = changedKeys(states[i]!, s, extras[i]!);
            const everything = renderNftPartial(plan.model, s, o);
            const previous = structuredClone(plan.model);
            // Told what changed, the render updates the kept model in place; revert() puts it back.
            const first = renderNftPartial(plan.model, s, o, changed);
            first.revert?.();
            assert.deepEqual(plan.model, previous, 'reverted');
            const next = renderNftPartial(plan.model, s, o, changed);
            assert.equal(next.text, first.text);
            assertMinimal(next.text, nftTable(previous), nftTable(next.model));
            // Rendering everything again allocates endpoint ranges afresh: other slots, the same routing.
            const other = nft.clone();
            other.apply(everything.text);
            nft.apply(next.text);
            assert.deepEqual(other.resolved(), nft.resolved());
            assert.deepEqual(routing(nftTable(next.model)), routing(nftModel(s, o)));
            assertNothingLeaks(next.model, s, o);
            plan = next;
          }
          assert.deepEqual(nft.resolved(), fullyApplied(states[3], o).resolved());
          assert.equal(
            renderNftPartial(plan.model, states[3], o, new Set()).text,
            '',
            'nothing changed: nothing to do',
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a full transaction over an old table replaces it; cleanup removes it and is harmless twice', () => {
    fc.assert(
      fc.property(
        stateArb.chain((s1) => fc.tuple(fc.constant(s1), nextArb(s1))),
        optionsArb,
        ([s1, s2], o) => {
          const nft = fullyApplied(s1, o);
          nft.apply(renderNftFull(s2, o).text);
          assert.deepEqual(nft.snapshot(), fullyApplied(s2, o).snapshot());
          nft.apply(renderNftCleanup(o.family));
          nft.apply(renderNftCleanup(o.family));
          assert.deepEqual(nft.snapshot(), []);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a resync onto the last table, whatever another writer did to its chains and maps, leaves what a full transaction leaves, and keeps affinity sets', () => {
    // What another writer may do to the proxy's table between two syncs, and nft still takes the resync.
    const driftArb = fc.constantFrom(
      'none',
      'table deleted',
      'rule added',
      'element deleted',
      'element added',
      'chain emptied',
    );
    fc.assert(
      fc.property(
        stateArb.chain((s1) => fc.tuple(fc.constant(s1), nextArb(s1))),
        optionsArb,
        driftArb,
        ([s1, s2], o, drift) => {
          const first = renderNftFull(s1, o);
          const nft = new NftInterpreter();
          nft.apply(first.text);
          const t = `${first.model.family} ${first.model.table}`;
          const table = nftTable(first.model);
          // An address the kernel remembered in one affinity set (an `update @set` by a packet).
          const affinity = [...table.sets.keys()].find((n) => n.startsWith('affinity-'));
          const client = o.family === 4 ? '192.0.2.77' : '2001:db8::77';
          if (affinity !== undefined) nft.apply(`add element ${t} ${affinity} { ${client} }\n`);
          const [k, v] = [...(table.sets.get('service-ips')?.elements ?? [])][0] ?? [];
          if (drift === 'table deleted') nft.apply(`delete table ${t}\n`);
          else if (drift === 'rule added') nft.apply(`add rule ${t} services drop\n`);
          else if (drift === 'element deleted' && k !== undefined)
            nft.apply(`delete element ${t} service-ips { ${k} }\n`);
          else if (drift === 'element added')
            nft.apply(`add element ${t} no-endpoint-nodeports { udp . 31999 : drop }\n`);
          else if (drift === 'chain emptied' && v !== undefined)
            nft.apply(`flush chain ${t} ${v.slice(5)}\n`);
          const resync = renderNftResync(first.model, s2, o);
          nft.apply(resync.text);
          assert.deepEqual(nftTable(resync.model), tableOf(nftModel(s2, o)));
          const expected = fullyApplied(s2, o);
          const kept =
            affinity !== undefined && drift !== 'table deleted' && nftTable(resync.model).sets.has(affinity);
          if (kept) expected.apply(`add element ${t} ${affinity} { ${client} }\n`);
          assert.deepEqual(nft.snapshot(), expected.snapshot());
          assert.ok(!/^delete table/m.test(resync.text), 'a resync keeps the table');
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the model refuses what nft refuses, and a refused transaction changes nothing', () => {
    const nft = new NftInterpreter();
    const t = 'ip svcplane';
    assert.throws(() => nft.apply(`add chain ${t} a\n`), /no such table/);
    nft.apply(`add table ${t}\nadd chain ${t} a\nadd chain ${t} b\nadd rule ${t} a goto b\n`);
    assert.throws(() => nft.apply(`add rule ${t} a jump c\n`), /no chain c/);
    assert.throws(() => nft.apply(`delete chain ${t} b\n`), /chain in use/);
    assert.throws(() => nft.apply(`delete chain ${t} a\n`), /chain not empty/);
    assert.throws(() => nft.apply(`add rule ${t} b ip saddr @s drop\n`), /no set s/);
    nft.apply(`add map ${t} m { type inet_service : verdict ; }\nadd element ${t} m { 80 : goto b }\n`);
    assert.throws(() => nft.apply(`add element ${t} m { 80 : drop }\n`), /element exists/);
    assert.throws(() => nft.apply(`delete element ${t} m { 81 }\n`), /no such element/);
    assert.throws(() => nft.apply(`flush chain ${t} a\ndelete chain ${t} b\n`), /chain in use/);
    assert.throws(() => nft.apply(`flush chain ${t} a\nadd rule ${t} a goto nowhere\n`), /no chain nowhere/);
    assert.deepEqual(nft.snapshot(), [
      {
        table: t,
        chains: [
          ['a', { hook: undefined, rules: ['goto b'] }],
          ['b', { hook: undefined, rules: [] }],
        ],
        sets: [['m', 'map', 'type inet_service : verdict ;', [['80', 'goto b']]]],
      },
    ]);
  });
});
