// Running the data plane's programs (iptables-restore, nft, conntrack ...): finding them where a
// non-login shell's PATH may not look, and running one with text on stdin, collecting what it printed and
// how it ended. The runners (iptables-runner.ts, nft-runner.ts) turn a result into their own errors.
import { spawn as nodeSpawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Directories searched for a program: PATH, then the sbin directories non-login shells often lack. */
function searchDirs(): string[] {
  const fromPath = (process.env['PATH'] ?? '').split(path.delimiter).filter((d) => d !== '');
  return [...new Set([...fromPath, '/usr/sbin', '/sbin', '/usr/bin', '/bin'])];
}

/** The absolute path of an executable `name` (or `name` itself when it has a slash and is one), or undefined. */
export function findProgram(name: string): string | undefined {
  const candidates = name.includes('/') ? [name] : searchDirs().map((dir) => path.join(dir, name));
  for (const p of candidates) {
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface ProgramResult {
  code: number | null;
  /** The signal that ended the program, when one did (code is then null). */
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** "exit 1", "signal SIGKILL": how a program ended, for error messages. */
export const exitText = (r: Pick<ProgramResult, 'code' | 'signal'>): string =>
  r.code === null ? `signal ${r.signal ?? 'unknown'}` : `exit ${r.code}`;

/** The part of a child process the runners use. */
export interface ProgramChild {
  stdin: NodeJS.WritableStream & { on(event: 'error', cb: (e: Error) => void): unknown };
  stdout: NodeJS.ReadableStream;
  stderr: NodeJS.ReadableStream;
  on(event: 'error', cb: (e: Error) => void): unknown;
  on(event: 'close', cb: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
  kill(signal?: NodeJS.Signals): boolean;
}

/** The part of child_process.spawn the runners use; tests pass a fake. */
export type ProgramSpawn = (
  command: string,
  args: readonly string[],
  options: { stdio: ['pipe', 'pipe', 'pipe']; signal?: AbortSignal },
) => ProgramChild;

/**
 * Runs `argv` with `stdin` on its standard input and resolves with what it printed and how it ended,
 * whatever its exit status. Rejects with the signal's reason when `signal` aborts, and with
 * `startError(e)` when the program cannot start.
 */
export function runProgram(
  argv: readonly string[],
  o: {
    /** One string, or its pieces in order (a whole-table write, read as it is written, never joined). */
    stdin?: string | Iterable<string>;
    signal?: AbortSignal | undefined;
    spawn?: ProgramSpawn | undefined;
    startError: (e: Error) => Error;
  },
): Promise<ProgramResult> {
  const { signal } = o;
  const spawn: ProgramSpawn = o.spawn ?? nodeSpawn;
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason);
      return;
    }
    const [cmd = '', ...args] = argv;
    const child = spawn(cmd, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(signal === undefined ? {} : { signal }),
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    // The program may exit before reading all its input (a parse error); its exit status tells why.
    child.stdin.on('error', () => {});
    child.on('error', (e) => {
      if (signal?.aborted === true) reject(signal.reason);
      else reject(o.startError(e));
    });
    child.on('close', (code, exitSignal) => {
      // Usually already rejected through 'error'; not when the abort came after the program exited.
      if (signal?.aborted === true) {
        reject(signal.reason);
        return;
      }
      resolve({
        code,
        signal: exitSignal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    writeInput(child.stdin, o.stdin ?? '');
  });
}

/** How much of a program's input is handed to its pipe at once (UTF-16 code units). */
const INPUT_CHUNK = 1 << 20;

/**
 * Writes `input` (a text, or a text's pieces) to a program's stdin a piece at a time, each when the pipe has taken the one before: a
 * full sync's input (tens of megabytes) is then never held a second time as one encoded buffer beside
 * the string. A piece never ends between the two halves of a surrogate pair.
 */
function writeInput(stdin: NodeJS.WritableStream, input: string | Iterable<string>): void {
  const texts = (typeof input === 'string' ? [input] : input)[Symbol.iterator]();
  let text = '';
  let at = 0;
  const more = (): void => {
    for (;;) {
      if (!writeText(text)) return;
      const next = texts.next();
      if (next.done === true) break;
      text = next.value;
      at = 0;
    }
    stdin.end();
  };
  /** Writes the rest of `text` from `at`; false when the pipe asked to wait (more() goes on at its drain). */
  const writeText = (text: string): boolean => {
    while (at < text.length) {
      let end = Math.min(text.length, at + INPUT_CHUNK);
      const last = text.charCodeAt(end - 1);
      if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
      const piece = text.slice(at, end);
      at = end;
      if (!stdin.write(piece)) {
        stdin.once('drain', more);
        return false;
      }
    }
    return true;
  };
  more();
}
