// The nft runner's long-lived `nft -i` (NftRunner.applySmall, src/proxy/nft-session.ts) against the real
// nft and kernel, as root, in a network namespace this suite creates and always removes: nothing touches
// the root namespace's ruleset. A transaction with a command the kernel refuses applies nothing and names
// that command's line; a table changed by another writer between two transactions is seen by the same
// nft process (it re-reads its cache when the ruleset's generation moved); close() leaves no process
// behind. Without root or nft the suite fails, naming scripts/ensure-deps.sh; it never skips.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { NftError, type NftRunner } from '../../src/proxy/nft-runner.js';
import { ip, nftNetns } from './testing/nft-netns.js';

const netns = `svcp-nfti-${randomBytes(3).toString('hex')}`;
const TABLE = 'svcp-e2e';
/** The HOME nft runs with (an empty directory of this suite's). */
const home = mkdtempSync(path.join(tmpdir(), 'svcplane-nft-home-'));

/** The processes running in the namespace (nft -i is the only one this suite leaves running). */
const pids = (): string[] =>
  ip('netns', 'pids', netns)
    .split('\n')
    .filter((l) => l !== '');

/** The elements of the set or map `name`, as nft lists them (`1.2.3.4` or `1.2.3.4 : goto c`). */
async function elements(runner: NftRunner, name: string): Promise<string[]> {
  const items = (await runner.listTable('ip', TABLE)) ?? [];
  for (const i of items) {
    const o = i as Partial<Record<'set' | 'map', { name: string; elem?: unknown[] }>>;
    const found = o.set ?? o.map;
    if (found?.name === name) return (found.elem ?? []).map((e) => JSON.stringify(e)).sort();
  }
  throw new Error(`no set or map ${name} in ${JSON.stringify(items)}`);
}

describe('NftRunner.applySmall against nft -i, in a throwaway network namespace', () => {
  let runner: NftRunner;
  let remove: (() => void) | undefined;

  before(async () => {
    process.env['HOME'] = home;
    ({ runner, remove } = await nftNetns(netns));
    await runner.apply(
      [
        `add table ip ${TABLE}`,
        `add chain ip ${TABLE} service-a`,
        `add map ip ${TABLE} service-ips { type ipv4_addr . inet_proto . inet_service : verdict; }`,
        '',
      ].join('\n'),
    );
  });

  after(async () => {
    await runner?.close();
    remove?.();
    rmSync(home, { recursive: true, force: true });
  });

  it('commits a transaction whole, or, when the kernel refuses a command, nothing of it', async () => {
    await runner.applySmall(
      `add element ip ${TABLE} service-ips { 10.96.0.10 . tcp . 80 : goto service-a }\n`,
    );
    const one = await elements(runner, 'service-ips');
    assert.equal(one.length, 1);
    assert.equal(pids().length, 1, 'one nft -i runs in the namespace');

    const text = [
      `add element ip ${TABLE} service-ips { 10.96.0.11 . tcp . 80 : goto service-a }`,
      `flush chain ip ${TABLE} service-a`,
      `add rule ip ${TABLE} service-a counter`,
      `delete element ip ${TABLE} service-ips { 10.96.0.99 . tcp . 80 }`,
      '',
    ].join('\n');
    await assert.rejects(runner.applySmall(text), (e: unknown) => {
      assert.ok(e instanceof NftError, String(e));
      assert.equal(e.line, 4);
      assert.equal(e.lineText, `delete element ip ${TABLE} service-ips { 10.96.0.99 . tcp . 80 }`);
      assert.match(e.stderr, /^Error: .*No such file or directory\ndelete element ip /);
      return true;
    });
    assert.deepEqual(await elements(runner, 'service-ips'), one, 'the added element is not there');
    const items = JSON.stringify(await runner.listTable('ip', TABLE));
    assert.ok(!items.includes('counter'), `the chain was not refilled: ${items}`);

    // The same nft goes on: the same transaction without its bad command is committed whole.
    await runner.applySmall(text.split('\n').slice(0, 3).join('\n') + '\n');
    assert.equal((await elements(runner, 'service-ips')).length, 2);
    assert.ok(JSON.stringify(await runner.listTable('ip', TABLE)).includes('counter'));
  });

  it('sees what another writer changed between two of its transactions', async () => {
    const [session] = pids();
    // Another nft adds a set, and deletes an element the session added: the session's nft must know both.
    await runner.apply(
      [
        `add set ip ${TABLE} hairpin { type ipv4_addr; }`,
        `delete element ip ${TABLE} service-ips { 10.96.0.11 . tcp . 80 }`,
        '',
      ].join('\n'),
    );
    await runner.applySmall(
      [
        `add element ip ${TABLE} hairpin { 10.244.0.5 }`,
        `add element ip ${TABLE} service-ips { 10.96.0.11 . tcp . 80 : goto service-a }`,
        '',
      ].join('\n'),
    );
    assert.equal((await elements(runner, 'hairpin')).length, 1);
    assert.equal((await elements(runner, 'service-ips')).length, 2);
    assert.deepEqual(pids(), [session], 'the same nft -i did it');
  });

  it('close() ends nft -i: no process and no history file left; the next transaction starts another', async () => {
    await runner.close();
    assert.deepEqual(pids(), []);
    // nft -i writes the lines it read to $HOME/.nft.history when it exits, unless HOME is no directory.
    assert.deepEqual(readdirSync(home), []);
    await runner.applySmall(`delete element ip ${TABLE} hairpin { 10.244.0.5 }\n`);
    assert.deepEqual(await elements(runner, 'hairpin'), []);
    assert.equal(pids().length, 1);
    await runner.close();
    assert.deepEqual(pids(), []);
  });
});
