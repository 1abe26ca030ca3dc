// One long-lived `nft -i` for the nftables proxy mode's small transactions (partial syncs). Running
// `nft -f -` costs a process start, nft's cache listing and, mostly, the kernel's close() of nft's netlink
// socket (it waits for RCU): tens of milliseconds of wall time for a one-element change that needs about
// one millisecond of CPU. Kept running, nft pays those once; it re-reads its cache by itself when another
// writer changed the ruleset (the ruleset generation moved).
//
// The protocol (docs/design/proxy-nftables.md, "A persistent nft for partial syncs"):
// - nft -i reads its input line by line, and each line is one transaction: the text's commands are sent
//   joined with "; " as ONE line, which the kernel commits whole or not at all.
// - A line that succeeds prints nothing. So each transaction is followed by a marker line that is not a
//   command (`svcplane-ack-N`): nft answers it with an error that echoes the marker and a caret line, and
//   whatever came before that answer is the transaction's output (nft's errors, if it refused it).
// - stderr is merged into stdout (through sh) so that one ordered stream tells what belongs to what.
// - A refused line's error echoes the line with a caret under the failing command; the caret's column
//   says which of the text's commands nft refused, and the error is rewritten as if that command had been
//   sent alone, so an NftError names the line of the original text as `nft -f -` would.
import { spawn as nodeSpawn } from 'node:child_process';
import { NftError } from './nft-error.js';
import { exitText, findProgram, type ProgramChild, type ProgramSpawn } from './run-program.js';

/** One command of a text sent to nft -i as one line: where it is in the text and in the line. */
interface Command {
  /** Its 1-based line in the original text. */
  readonly line: number;
  readonly text: string;
  /** Its first column in the joined line. */
  readonly start: number;
}

/** A text as the one line nft -i takes for it. */
export interface OneLine {
  readonly line: string;
  readonly commands: readonly Command[];
}

const SEPARATOR = '; ';

/**
 * The text's commands (one per line, as the renderer writes for `nft -f -`) as one line nft -i commits
 * atomically; undefined when nft -i could not take the text that way: a comment (`#`), a command spread
 * over several lines (a `{` closed on a later line), a definition (which would outlive the transaction in
 * an interactive session), an include, a line ending in `\` (nft -i would join the next line to it), or no
 * command at all.
 */
export function oneLine(text: string): OneLine | undefined {
  if (text.includes('#') || text.includes('\r')) return undefined;
  const commands: Command[] = [];
  let start = 0;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i] ?? '';
    if (t.trim() === '') continue;
    if (!bracesClose(t) || t.endsWith('\\') || /^\s*(?:define|redefine|undefine|include)\b/.test(t))
      return undefined;
    commands.push({ line: i + 1, text: t, start });
    start += t.length + SEPARATOR.length;
  }
  if (commands.length === 0) return undefined;
  return { line: commands.map((c) => c.text).join(SEPARATOR), commands };
}

/** Whether every `{` of the line (outside quoted strings) is closed on it. */
function bracesClose(line: string): boolean {
  let depth = 0;
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '{') depth++;
    else if (!quoted && ch === '}' && --depth < 0) return false;
  }
  return depth === 0 && !quoted;
}

const CARET = /^[ \t]*\^+[ \t]*$/;

/**
 * nft's output for a refused line, each error that echoes `sent` rewritten to echo the command its caret
 * points at (the caret moved with it); and that command, for the first such error.
 */
export function mapErrors(output: string, sent: OneLine): { stderr: string; at: Command | undefined } {
  const lines = output.split('\n');
  let at: Command | undefined;
  for (let i = 0; i + 1 < lines.length; i++) {
    const caret = lines[i + 1] ?? '';
    if (lines[i] !== sent.line || !CARET.test(caret)) continue;
    const col = caret.indexOf('^');
    const width = caret.lastIndexOf('^') + 1 - col;
    const cmd = sent.commands.findLast((c) => c.start <= col) ?? sent.commands[0]!;
    const from = Math.min(col, cmd.start + cmd.text.length);
    lines[i] = cmd.text;
    lines[i + 1] =
      caret.slice(cmd.start, from) +
      '^'.repeat(Math.max(1, Math.min(width, cmd.text.length - (from - cmd.start))));
    at ??= cmd;
  }
  return { stderr: lines.join('\n'), at };
}

export interface NftSessionOptions {
  /** The nft command line, `-i` included (`nft -i`, or `ip netns exec NS nft -i`); it runs under `sh`. */
  readonly argv: readonly string[];
  /** Test seam: the process spawner (default node:child_process spawn). */
  readonly spawn?: ProgramSpawn;
  /** How long close() waits for nft to exit after end of input before killing it (default 2 s). */
  readonly graceMs?: number;
  /** After how many bytes sent an nft is ended and the next transaction starts another (default 4 MiB). */
  readonly renewBytes?: number;
}

/**
 * nft -i keeps every line it read in its (unbounded) line-editing history, so one nft takes this many
 * bytes of transactions; the next transaction starts a new one. A start costs what one `nft -f -` does.
 */
const RENEW_BYTES = 4 * 1024 * 1024;

interface Pending {
  readonly marker: string;
  readonly sent: OneLine;
  done(output: string[]): void;
  died(err: NftError): void;
}

/** One running nft -i: its output since the last marker, and the transaction waiting for its marker. */
interface Proc {
  readonly child: ProgramChild;
  readonly exited: Promise<void>;
  output: string[];
  partial: string;
  pending: Pending | undefined;
  /** Bytes written to it. */
  sent: number;
}

