// The I/O shell around iptables for the node proxy: it runs iptables-restore, iptables-save and iptables
// in the current network namespace (the proxy runs inside its node's namespace). What to write is decided
// by the pure renderer (src/core/proxy/iptables.ts); this file only runs the programs and reports their
// failures precisely. It behaves like kube-proxy's pkg/util/iptables runner: restores use
// `--noflush --wait` (one atomic transaction per table), jump rules are checked with -C and prepended
// with -I, and "already exists" / "does not exist" answers are not errors where they mean "done".
import { failedLine } from '../core/proxy/iptables.js';
import { errText } from '../api/err-text.js';
import { conntrackTool, type ConntrackTool } from './conntrack-tool.js';
import { exitText, findProgram, runProgram, type ProgramResult } from './run-program.js';

export type IptablesTable = 'nat' | 'filter';

export interface IptablesRunner extends ConntrackTool {
  /** `iptables-restore --noflush --wait` (or ip6tables-restore) with `text` on stdin. Rejects with RestoreError(line, lineText, stderr) on failure. */
  restore(text: string, signal?: AbortSignal): Promise<void>;
  /** `iptables-save -t <table>` output. */
  save(table: IptablesTable, signal?: AbortSignal): Promise<string>;
  /**
   * Ensures a rule exists: `iptables -w -t T -C CHAIN args` and, if missing, `-I CHAIN args` (prepend, as
   * kube-proxy does for its jumps). When `target` is given, that chain is created first (`-N`, ignoring
   * "already exists"), so a jump to it can be added.
   */
  ensureRule(table: IptablesTable, chain: string, args: readonly string[], target?: string): Promise<void>;
  /** Deletes the rule if present (`-C`, then `-D`, ignoring "does not exist"). */
  deleteRule(table: IptablesTable, chain: string, args: readonly string[]): Promise<void>;
  /** Whether the binaries exist and we may use them (`iptables -w -t nat -S` and `iptables-save -t nat` work). */
  check(): Promise<{ ok: true } | { ok: false; reason: string }>;
  /** The conntrack program, for the UDP flow clean-up (conntrack-tool.ts). */
}

/** iptables-restore failed: the input line it names (1-based) and its text, when stderr names one. */
export class RestoreError extends Error {
  readonly line: number | undefined;
  readonly lineText: string | undefined;
  readonly stderr: string;
  constructor(
    program: string,
    line: number | undefined,
    lineText: string | undefined,
    stderr: string,
    /** How it ended, e.g. "exit 1" or "signal SIGKILL": the only clue when stderr is empty. */
    exit?: string,
  ) {
    const where =
      line === undefined ? '' : ` at line ${line}${lineText === undefined ? '' : `: ${lineText}`}`;
    const how = exit === undefined ? '' : `${exit}: `;
    super(`${program} failed${where} (${how}${firstLine(stderr) || 'no error output'})`);
    this.name = 'RestoreError';
    this.line = line;
    this.lineText = lineText;
    this.stderr = stderr;
  }
}

/** A program exited non-zero (or could not start). */
export class IptablesExecError extends Error {
  readonly argv: readonly string[];
  readonly code: number | null;
  readonly stderr: string;
  constructor(argv: readonly string[], code: number | null, stderr: string, options?: { cause: unknown }) {
    super(`${argv.join(' ')}: exit ${code ?? 'signal'}: ${firstLine(stderr) || 'no error output'}`, options);
    this.name = 'IptablesExecError';
    this.argv = argv;
    this.code = code;
    this.stderr = stderr;
  }
}

export interface IptablesRunnerOptions {
  family: 4 | 6;
  /** Explicit program paths; each missing one is looked up on PATH, /usr/sbin and /sbin. */
  bin?: { restore?: string; save?: string; iptables?: string; conntrack?: string };
  /**
   * Runs every program through `ip netns exec <netns>`: for tests and tools that drive a namespace from
   * outside. The proxy itself runs inside its namespace and leaves this unset.
   */
  netns?: string;
}

const firstLine = (s: string): string => s.trim().split('\n')[0] ?? '';

/** The input line iptables-restore names in its error output (core/proxy's parser, every format seen). */
export const parseRestoreErrorLine = failedLine;

/**
 * How long to wait for the xtables lock, in seconds, as kube-proxy does (`-w 5`): a holder that never lets
 * go fails the sync (and the next one retries) instead of freezing the loop.
 */
const WAIT = ['--wait', '5'];

