// A throwaway network namespace with an nft runner in it, for the suites that drive nft directly
// (proxy-nftables-runner, proxy-nft-session): as root, never touching the root namespace's ruleset.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ipPath } from '../../../src/demo/netns.js';
import { nftRunner, type NftRunner } from '../../../src/proxy/nft-runner.js';

/** `ip ARGS`, synchronously: its stdout; throws with its stderr when it fails. */
export function ip(...args: string[]): string {
  const r = spawnSync(ipPath(), args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${args.join(' ')} failed: ${r.stderr || r.error?.message}`);
  return r.stdout;
}

/**
 * Creates `netns` and an nft runner ($NFT_BIN, or nft) in it. Without root or a working nft it fails,
 * naming scripts/ensure-deps.sh; it never skips. remove() deletes the namespace (idempotent).
 */
export async function nftNetns(netns: string): Promise<{ runner: NftRunner; remove: () => void }> {
  assert.equal(process.getuid?.(), 0, 'this suite needs root (it creates a network namespace)');
  const bin = process.env['NFT_BIN'];
  const runner = nftRunner({ netns, ...(bin === undefined || bin === '' ? {} : { bin }) });
  ip('netns', 'add', netns);
  let removed = false;
  const remove = (): void => {
    if (removed) return;
    removed = true;
    ip('netns', 'del', netns);
  };
  const ok = await runner.check();
  if (!ok.ok) remove();
  assert.ok(ok.ok, `nft does not work here: ${ok.ok ? '' : ok.reason} (run scripts/ensure-deps.sh as root)`);
  return { runner, remove };
}
