// NftablesBackend against a fake nft (no kernel): which kind of transaction each sync sends (a table written
// anew, a partial one, a resync in place), what a refused or aborted transaction does to the next sync,
// the UDP conntrack clean-up after a sync, and --cleanup.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ep, portState, stateOf } from '../core/proxy/testing/builders.js';
import type { RenderOptions } from '../core/proxy/iptables.js';
import type { ProxyState } from '../core/proxy/types.js';
import type { ConntrackTool } from './conntrack-tool.js';
import { NftablesBackend } from './nftables-backend.js';
import { NftError, type NftFamily, type NftRunner } from './nft-runner.js';
import { oneLine } from './nft-session.js';

class FakeNft implements NftRunner {
  /** Every transaction sent, refused ones included. */
  readonly sent: string[] = [];
  /** Through which method each was sent: apply (`nft -f -`) or applySmall (the `nft -i` session). */
  readonly via: ('apply' | 'applySmall')[] = [];
  closed = 0;
  /** The no-op transactions that start nft -i after a whole-table write (not counted in `sent`). */
  warmed = 0;
  /** What the next apply calls do instead of succeeding, in order. */
  readonly failures: ('refuse' | 'abort')[] = [];
  readonly deleted: string[] = [];
  /** The tables deleteTable finds. */
  tables = new Set(['ip svcplane', 'ip6 svcplane']);

  apply(text: string | Iterable<string>): Promise<void> {
    // A whole-table write comes in pieces: what nft reads is them one after another.
    return this.send(typeof text === 'string' ? text : [...text].join(''), 'apply');
  }
  applySmall(text: string): Promise<void> {
    // What the renderer writes for a partial sync must be what nft -i takes as one line (else the runner
    // would quietly send it to nft -f -).
    assert.ok(oneLine(text) !== undefined, text);
    if (/^add table ip6? svcplane\n$/.test(text)) {
      this.warmed++;
      return Promise.resolve();
    }
    return this.send(text, 'applySmall');
  }
  close(): Promise<void> {
    this.closed++;
    return Promise.resolve();
  }
  private send(text: string, via: 'apply' | 'applySmall'): Promise<void> {
    this.sent.push(text);
    this.via.push(via);
    const f = this.failures.shift();
    if (f === 'refuse')
      return Promise.reject(
        new NftError(['nft', '-f', '-'], 'exit 1', '/dev/stdin:2:1-30: Error: Could not process rule', {
          line: 2,
          lineText: text.split('\n')[1],
        }),
      );
    if (f === 'abort') return Promise.reject(new Error('This operation was aborted'));
    return Promise.resolve();
  }
  validate(): Promise<void> {
    return Promise.reject(new Error('not on the sync path'));
  }
  listTable(): Promise<unknown[] | undefined> {
    return Promise.reject(new Error('not on the sync path'));
  }
  listRuleset(): Promise<string> {
    return Promise.reject(new Error('not on the sync path'));
  }
  deleteTable(family: NftFamily, name: string): Promise<boolean> {
    this.deleted.push(`${family} ${name}`);
    return Promise.resolve(this.tables.delete(`${family} ${name}`));
  }
  check(): Promise<{ ok: true }> {
    return Promise.resolve({ ok: true });
  }
  /** The last transaction sent. */
  get last(): string {
    return this.sent.at(-1) ?? '';
  }
}

class FakeConntrack implements ConntrackTool {
  readonly calls: string[] = [];
  hasConntrack(): boolean {
    return true;
  }
  conntrack(args: readonly string[]): Promise<void> {
    this.calls.push(args.join(' '));
    return Promise.resolve();
  }
}

interface Harness {
  backend: NftablesBackend;
  nft: FakeNft;
  conntrack: FakeConntrack;
  warnings: string[];
  failures: number;
  applied: string[];
}

function harness(families: readonly RenderOptions[] = [{ family: 4 }]): Harness {
  const nft = new FakeNft();
  const conntrack = new FakeConntrack();
  const h: Harness = { nft, conntrack, warnings: [], failures: 0, applied: [], backend: undefined! };
  h.backend = new NftablesBackend({
    runner: nft,
    families,
    conntrack,
    log: { info() {}, warn: (m: string) => void h.warnings.push(m), error() {} },
    onFailure: () => void h.failures++,
    onApplied: (kind) => void h.applied.push(kind),
  });
  return h;
}

const WEB = 'default/web:http';
const API = 'default/api:http';
const web = portState(WEB, { internal: [ep('10.0.0.1')] });
const api = portState(API, { clusterIPs: ['10.96.0.11'], internal: [ep('10.0.0.2')] });
const one: ProxyState = stateOf(web);
const two: ProxyState = stateOf(web, api);

