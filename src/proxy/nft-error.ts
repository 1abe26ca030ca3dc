// The nft runner's error: which nft command line failed, how it ended, and, when nft's error names it,
// the line of the input it refused (nft-runner.ts, nft-session.ts).
/**
 * nft failed. When its error names an input line (`/dev/stdin:LINE:COL-COL: Error: ...`), `line` is that
 * 1-based line and `lineText` its text in what was sent; `stderr` is nft's whole error output.
 */
export class NftError extends Error {
  readonly argv: readonly string[];
  readonly line: number | undefined;
  readonly lineText: string | undefined;
  readonly stderr: string;
  constructor(
    argv: readonly string[],
    /** How it ended, e.g. "exit 1", "signal SIGKILL" or "cannot start": the only clue when stderr is empty. */
    exit: string,
    stderr: string,
    at?: { line: number; lineText: string | undefined },
    options?: { cause: unknown },
  ) {
    const where =
      at === undefined
        ? ''
        : ` at line ${at.line}${at.lineText === undefined ? '' : `: ${at.lineText.trim()}`}`;
    const why = parseNftError(stderr)?.message ?? firstLine(stderr);
    super(`${argv.join(' ')} failed${where} (${exit}: ${why || 'no error output'})`, options);
    this.name = 'NftError';
    this.argv = argv;
    this.line = at?.line;
    this.lineText = at?.lineText;
    this.stderr = stderr;
  }
}

const firstLine = (s: string): string => s.trim().split('\n')[0] ?? '';

/**
 * The first error nft reports against its input: `<file>:LINE:COL[-COL]: Error: MESSAGE` (a parse error,
 * or a kernel refusal nft maps back to the command), or undefined when stderr names no line.
 */
export function parseNftError(stderr: string): { line: number; message: string } | undefined {
  const m = /^[^\n]*?:(\d+):\d+(?:-\d+)?: Error: ([^\n]*)$/m.exec(stderr);
  if (m === null) return undefined;
  const line = Number(m[1]);
  return Number.isSafeInteger(line) && line > 0 ? { line, message: (m[2] ?? '').trim() } : undefined;
}
