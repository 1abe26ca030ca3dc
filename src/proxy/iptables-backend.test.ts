// IptablesBackend against a recording runner: what a full sync reads and writes, and that a failing
// iptables-save does not stop it (stale chains then stay, as in kube-proxy).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ep, portState, stateOf } from '../core/proxy/testing/builders.js';
import { IptablesBackend } from './iptables-backend.js';
import type { IptablesRunner, IptablesTable } from './iptables-runner.js';

class FakeRunner implements IptablesRunner {
  restores: string[] = [];
  saveFails = false;
  saved: Record<IptablesTable, string> = {
    nat: '*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-STALE0000000000 - [0:0]\nCOMMIT\n',
    filter: '*filter\nCOMMIT\n',
  };
  restore(text: string): Promise<void> {
    this.restores.push(text);
    return Promise.resolve();
  }
  save(table: IptablesTable): Promise<string> {
    return this.saveFails
      ? Promise.reject(new Error('iptables-save was killed by SIGSEGV'))
      : Promise.resolve(this.saved[table]);
  }
  ensureRule(): Promise<void> {
    return Promise.resolve();
  }
  deleteRule(): Promise<void> {
    return Promise.resolve();
  }
  check(): Promise<{ ok: true }> {
    return Promise.resolve({ ok: true });
  }
  hasConntrack(): boolean {
    return false;
  }
  conntrack(): Promise<void> {
    return Promise.resolve();
  }
}

const state = stateOf(portState('default/web:http', { internal: [ep('10.0.0.1')] }));

describe('IptablesBackend full sync', () => {
  it('deletes the stale chains iptables-save lists', async () => {
    const runner = new FakeRunner();
    const backend = new IptablesBackend({
      runner,
      render: { family: 4 },
      log: { info() {}, warn() {}, error() {} },
    });
    await backend.apply(state, 'full');
    assert.match(runner.restores[0]!, /^-X KUBE-SVC-STALE0000000000$/m);
  });

  it('goes on without deleting stale chains when iptables-save fails, and says so', async () => {
    const runner = new FakeRunner();
    runner.saveFails = true;
    const warnings: string[] = [];
    const log = { info() {}, warn: (m: string) => void warnings.push(m), error() {} };
    const backend = new IptablesBackend({ runner, render: { family: 4 }, log });
    const result = await backend.apply(state, 'full');
    assert.equal(result.partial, false);
    assert.equal(runner.restores.length, 1);
    assert.doesNotMatch(runner.restores[0]!, /^-X /m);
    assert.match(runner.restores[0]!, /^-A KUBE-SERVICES .* -j KUBE-SVC-/m);
    assert.deepEqual(warnings, [
      'iptables-save failed: only the chains this proxy wrote are checked for deletion',
    ]);
    // The next sync can be partial: what was applied is known.
    assert.equal((await backend.apply(state, new Set(['default/web:http']))).partial, true);
  });

  it('still deletes the chains it wrote itself when iptables-save fails', async () => {
    const runner = new FakeRunner();
    const quiet = { info() {}, warn() {}, error() {} };
    const backend = new IptablesBackend({ runner, render: { family: 4 }, log: quiet });
    const fw = (ranges: string[]) =>
      stateOf(
        portState('default/web:http', {
          internal: [ep('10.0.0.1')],
          external: [ep('10.0.0.1')],
          nodePort: 30080,
          loadBalancerIPs: ['5.6.7.8'],
          ...(ranges.length > 0 ? { loadBalancerSourceRanges: ranges } : {}),
        }),
      );
    await backend.apply(fw(['10.0.0.0/8']), 'full');
    const fwChain = /^:(KUBE-FW-\w+) /m.exec(runner.restores[0]!)?.[1];
    assert.ok(fwChain !== undefined);
    runner.saveFails = true;
    await backend.apply(fw([]), 'full'); // the ranges are gone; the periodic full sync, save crashing
    assert.match(runner.restores[1]!, new RegExp(`^-X ${fwChain}$`, 'm'));
    assert.doesNotMatch(runner.restores[1]!, /^-X KUBE-SVC-STALE/m, 'a chain it never wrote is left alone');
  });
});
