// The demo's child processes: each `svcplane` component it starts, with its output in a log file and
// a way to wait for the line a component prints when it is ready.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';

export class Proc {
  readonly child: ChildProcess;
  private readonly log: WriteStream;
  private out = '';
  private exited: Promise<number | null>;

  constructor(
    readonly name: string,
    argv: readonly string[],
    logDir: string,
  ) {
    this.log = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
    this.child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (d: Buffer) => {
      this.out += d.toString();
      this.log.write(d);
    });
    this.child.stderr!.on('data', (d: Buffer) => this.log.write(d));
    this.exited = new Promise((resolve) => this.child.once('exit', (code) => resolve(code)));
    this.child.once('error', (err) => this.log.write(`spawn failed: ${err.message}\n`));
  }

  /** Resolves with the first stdout match of `re`; rejects if the process exits or `ms` pass first. */
  async waitFor(re: RegExp, ms: number): Promise<RegExpExecArray> {
    const deadline = Date.now() + ms;
    for (;;) {
      const m = re.exec(this.out);
      if (m !== null) return m;
      if (this.child.exitCode !== null || this.child.signalCode !== null)
        throw new Error(
          `${this.name} exited (${this.child.exitCode ?? this.child.signalCode}) before it was ready`,
        );
      if (Date.now() > deadline) throw new Error(`${this.name} was not ready within ${ms / 1000} s`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGTERM');
      const t = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
      await this.exited;
      clearTimeout(t);
    }
    await new Promise<void>((r) => this.log.end(r));
  }
}

/** Stops processes in reverse start order. */
export async function stopAll(procs: Proc[]): Promise<void> {
  for (const p of [...procs].reverse()) await p.stop().catch(() => undefined);
}