/**
 * A long-lived `nft -i`, started on first use and again after it died. apply() runs one transaction at a
 * time (a queue). While idle, the process does not keep Node's event loop alive; it ends at close(), or
 * when this process exits (end of its input).
 */
export class NftSession {
  private proc: Proc | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private seq = 0;

  constructor(private readonly o: NftSessionOptions) {}

  /**
   * Commits `text` (commands one per line, as for `nft -f -`; see oneLine for what is refused with a
   * TypeError) as one transaction. Rejects with an NftError when nft refused it (nothing was applied) or
   * when nft died or could not start; with the signal's reason when aborted (nft is then killed, and the
   * transaction may or may not have been committed).
   */
  apply(text: string, signal?: AbortSignal): Promise<void> {
    const sent = oneLine(text);
    if (sent === undefined) return Promise.reject(new TypeError('nft -i cannot take this text as one line'));
    const run = this.tail.then(() => this.transact(sent, signal));
    this.tail = run.catch(() => {});
    return run;
  }

  /** Ends nft: end of input, then SIGKILL if it has not exited within the grace period. */
  async close(): Promise<void> {
    const p = this.proc;
    if (p === undefined) return;
    this.proc = undefined;
    setRef(p.child, true);
    p.child.stdin.end();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        p.child.kill('SIGKILL');
        resolve();
      }, this.o.graceMs ?? 2000);
      timer.unref();
    });
    await Promise.race([p.exited, grace]);
    clearTimeout(timer);
  }

  private async transact(sent: OneLine, signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    if ((this.proc?.sent ?? 0) >= (this.o.renewBytes ?? RENEW_BYTES)) {
      await this.close();
      signal?.throwIfAborted();
    }
    const p = this.proc ?? (this.proc = this.start());
    const marker = `svcplane-ack-${++this.seq}`;
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        settle();
        if (this.proc === p) this.proc = undefined;
        p.child.kill('SIGKILL');
        reject(signal?.reason);
      };
      const settle = (): void => {
        p.pending = undefined;
        signal?.removeEventListener('abort', onAbort);
        setRef(p.child, false);
      };
      p.pending = {
        marker,
        sent,
        done: (output) => {
          settle();
          if (!output.some((l) => /^(?:\S*: )?Error: /.test(l))) {
            resolve();
            return;
          }
          const { stderr, at } = mapErrors(output.join('\n') + '\n', sent);
          reject(
            new NftError(
              this.o.argv,
              'refused',
              stderr,
              at === undefined ? undefined : { line: at.line, lineText: at.text },
            ),
          );
        },
        died: (err) => {
          settle();
          reject(err);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      setRef(p.child, true);
      const input = `${sent.line}\n${marker}\n`;
      p.sent += input.length;
      p.child.stdin.write(input);
    });
  }

  private start(): Proc {
    const spawn: ProgramSpawn = this.o.spawn ?? nodeSpawn;
    const sh = findProgram('sh') ?? '/bin/sh';
    // One ordered stream: nft's errors and the marker's answer, in the order nft wrote them. HOME is no
    // directory: nft -i would write every line it read to $HOME/.nft.history when it exits.
    const child = spawn(sh, ['-c', 'HOME=/dev/null; export HOME; exec "$0" "$@" 2>&1', ...this.o.argv], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let exited!: () => void;
    const p: Proc = {
      child,
      exited: new Promise<void>((r) => (exited = r)),
      output: [],
      partial: '',
      pending: undefined,
      sent: 0,
    };
    const ended = (exit: string, why: string, cause?: Error): void => {
      if (this.proc === p) this.proc = undefined;
      const pending = p.pending;
      if (pending === undefined) return;
      const said = [...p.output, p.partial].join('\n').trim();
      pending.died(
        new NftError(this.o.argv, exit, said === '' ? why : `${said}\n`, undefined, cause && { cause }),
      );
    };
    child.stdout.on('data', (b: Buffer) => {
      const parts = (p.partial + b.toString('utf8')).split('\n');
      p.partial = parts.pop() ?? '';
      for (const line of parts) {
        p.output.push(line);
        const n = p.output.length;
        const pending = p.pending;
        if (pending === undefined || n < 2 || p.output[n - 2] !== pending.marker || !CARET.test(line))
          continue;
        // The marker's own error ("Error: …" just before its echo) is not the transaction's.
        const answer = /Error: /.test(p.output[n - 3] ?? '') ? n - 3 : n - 2;
        const output = p.output.slice(0, answer);
        p.output = [];
        pending.done(output);
      }
      if (p.pending === undefined) p.output = [];
    });
    child.stderr.resume();
    child.stdin.on('error', () => {}); // nft died: 'close' says how
    child.on('error', (e) => ended('cannot start', `cannot run ${this.o.argv[0] ?? 'nft'}: ${e.message}`, e));
    child.on('close', (code, sig) => {
      ended(exitText({ code, signal: sig }), 'nft -i exited');
      exited();
    });
    setRef(child, false);
    return p;
  }
}

/**
 * Lets an idle nft (and its pipes) not keep the event loop alive; a pending transaction does. (Its stderr
 * pipe is closed at once: sh hands nft stdout as stderr.)
 */
function setRef(child: ProgramChild, on: boolean): void {
  for (const h of [child, child.stdin, child.stdout] as unknown as {
    ref?: () => void;
    unref?: () => void;
    destroyed?: boolean;
  }[])
    if (h.destroyed === true) continue;
    else if (on) h.ref?.();
    else h.unref?.();
}