export function iptablesRunner(o: IptablesRunnerOptions): IptablesRunner {
  const prefix = o.family === 6 ? 'ip6tables' : 'iptables';
  const names = {
    iptables: prefix,
    restore: `${prefix}-restore`,
    save: `${prefix}-save`,
  } as const;
  const conntrack = conntrackTool({
    ...(o.bin?.conntrack !== undefined ? { bin: o.bin.conntrack } : {}),
    ...(o.netns !== undefined ? { netns: o.netns } : {}),
  });
  type Program = keyof typeof names;
  const resolved = new Map<Program | 'ip', string | undefined>();

  // Looked up on first use, so building a runner never throws; check() reports what is missing.
  const locate = (p: Program | 'ip'): string | undefined => {
    if (!resolved.has(p)) resolved.set(p, findProgram(p === 'ip' ? 'ip' : (o.bin?.[p] ?? names[p])));
    return resolved.get(p);
  };
  const argvOf = (p: Program, args: readonly string[]): string[] => {
    const bin = locate(p) ?? o.bin?.[p] ?? names[p];
    if (o.netns === undefined) return [bin, ...args];
    return [locate('ip') ?? 'ip', 'netns', 'exec', o.netns, bin, ...args];
  };

  const run = (
    p: Program,
    args: readonly string[],
    stdin?: string,
    signal?: AbortSignal,
  ): Promise<ProgramResult> => {
    const argv = argvOf(p, args);
    return runProgram(argv, {
      ...(stdin === undefined ? {} : { stdin }),
      signal,
      startError: (e) =>
        new IptablesExecError(argv, null, `cannot run ${argv[0] ?? names[p]}: ${e.message}`, { cause: e }),
    });
  };

  async function runOk(p: Program, args: readonly string[], signal?: AbortSignal): Promise<string> {
    const r = await run(p, args, undefined, signal);
    if (r.code !== 0) throw new IptablesExecError(argvOf(p, args), r.code, r.stderr);
    return r.stdout;
  }

  // kube-proxy's IsNotFoundError: the answers that mean "the rule or chain is not there".
  const notFound = (stderr: string): boolean =>
    /does a matching rule exist|No chain\/target\/match by that name|does not exist/.test(stderr);

  // -C: exit 0 = present, 1 = absent; on nf_tables a missing chain (or jump target) exits 2 with "does
  // not exist", which is absent too. Anything else is a real error.
  async function exists(table: IptablesTable, chain: string, args: readonly string[]): Promise<boolean> {
    const cmd = [...WAIT, '-t', table, '-C', chain, ...args];
    const r = await run('iptables', cmd);
    if (r.code === 0) return true;
    if (r.code === 1 || notFound(r.stderr)) return false;
    throw new IptablesExecError(argvOf('iptables', cmd), r.code, r.stderr);
  }

  return {
    async restore(text, signal) {
      const r = await run('restore', ['--noflush', ...WAIT], text, signal);
      if (r.code === 0) return;
      const line = parseRestoreErrorLine(r.stderr);
      const lineText = line === undefined ? undefined : text.split('\n')[line - 1];
      throw new RestoreError(names.restore, line, lineText, r.stderr, exitText(r));
    },

    save(table, signal) {
      return runOk('save', ['-t', table], signal);
    },

    async ensureRule(table, chain, args, target) {
      if (target !== undefined) {
        const cmd = [...WAIT, '-t', table, '-N', target];
        const r = await run('iptables', cmd);
        if (r.code !== 0 && !/already exists/i.test(r.stderr)) {
          throw new IptablesExecError(argvOf('iptables', cmd), r.code, r.stderr);
        }
      }
      if (await exists(table, chain, args)) return;
      await runOk('iptables', [...WAIT, '-t', table, '-I', chain, ...args]);
    },

    async deleteRule(table, chain, args) {
      if (!(await exists(table, chain, args))) return;
      const cmd = [...WAIT, '-t', table, '-D', chain, ...args];
      const r = await run('iptables', cmd);
      if (r.code !== 0 && !notFound(r.stderr))
        throw new IptablesExecError(argvOf('iptables', cmd), r.code, r.stderr);
    },

    hasConntrack: () => conntrack.hasConntrack(),
    conntrack: (args, signal) => conntrack.conntrack(args, signal),

    async check() {
      const missing = (['iptables', 'restore', 'save'] as const).filter((p) => locate(p) === undefined);
      if (o.netns !== undefined && locate('ip') === undefined)
        return { ok: false, reason: 'ip (iproute2) not found' };
      if (missing.length > 0) {
        const which = missing.map((p) => o.bin?.[p] ?? names[p]).join(', ');
        return {
          ok: false,
          reason: `${which} not found (searched PATH, /usr/sbin, /sbin; Debian package iptables)`,
        };
      }
      try {
        await runOk('iptables', [...WAIT, '-t', 'nat', '-S']);
        await runOk('save', ['-t', 'nat']);
      } catch (e) {
        return { ok: false, reason: errText(e) };
      }
      return { ok: true };
    },
  };
}
