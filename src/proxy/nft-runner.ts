// The I/O shell around nft(8) for the nftables proxy mode: it runs `nft` in the current network namespace
// (the proxy runs inside its node's namespace) or, for tests and tools, through `ip netns exec`. What to
// write is decided by the pure renderer in src/core/proxy/; this file only runs the program and reports
// its failures precisely. Every sync is one transaction, which the kernel commits whole or not at all (as
// kube-proxy's nftables mode does, KEP-3866): `nft -f -` for full syncs (megabytes), and for the small
// ones of partial syncs (applySmall) one line to a long-lived `nft -i` (nft-session.ts), which spares a
// process start, nft's cache listing and the close() of its netlink socket per sync; texts nft -i cannot
// take as one line, or larger than 32 KiB, still go to `nft -f -`. Listing a table is for tests and
// clean-up only: the sync path never lists (at 10,000 Services a listing costs more than the sync).
import { errText } from '../api/err-text.js';
import { NftError, parseNftError } from './nft-error.js';
import { NftSession, oneLine } from './nft-session.js';
import { exitText, findProgram, runProgram, type ProgramResult, type ProgramSpawn } from './run-program.js';

export { NftError, parseNftError } from './nft-error.js';

/** The nftables families a proxy table lives in. */
export type NftFamily = 'ip' | 'ip6' | 'inet';

export interface NftRunner {
  /**
   * `nft -f -` with `text` on stdin: one atomic transaction, given whole or as pieces written one after
   * another (a whole-table write, never joined into one string). Rejects with NftError on failure.
   */
  apply(text: string | Iterable<string>, signal?: AbortSignal): Promise<void>;
  /**
   * A small transaction (a partial sync), as apply(): through the runner's long-lived `nft -i`
   * (nft-session.ts) when nft -i can take the text as one line and it is at most `sessionBytes` long,
   * else `nft -f -`. Rejects with NftError when nft refused it, naming the text's line as apply() does.
   */
  applySmall(text: string, signal?: AbortSignal): Promise<void>;
  /** Ends the runner's `nft -i`, if one runs (a later applySmall starts another). */
  close(): Promise<void>;
  /** `nft -c -f -`: parses and validates `text` against the kernel without committing it (tests). */
  validate(text: string, signal?: AbortSignal): Promise<void>;
  /**
   * `nft -j list table FAMILY NAME`, parsed: the `nftables` array of nft's JSON output, or undefined when
   * the table does not exist. For tests and clean-up only, never on the sync path.
   */
  listTable(family: NftFamily, name: string, signal?: AbortSignal): Promise<unknown[] | undefined>;
  /** `nft list ruleset` text (tests: "no trace left"). */
  listRuleset(signal?: AbortSignal): Promise<string>;
  /** `nft delete table FAMILY NAME`; false when there was no such table (not an error: already clean). */
  deleteTable(family: NftFamily, name: string, signal?: AbortSignal): Promise<boolean>;
  /** Whether nft exists and may be used here (`nft list tables` works). */
  check(): Promise<{ ok: true } | { ok: false; reason: string }>;
}

/** nft's answer when the table (or what a command names) does not exist. */
const notFound = (stderr: string): boolean => /No such file or directory/.test(stderr);

export interface NftRunnerOptions {
  /** The nft program; default: looked up on PATH, /usr/sbin and /sbin (scripts/ensure-deps.sh: NFT_BIN). */
  bin?: string;
  /** Runs nft through `ip netns exec <netns>` (tests, tools); the proxy runs inside its namespace. */
  netns?: string;
  /** Test seam: the process spawner (default node:child_process spawn). */
  spawn?: ProgramSpawn;
  /** The largest text (bytes) applySmall sends through `nft -i` (default SESSION_BYTES); 0: never. */
  sessionBytes?: number;
}

/**
 * applySmall's default limit. nft -i reads its input one byte per read(2): at 10,000 Services a one-element
 * change costs it ~8 ms against ~28 ms for `nft -f -`, but each kilobyte adds ~0.35 ms, and at ~32 KiB
 * (600 elements) both cost the same (docs/design/proxy-nftables.md).
 */
const SESSION_BYTES = 32 * 1024;

