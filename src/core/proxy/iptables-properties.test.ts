// Full and partial syncs against a small model of the kernel's chain tables: a partial sync after a full
// one leaves exactly what a full sync of the new state leaves, and no restore ever jumps to a missing chain
// or deletes one still in use (the kernel would refuse the whole restore).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { MAX_CHAIN_NAME } from './chain-names.js';
import { renderFull, renderPartial, type Applied, type RenderOptions } from './iptables.js';
import { KEYS, changedKeys, nextArb, optionsArb, stateArb } from './testing/arbitraries.js';
import type { ServicePortState } from './types.js';

const BUILTIN: Readonly<Record<string, readonly string[]>> = {
  nat: ['PREROUTING', 'INPUT', 'OUTPUT', 'POSTROUTING'],
  filter: ['INPUT', 'FORWARD', 'OUTPUT'],
};
/** Targets that are not chains. */
const TARGETS = new Set(['ACCEPT', 'DROP', 'REJECT', 'RETURN', 'MARK', 'MASQUERADE', 'DNAT', 'SNAT']);

type Table = Map<string, string[]>;

/**
 * The kernel's chains per table, as `iptables-restore --noflush` changes them: a `:CHAIN` line creates or
 * flushes a chain (never a built-in one), `-A` appends to an existing chain and may only jump to an
 * existing chain, `-X` deletes an empty chain nothing jumps to; a table changes only at its COMMIT, and a
 * refused restore changes nothing.
 */
class Kernel {
  tables = new Map<string, Table>(
    Object.entries(BUILTIN).map(([t, chains]) => [t, new Map(chains.map((c) => [c, []]))]),
  );

  restore(text: string): void {
    const next = new Map(this.tables);
    let name: string | undefined;
    let table: Table | undefined;
    const lines = text.split('\n');
    assert.equal(lines.pop(), '', 'the text ends with a newline');
    for (const [i, line] of lines.entries()) {
      const where = `line ${i + 1}: ${line}`;
      if (line.startsWith('*')) {
        assert.equal(table, undefined, where);
        name = line.slice(1);
        table = new Map([...(next.get(name) ?? [])].map(([c, rules]) => [c, [...rules]]));
      } else if (line === 'COMMIT') {
        assert.ok(table !== undefined && name !== undefined, where);
        next.set(name, table);
        table = undefined;
      } else {
        assert.ok(table !== undefined && name !== undefined, where);
        const [op = '', chain = '', ...rest] = line.split(' ');
        if (op.startsWith(':')) {
          const c = op.slice(1);
          assert.ok(!BUILTIN[name]?.includes(c), `${where}: a built-in chain is never declared`);
          assert.ok(c.length <= MAX_CHAIN_NAME, `${where}: chain name too long`);
          assert.deepEqual([chain, ...rest], ['-', '[0:0]'], where);
          table.set(c, []);
        } else if (op === '-A') {
          const rules = table.get(chain);
          assert.ok(rules !== undefined, `${where}: no chain ${chain}`);
          // A rule without a target only counts packets (KUBE-FW-'s last rule).
          if (rest.includes('-j')) {
            const target = rest[rest.indexOf('-j') + 1];
            assert.ok(target !== undefined, where);
            assert.ok(TARGETS.has(target) || table.has(target), `${where}: no chain ${target}`);
          }
          rules.push(rest.join(' '));
        } else if (op === '-X') {
          assert.ok(!BUILTIN[name]?.includes(chain), where);
          assert.deepEqual(table.get(chain), [], `${where}: only an existing, empty chain can be deleted`);
          for (const [c, rules] of table)
            for (const r of rules)
              assert.ok(!r.endsWith(`-j ${chain}`), `${where}: ${c} still jumps to ${chain}`);
          table.delete(chain);
        } else assert.fail(`${where}: unexpected`);
      }
    }
    assert.equal(table, undefined, 'the last table is committed');
    this.tables = next;
  }

  chains(table: string): string[] {
    return [...(this.tables.get(table)?.keys() ?? [])];
  }

