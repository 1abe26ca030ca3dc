// Partial syncs (KEP-3453): the dispatch chains in full, only the changed Service ports' own chains.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extChain, sepChain, svcChain } from './chain-names.js';
import { renderFull, renderPartial, type RenderOptions } from './iptables.js';
import { ep, portState, stateOf } from './testing/builders.js';
import { declared, deletedIn, descending, rulesOf, tables } from './testing/restore-text.js';

const V4: RenderOptions = { family: 4 };
const full = (state: Parameters<typeof renderFull>[0]) => renderFull(state, { nat: [], filter: [] }, V4);

describe('renderPartial()', () => {
  const a = portState('ns/a', {
    clusterIPs: ['10.96.0.1'],
    nodePort: 30001,
    internal: [ep('10.0.0.1'), ep('10.0.0.2')],
    external: [ep('10.0.0.1'), ep('10.0.0.2')],
  });
  const b = portState('ns/b', { clusterIPs: ['10.96.0.2'], internal: [ep('10.0.1.1')] });
  const c = portState('ns/c', { clusterIPs: ['10.96.0.3'], internal: [ep('10.0.2.1')] });
  const A = { svc: svcChain('ns/a', 'TCP'), ext: extChain('ns/a', 'TCP') };
  const sepOf = (key: string, ip: string) => sepChain(key, 'TCP', ip, 8080);

  it("rewrites the dispatch chains and only the changed Service ports' chains, deleting what they no longer have", () => {
    const before = full(stateOf(a, b, c));
    const a2 = { ...a, internal: [ep('10.0.0.1')], external: [ep('10.0.0.1')] };
    const plan = renderPartial(stateOf(a2, b), new Set(['ns/a', 'ns/c']), before.applied, V4);
    const { nat, filter } = tables(plan.text);
    assert.deepEqual(declared(nat), [
      'KUBE-SERVICES',
      'KUBE-NODEPORTS',
      'KUBE-POSTROUTING',
      'KUBE-MARK-MASQ',
      ...descending([
        A.svc,
        A.ext,
        sepOf('ns/a', '10.0.0.1'),
        sepOf('ns/a', '10.0.0.2'), // removed endpoint: flushed, then deleted
        svcChain('ns/c', 'TCP'), // removed Service
        sepOf('ns/c', '10.0.2.1'),
      ]),
    ]);
    assert.deepEqual(deletedIn(nat), [
      sepOf('ns/a', '10.0.0.2'),
      svcChain('ns/c', 'TCP'),
      sepOf('ns/c', '10.0.2.1'),
    ]);
    // ns/b is unchanged: its chains are not mentioned, but KUBE-SERVICES still jumps to them.
    assert.ok(!nat.some((l) => l.startsWith(`-A ${svcChain('ns/b', 'TCP')}`)));
    assert.ok(rulesOf(nat, 'KUBE-SERVICES').some((l) => l.endsWith(`-j ${svcChain('ns/b', 'TCP')}`)));
    assert.deepEqual(declared(filter), [
      'KUBE-SERVICES',
      'KUBE-EXTERNAL-SERVICES',
      'KUBE-FORWARD',
      'KUBE-NODEPORTS',
      'KUBE-PROXY-FIREWALL',
    ]);
    assert.deepEqual(
      plan.applied,
      new Map([
        ['ns/a', [A.svc, A.ext, sepOf('ns/a', '10.0.0.1')]],
        ['ns/b', before.applied.get('ns/b')],
      ]),
    );
    assert.deepEqual([plan.written, plan.deleted], [1, 3]);
  });

  it('rewrites a Service port that the previous restore did not record, even when not marked changed', () => {
    const before = full(stateOf(a));
    const plan = renderPartial(stateOf(a, b), new Set(), before.applied, V4);
    assert.deepEqual(
      declared(tables(plan.text).nat).slice(4),
      descending([svcChain('ns/b', 'TCP'), sepOf('ns/b', '10.0.1.1')]),
    );
    assert.equal(plan.written, 1);
  });

  it('rewrites an unmarked Service port whose dispatch rules would jump to a chain it does not have', () => {
    const before = full(stateOf(portState('ns/b', { clusterIPs: ['10.96.0.2'] })));
    assert.deepEqual(before.applied.get('ns/b'), []);
    const plan = renderPartial(stateOf(b), new Set(), before.applied, V4);
    assert.ok(declared(tables(plan.text).nat).includes(svcChain('ns/b', 'TCP')));
  });

  it('deletes the chains of a Service port the previous restore recorded and the state lost, even unmarked', () => {
    const before = full(stateOf(a, b));
    const plan = renderPartial(stateOf(a), new Set(), before.applied, V4);
    assert.deepEqual(deletedIn(tables(plan.text).nat), [svcChain('ns/b', 'TCP'), sepOf('ns/b', '10.0.1.1')]);
    assert.equal(plan.written, 0);
  });
});