export function nftRunner(o: NftRunnerOptions = {}): NftRunner {
  const located = new Map<string, string | undefined>();
  // Looked up on first use, so building a runner never throws; check() reports what is missing.
  const locate = (name: string): string | undefined => {
    if (!located.has(name)) located.set(name, findProgram(name));
    return located.get(name);
  };
  const nftName = o.bin ?? 'nft';
  const argvOf = (args: readonly string[]): string[] => {
    const bin = (o.spawn === undefined ? locate(nftName) : undefined) ?? nftName;
    if (o.netns === undefined) return [bin, ...args];
    return [locate('ip') ?? 'ip', 'netns', 'exec', o.netns, bin, ...args];
  };

  const run = (
    argv: readonly string[],
    stdin: string | Iterable<string>,
    signal?: AbortSignal,
  ): Promise<ProgramResult> =>
    runProgram(argv, {
      stdin,
      signal,
      spawn: o.spawn,
      startError: (e) =>
        new NftError(argv, 'cannot start', `cannot run ${argv[0] ?? nftName}: ${e.message}`, undefined, {
          cause: e,
        }),
    });

  async function transaction(
    args: readonly string[],
    text: string | Iterable<string>,
    signal?: AbortSignal,
  ): Promise<void> {
    const argv = argvOf(args);
    const r = await run(argv, text, signal);
    if (r.code === 0) return;
    const parsed = parseNftError(r.stderr);
    // Pieces are read again (a whole-table write renders them again): only when nft named a line.
    const whole = typeof text === 'string' || parsed === undefined ? text : [...text].join('');
    const at =
      parsed === undefined
        ? undefined
        : { line: parsed.line, lineText: (whole as string).split('\n')[parsed.line - 1] };
    throw new NftError(argv, exitText(r), r.stderr, at);
  }

  async function output(args: readonly string[], signal?: AbortSignal): Promise<ProgramResult> {
    return run(argvOf(args), '', signal);
  }

  let session: NftSession | undefined;
  function applySmall(text: string, signal?: AbortSignal): Promise<void> {
    if (Buffer.byteLength(text) > (o.sessionBytes ?? SESSION_BYTES) || oneLine(text) === undefined)
      return transaction(['-f', '-'], text, signal);
    session ??= new NftSession({
      argv: argvOf(['-i']),
      ...(o.spawn === undefined ? {} : { spawn: o.spawn }),
    });
    return session.apply(text, signal);
  }

  const failed = (args: readonly string[], r: ProgramResult): NftError =>
    new NftError(argvOf(args), exitText(r), r.stderr);

  return {
    apply: (text, signal) => transaction(['-f', '-'], text, signal),
    applySmall,
    validate: (text, signal) => transaction(['-c', '-f', '-'], text, signal),

    async close() {
      const s = session;
      session = undefined;
      await s?.close();
    },

    async listTable(family, name, signal) {
      const args = ['-j', 'list', 'table', family, name];
      const r = await output(args, signal);
      if (r.code !== 0) {
        if (notFound(r.stderr)) return undefined;
        throw failed(args, r);
      }
      const parsed: unknown = JSON.parse(r.stdout);
      const items = (parsed as { nftables?: unknown } | null)?.nftables;
      if (!Array.isArray(items)) throw new NftError(argvOf(args), 'exit 0', 'output has no "nftables" array');
      return items as unknown[];
    },

    async listRuleset(signal) {
      const args = ['list', 'ruleset'];
      const r = await output(args, signal);
      if (r.code !== 0) throw failed(args, r);
      return r.stdout;
    },

    async deleteTable(family, name, signal) {
      const args = ['delete', 'table', family, name];
      const r = await output(args, signal);
      if (r.code === 0) return true;
      if (notFound(r.stderr)) return false;
      throw failed(args, r);
    },

    async check() {
      if (o.spawn === undefined && locate(nftName) === undefined)
        return {
          ok: false,
          reason: `${nftName} not found (searched PATH, /usr/sbin, /sbin; Debian package nftables, scripts/ensure-deps.sh installs it)`,
        };
      if (o.netns !== undefined && o.spawn === undefined && locate('ip') === undefined)
        return { ok: false, reason: 'ip (iproute2) not found' };
      const args = ['list', 'tables'];
      try {
        const r = await output(args);
        if (r.code !== 0) return { ok: false, reason: failed(args, r).message };
      } catch (e) {
        return { ok: false, reason: errText(e) };
      }
      return { ok: true };
    },
  };
}