  /** Chains and their rules, chain order ignored. */
  snapshot(): Record<string, Record<string, string[]>> {
    const out: Record<string, Record<string, string[]>> = {};
    for (const [t, table] of this.tables)
      out[t] = Object.fromEntries([...table].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return out;
  }
}

const existing = (k: Kernel) => ({ nat: k.chains('nat'), filter: k.chains('filter') });

const countRules = (text: string): number => text.split('\n').filter((l) => l.startsWith('-A ')).length;

/** Per-service chains (everything nat declares after kube-proxy's four) are declared in descending order. */
function assertDeclaredDescending(text: string): void {
  const names = text
    .slice(0, text.indexOf('*filter'))
    .split('\n')
    .filter((l) => l.startsWith(':'))
    .map((l) => l.slice(1, l.indexOf(' ')))
    .slice(4);
  for (let i = 1; i < names.length; i++)
    assert.ok(names[i - 1]! > names[i]!, `${names[i - 1]} is declared before ${names[i]}`);
}

/** A fresh kernel after one full sync of `s`. */
function fullyApplied(
  s: ReadonlyMap<string, ServicePortState>,
  o: RenderOptions,
): { kernel: Kernel; applied: Applied } {
  const kernel = new Kernel();
  const plan = renderFull(s, existing(kernel), o);
  kernel.restore(plan.text);
  assert.equal(plan.rules, countRules(plan.text));
  assertDeclaredDescending(plan.text);
  return { kernel, applied: plan.applied };
}

describe('full and partial syncs against a model of the kernel', () => {
  it('a partial sync after a full sync leaves what a full sync of the new state leaves', () => {
    fc.assert(
      fc.property(
        stateArb.chain((s1) => fc.tuple(fc.constant(s1), nextArb(s1), fc.subarray(KEYS))),
        optionsArb,
        ([s1, s2, extra], o) => {
          const { kernel, applied } = fullyApplied(s1, o);
          const plan = renderPartial(s2, changedKeys(s1, s2, extra), applied, o);
          kernel.restore(plan.text);
          assert.equal(plan.rules, countRules(plan.text));
          assertDeclaredDescending(plan.text);
          const want = fullyApplied(s2, o);
          assert.deepEqual(kernel.snapshot(), want.kernel.snapshot());
          assert.deepEqual(plan.applied, want.applied);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('partial syncs chain: each one starts from what the last one recorded', () => {
    fc.assert(
      fc.property(
        stateArb.chain((s1) =>
          nextArb(s1).chain((s2) => fc.tuple(fc.constant(s1), fc.constant(s2), nextArb(s2))),
        ),
        optionsArb,
        ([s1, s2, s3], o) => {
          const { kernel, applied } = fullyApplied(s1, o);
          const p2 = renderPartial(s2, changedKeys(s1, s2, []), applied, o);
          kernel.restore(p2.text);
          const p3 = renderPartial(s3, changedKeys(s2, s3, []), p2.applied, o);
          kernel.restore(p3.text);
          assert.deepEqual(kernel.snapshot(), fullyApplied(s3, o).kernel.snapshot());
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a full sync over an old rule set removes every stale chain', () => {
    fc.assert(
      fc.property(
        stateArb.chain((s1) => fc.tuple(fc.constant(s1), nextArb(s1))),
        optionsArb,
        ([s1, s2], o) => {
          const { kernel } = fullyApplied(s1, o);
          kernel.restore(renderFull(s2, existing(kernel), o).text);
          assert.deepEqual(kernel.snapshot(), fullyApplied(s2, o).kernel.snapshot());
        },
      ),
      { numRuns: 200 },
    );
  });

  it('the model refuses what the kernel refuses', () => {
    const k = new Kernel();
    assert.throws(() => k.restore('*nat\n:KUBE-A - [0:0]\n-A KUBE-A -j KUBE-B\nCOMMIT\n'), /no chain KUBE-B/);
    assert.throws(() => k.restore('*nat\n-A KUBE-A -j ACCEPT\nCOMMIT\n'), /no chain KUBE-A/);
    k.restore('*nat\n:KUBE-A - [0:0]\n:KUBE-B - [0:0]\n-A KUBE-A -j KUBE-B\nCOMMIT\n');
    assert.throws(() => k.restore('*nat\n:KUBE-B - [0:0]\n-X KUBE-B\nCOMMIT\n'), /still jumps to KUBE-B/);
    assert.throws(() => k.restore('*nat\n-X KUBE-A\nCOMMIT\n'), /existing, empty chain/);
    assert.throws(() => k.restore('*nat\n:PREROUTING - [0:0]\nCOMMIT\n'), /built-in/);
    assert.deepEqual(k.snapshot()['nat']?.['KUBE-A'], ['-j KUBE-B'], 'a refused restore changes nothing');
  });
});