const anew = /^delete table ip svcplane$/m;

/** A backend whose first sync (of `one`) went through. */
async function synced(): Promise<Harness> {
  const h = harness();
  await h.backend.apply(one, 'full');
  return h;
}

describe('NftablesBackend', () => {
  it('writes the table anew at the first sync, then sends partial transactions and resyncs in place', async () => {
    const h = harness();
    const first = await h.backend.apply(one, 'full');
    assert.equal(first.partial, false);
    assert.equal(first.detail?.['resync'], undefined);
    assert.match(h.nft.last, anew);
    assert.equal(h.nft.warmed, 1, 'nft -i is started after the whole-table write, before any partial sync');
    assert.match(
      h.nft.last,
      /^add element ip svcplane service-ips \{ 10\.96\.0\.10 \. tcp \. 80 : goto service-/m,
    );

    const partial = await h.backend.apply(two, new Set([API]));
    assert.equal(partial.partial, true);
    assert.doesNotMatch(h.nft.last, /table/);
    assert.match(
      h.nft.last,
      /^add element ip svcplane service-ips \{ 10\.96\.0\.11 \. tcp \. 80 : goto service-/m,
    );
    // Only the changed service port is written.
    assert.doesNotMatch(h.nft.last, /10\.96\.0\.10/);

    // The partial transaction's result is the model of the next one.
    assert.equal((await h.backend.apply(one, new Set([API]))).partial, true);
    assert.match(h.nft.last, /^delete element ip svcplane service-ips \{ 10\.96\.0\.11 \. tcp \. 80 \}$/m);
    await h.backend.apply(two, new Set([API]));

    assert.equal(h.nft.warmed, 1, 'partial syncs do not warm');
    const resync = await h.backend.apply(two, 'full');
    assert.equal(resync.partial, false);
    assert.equal(resync.detail?.['resync'], 1);
    assert.equal(h.nft.warmed, 2);
    assert.doesNotMatch(h.nft.last, anew);
    assert.match(h.nft.last, /^flush chain ip svcplane services$/m);
    assert.match(h.nft.last, /^flush map ip svcplane service-ips$/m);
    assert.match(h.nft.last, /10\.96\.0\.10 \. tcp \. 80 : goto service-/);
    assert.deepEqual(h.applied, ['full', 'partial', 'partial', 'partial', 'resync']);
    assert.equal(h.nft.sent.length, 5);
    // Only partial transactions are small enough for the runner's nft -i session.
    assert.deepEqual(h.nft.via, ['apply', 'applySmall', 'applySmall', 'applySmall', 'apply']);
    assert.equal(h.failures, 0);
  });

  it('keeps ClientIP affinity sets at a resync: they are not flushed', async () => {
    const h = harness();
    const sticky = stateOf(portState(WEB, { internal: [ep('10.0.0.1')], affinityTimeoutSeconds: 10800 }));
    await h.backend.apply(sticky, 'full');
    const affinity = /^add set ip svcplane (affinity-\S+) /m.exec(h.nft.last)?.[1];
    assert.ok(affinity !== undefined, h.nft.last);
    await h.backend.apply(sticky, 'full');
    assert.doesNotMatch(h.nft.last, anew);
    assert.ok(h.nft.last.includes(`add set ip svcplane ${affinity} `), h.nft.last);
    assert.ok(!h.nft.last.includes(`flush set ip svcplane ${affinity}`), h.nft.last);
  });

  it('sends both families in one transaction', async () => {
    const h = harness([{ family: 4 }, { family: 6 }]);
    const dual = stateOf(
      portState(WEB, { clusterIPs: ['10.96.0.10', 'fd00:96::a'], internal: [ep('10.0.0.1'), ep('fd00::1')] }),
    );
    await h.backend.apply(dual, 'full');
    assert.equal(h.nft.sent.length, 1);
    assert.match(h.nft.last, anew);
    assert.match(h.nft.last, /^delete table ip6 svcplane$/m);
    assert.match(h.nft.last, /^add element ip6 svcplane service-ips \{ fd00:96::a \. tcp \. 80 : /m);
  });

  it('writes the table anew in the same sync when nft refuses the resync', async () => {
    const h = await synced();
    h.nft.failures.push('refuse');
    const r = await h.backend.apply(two, 'full');
    assert.equal(h.nft.sent.length, 3);
    assert.doesNotMatch(h.nft.sent[1]!, anew);
    assert.match(h.nft.sent[2]!, anew);
    assert.match(h.nft.sent[2]!, /10\.96\.0\.11 \. tcp \. 80 : goto service-/);
    assert.equal(r.partial, false);
    assert.equal(r.detail?.['resync'], undefined);
    assert.deepEqual(h.warnings, ['the proxy table was changed beyond a resync; writing it anew']);
    assert.equal(h.failures, 1);
    assert.deepEqual(h.applied, ['full', 'full']);
    // What was written anew is known: the next change is partial again.
    assert.equal((await h.backend.apply(one, new Set([API]))).partial, true);
  });

  it('fails the sync when the table written anew after a refused resync is refused too', async () => {
    const h = await synced();
    h.nft.failures.push('refuse', 'refuse');
    await assert.rejects(h.backend.apply(two, 'full'), NftError);
    assert.equal(h.nft.sent.length, 3);
    assert.equal(h.failures, 2);
  });

  it('keeps its model when nft refuses a partial transaction: the next full sync is a resync', async () => {
    const h = await synced();
    h.nft.failures.push('refuse');
    await assert.rejects(h.backend.apply(two, new Set([API])), NftError);
    assert.equal(h.failures, 1);
    // The kept model is as before the refused transaction: the same change sends the same transaction.
    const refused = h.nft.sent.at(-1);
    h.nft.failures.push('refuse');
    await assert.rejects(h.backend.apply(two, new Set([API])), NftError);
    assert.equal(h.nft.sent.at(-1), refused);
    const r = await h.backend.apply(two, 'full');
    assert.equal(r.detail?.['resync'], 1);
    assert.doesNotMatch(h.nft.last, anew);
    assert.match(h.nft.last, /10\.96\.0\.11 \. tcp \. 80 : goto service-/);
  });

  it('forgets its model when a transaction is aborted: the next sync writes the table anew', async () => {
    const h = await synced();
    h.nft.failures.push('abort');
    await assert.rejects(h.backend.apply(two, new Set([API])), /aborted/);
    // Even a partial change: whether the aborted transaction was committed is unknown.
    const r = await h.backend.apply(two, new Set([API]));
    assert.equal(r.partial, false);
    assert.match(h.nft.last, anew);
    assert.match(h.nft.last, /10\.96\.0\.10 \. tcp \. 80 : goto service-/);
  });

  it('forgets its model when a resync is aborted (no table written anew in that sync)', async () => {
    const h = await synced();
    h.nft.failures.push('abort');
    await assert.rejects(h.backend.apply(one, 'full'), /aborted/);
    assert.equal(h.nft.sent.length, 2);
    assert.equal((await h.backend.apply(one, 'full')).detail?.['resync'], undefined);
    assert.match(h.nft.last, anew);
  });

  it('sends nothing when a partial sync changes nothing in the table', async () => {
    const h = await synced();
    const r = await h.backend.apply(one, new Set([WEB]));
    assert.equal(r.partial, true);
    assert.equal(h.nft.sent.length, 1);
    assert.deepEqual(h.applied, ['full']);
  });

  it('deletes the conntrack flows of a removed UDP endpoint after the sync', async () => {
    const h = harness();
    const dns = (...ips: string[]) =>
      stateOf(
        portState('kube-system/dns:dns', { protocol: 'UDP', port: 53, internal: ips.map((i) => ep(i, 53)) }),
      );
    const first = await h.backend.apply(dns('10.0.0.1', '10.0.0.2'), 'full');
    assert.equal(first.detail?.['conntrackDeletes'], 0);
    const r = await h.backend.apply(dns('10.0.0.1'), new Set(['kube-system/dns:dns']));
    assert.equal(r.detail?.['conntrackDeletes'], 1);
    assert.deepEqual(h.conntrack.calls, ['-D -f ipv4 -p udp --orig-dst 10.96.0.10 --dst-nat 10.0.0.2']);
    assert.doesNotMatch(h.nft.last, /dnat to 10\.0\.0\.2:53/);
    assert.match(
      h.nft.last,
      /^delete element ip svcplane hairpin-endpoints \{ 10\.0\.0\.2 \. 10\.0\.0\.2 \}$/m,
    );
  });

  it("close() ends the runner's nft -i session; the rules stay", async () => {
    const h = await synced();
    await h.backend.close();
    assert.equal(h.nft.closed, 1);
    assert.deepEqual(h.nft.deleted, []);
  });

  it('--cleanup deletes both families’ tables and writes anew afterwards', async () => {
    const h = await synced();
    h.nft.tables.delete('ip6 svcplane');
    assert.deepEqual(await h.backend.cleanup(), { tables: 1 });
    assert.deepEqual(h.nft.deleted, ['ip svcplane', 'ip6 svcplane']);
    assert.deepEqual(await h.backend.cleanup(), { tables: 0 });
    await h.backend.apply(one, new Set([WEB]));
    assert.match(h.nft.last, anew);
  });
});
