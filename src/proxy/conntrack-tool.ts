// The conntrack program (Debian's conntrack package): what the proxy modes run to delete the UDP flows
// that would keep going to a removed endpoint (core/proxy/conntrack.ts decides which). Run in the current
// network namespace, or through `ip netns exec` for tests and tools.
import { findProgram, runProgram } from './run-program.js';

export interface ConntrackTool {
  /** Whether `conntrack` is here. */
  hasConntrack(): boolean;
  /** `conntrack ARGS` (a -D); "0 flow entries have been deleted" (exit 1) is success. */
  conntrack(args: readonly string[], signal?: AbortSignal): Promise<void>;
}

/** conntrack failed: its argv, exit code and error output. */
export class ConntrackError extends Error {
  constructor(
    readonly argv: readonly string[],
    readonly code: number | null,
    readonly stderr: string,
    options?: { cause: unknown },
  ) {
    super(
      `${argv.join(' ')} failed (exit ${code ?? 'none'}): ${stderr.trim().split('\n')[0] ?? ''}`,
      options,
    );
    this.name = 'ConntrackError';
  }
}

export function conntrackTool(o: { bin?: string; netns?: string } = {}): ConntrackTool {
  let located: { path: string | undefined } | undefined;
  const locate = (): string | undefined => (located ??= { path: findProgram(o.bin ?? 'conntrack') }).path;
  return {
    hasConntrack: () => locate() !== undefined,
    async conntrack(args, signal) {
      const bin = locate() ?? o.bin ?? 'conntrack';
      const argv =
        o.netns === undefined
          ? [bin, ...args]
          : [findProgram('ip') ?? 'ip', 'netns', 'exec', o.netns, bin, ...args];
      const r = await runProgram(argv, {
        signal,
        startError: (e) => new ConntrackError(argv, null, `cannot run ${bin}: ${e.message}`, { cause: e }),
      });
      if (r.code === 0 || (r.code === 1 && /0 flow entries/.test(r.stderr))) return;
      throw new ConntrackError(argv, r.code, r.stderr);
    },
  };
}
