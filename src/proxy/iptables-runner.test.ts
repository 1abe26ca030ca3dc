// The iptables runner against the real programs, inside a throwaway network namespace that the suite
// creates and always removes: nothing here touches the root namespace's tables. Needs root and the
// iptables programs (scripts/ensure-deps.sh installs them); without them the suite fails, it never skips.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  iptablesRunner,
  parseRestoreErrorLine,
  RestoreError,
  type IptablesRunner,
} from './iptables-runner.js';

const netns = `svcp-ut-${randomBytes(3).toString('hex')}`;

/** $IPTABLES_BIN (set by `npm test` from scripts/ensure-deps.sh) pins the programs; else the runner looks. */
function binFromEnv(): { bin?: { iptables: string; restore: string; save: string } } {
  const iptables = process.env['IPTABLES_BIN'];
  if (iptables === undefined || iptables === '') return {};
  const dir = path.dirname(iptables);
  return {
    bin: { iptables, restore: path.join(dir, 'iptables-restore'), save: path.join(dir, 'iptables-save') },
  };
}

function ip(...args: string[]): void {
  const r = spawnSync('ip', args, {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${process.env['PATH']}:/usr/sbin:/sbin` },
  });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')} failed: ${r.stderr || r.error?.message}`);
}

/** The rules (`-A ...` lines) of one chain in an iptables-save dump. */
const rulesOf = (dump: string, chain: string): string[] =>
  dump.split('\n').filter((l) => l.startsWith(`-A ${chain} `));
const hasChain = (dump: string, chain: string): boolean =>
  dump.split('\n').some((l) => l.startsWith(`:${chain} `));

describe('iptablesRunner (in a throwaway network namespace)', () => {
  let runner: IptablesRunner;
  let created = false;

  before(() => {
    assert.equal(
      process.getuid?.(),
      0,
      'these tests need root (they create a network namespace); run them as root',
    );
    ip('netns', 'add', netns);
    created = true;
    runner = iptablesRunner({ family: 4, netns, ...binFromEnv() });
  });

  after(() => {
    if (created) ip('netns', 'del', netns);
  });

  it('check() reports ok when the programs exist and may be used', async () => {
    assert.deepEqual(await runner.check(), { ok: true });
  });

  it('restore() applies a nat table with a custom chain, and save() shows it', async () => {
    await runner.restore(
      [
        '*nat',
        ':SVCP-TEST - [0:0]',
        '-A SVCP-TEST -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j DNAT --to-destination 10.244.1.5:8080',
        '-A SVCP-TEST -j RETURN',
        'COMMIT',
        '',
      ].join('\n'),
    );
    const dump = await runner.save('nat');
    assert.ok(hasChain(dump, 'SVCP-TEST'), dump);
    assert.deepEqual(rulesOf(dump, 'SVCP-TEST'), [
      '-A SVCP-TEST -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j DNAT --to-destination 10.244.1.5:8080',
      '-A SVCP-TEST -j RETURN',
    ]);
  });

  it('restore() rejects a bad line with a RestoreError naming its number and text, and applies nothing of it', async () => {
    const dumpBefore = await runner.save('nat');
    const text = [
      '*nat',
      ':SVCP-BAD - [0:0]',
      ':SVCP-TEST - [0:0]',
      '-A SVCP-BAD -j RETURN',
      '-A SVCP-TEST -p tcp --no-such-option 1 -j RETURN',
      'COMMIT',
      '',
    ].join('\n');
    await assert.rejects(runner.restore(text), (e: unknown) => {
      assert.ok(e instanceof RestoreError, String(e));
      assert.equal(e.line, 5);
      assert.equal(e.lineText, '-A SVCP-TEST -p tcp --no-such-option 1 -j RETURN');
      assert.match(e.message, /line 5: -A SVCP-TEST -p tcp --no-such-option 1 -j RETURN/);
      assert.match(e.stderr, /no-such-option/);
      return true;
    });
    const dumpAfter = await runner.save('nat');
    // The table is one transaction: the new chain did not appear and SVCP-TEST was not flushed.
    assert.ok(!hasChain(dumpAfter, 'SVCP-BAD'), dumpAfter);
    assert.deepEqual(rulesOf(dumpAfter, 'SVCP-TEST'), rulesOf(dumpBefore, 'SVCP-TEST'));
    assert.equal(rulesOf(dumpAfter, 'SVCP-TEST').length, 2);
  });

  it('restore() names the line of a rule the kernel refuses at COMMIT, and applies nothing of it', async () => {
    const text = [
      '*nat',
      ':SVCP-BAD - [0:0]',
      '-A SVCP-BAD -j RETURN',
      '-A SVCP-NO-SUCH-CHAIN -j RETURN',
      'COMMIT',
      '',
    ];
    await assert.rejects(runner.restore(text.join('\n')), (e: unknown) => {
      assert.ok(e instanceof RestoreError, String(e));
      assert.equal(e.line, 4);
      assert.equal(e.lineText, '-A SVCP-NO-SUCH-CHAIN -j RETURN');
      return true;
    });
    assert.ok(!hasChain(await runner.save('nat'), 'SVCP-BAD'));
  });

  it('restore() honours an aborted signal', async () => {
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(runner.restore('*nat\n:SVCP-ABORT - [0:0]\nCOMMIT\n', ac.signal), {
      name: 'AbortError',
    });
    assert.ok(!hasChain(await runner.save('nat'), 'SVCP-ABORT'));
  });

  it('ensureRule() twice leaves one rule, prepended, and creates its target chain', async () => {
    const args = ['-m', 'comment', '--comment', 'svcp test jump', '-j', 'SVCP-JUMP'];
    await runner.ensureRule('nat', 'PREROUTING', ['-j', 'RETURN']);
    await runner.ensureRule('nat', 'PREROUTING', args, 'SVCP-JUMP');
    await runner.ensureRule('nat', 'PREROUTING', args, 'SVCP-JUMP');
    const dump = await runner.save('nat');
    assert.ok(hasChain(dump, 'SVCP-JUMP'), dump);
    assert.deepEqual(rulesOf(dump, 'PREROUTING'), [
      '-A PREROUTING -m comment --comment "svcp test jump" -j SVCP-JUMP',
      '-A PREROUTING -j RETURN',
    ]);
  });

  it('deleteRule() removes the rule, and a second delete is not an error', async () => {
    const args = ['-m', 'comment', '--comment', 'svcp test jump', '-j', 'SVCP-JUMP'];
    await runner.deleteRule('nat', 'PREROUTING', args);
    await runner.deleteRule('nat', 'PREROUTING', args);
    assert.deepEqual(rulesOf(await runner.save('nat'), 'PREROUTING'), ['-A PREROUTING -j RETURN']);
  });

  it('save() of the filter table works', async () => {
    assert.match(await runner.save('filter'), /^\*filter$/m);
  });
});

describe('parseRestoreErrorLine', () => {
  it('reads the line of every format iptables-restore prints', () => {
    assert.equal(
      parseRestoreErrorLine('iptables-restore: line 12 failed: No chain/target/match by that name.'),
      12,
    );
    assert.equal(
      parseRestoreErrorLine(
        'iptables-restore v1.8.9 (nf_tables): unknown option "--x"\nError occurred at line: 7\n',
      ),
      7,
    );
    assert.equal(parseRestoreErrorLine('iptables-restore: COMMIT expected at line 4'), 4);
    // nf_tables, deleting a chain that is still referenced:
    assert.equal(
      parseRestoreErrorLine(
        'iptables-restore: line 9: CHAIN_DEL failed (Device or resource busy): chain KUBE-SVC-X',
      ),
      9,
    );
    assert.equal(parseRestoreErrorLine('something else'), undefined);
  });
});

describe('iptablesRunner without the programs', () => {
  it('check() names the missing program', async () => {
    const r = await iptablesRunner({ family: 4, bin: { iptables: '/nonexistent/iptables' } }).check();
    assert.equal(r.ok, false);
    assert.ok(!r.ok && /nonexistent\/iptables/.test(r.reason), JSON.stringify(r));
  });
});
