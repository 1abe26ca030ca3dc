// The nft runner's long-lived `nft -i` (nft-session.ts, NftRunner.applySmall) against a fake nft that
// answers line by line as nft 1.0.6 does: no nft, no root needed. The real program runs in
// test/e2e/proxy-nft-session.test.ts.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { NftError, nftRunner } from './nft-runner.js';
import { mapErrors, NftSession, oneLine } from './nft-session.js';
import type { ProgramSpawn } from './run-program.js';

/** What the fake nft -i does with a transaction line: print this (nothing: success), die, or wait. */
type Answer = string | { exit: number } | { wait: Promise<string> };

interface Fake {
  spawn: ProgramSpawn;
  /** Each process started: its argv, the lines it read, whether it was killed or saw end of input. */
  procs: { argv: string[]; lines: string[]; killed: boolean; eof: boolean }[];
  /** What `nft -f -` calls read. */
  files: string[];
}

/** nft's answer to a marker line: an error echoing it, and a caret line. */
const markerAnswer = (m: string): string =>
  `Error: syntax error, unexpected newline, expecting string\n${m}\n${' '.repeat(m.length)}^\n`;

function fakeNft(answer: (line: string) => Answer = () => ''): Fake {
  const f: Fake = { procs: [], files: [], spawn: undefined! };
  f.spawn = (cmd, args) => {
    const child = new EventEmitter() as EventEmitter & {
      stdin: PassThrough;
      stdout: PassThrough;
      stderr: PassThrough;
      kill: (s?: NodeJS.Signals) => boolean;
    };
    child.stdin = new PassThrough();
    child.stdout = new PassThrough();
    child.stderr = new PassThrough();
    let ended = false;
    const exit = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (ended) return;
      ended = true;
      child.stdout.end();
      setImmediate(() => child.emit('close', code, signal));
    };
    const argv = [cmd, ...args];
    if (!argv.includes('-i')) {
      // `nft -f -`: reads everything, succeeds.
      const input: Buffer[] = [];
      child.stdin.on('data', (b: Buffer) => input.push(b));
      child.stdin.on('end', () => {
        f.files.push(Buffer.concat(input).toString('utf8'));
        exit(0, null);
      });
      child.kill = () => true;
      return child;
    }
    const proc = { argv, lines: [] as string[], killed: false, eof: false };
    f.procs.push(proc);
    child.kill = (s) => {
      proc.killed = true;
      exit(null, s ?? 'SIGTERM');
      return true;
    };
    // nft -i handles one line at a time: a line waiting for its answer holds up the next.
    let queue = Promise.resolve();
    let partial = '';
    child.stdin.on('data', (b: Buffer) => {
      const parts = (partial + b.toString('utf8')).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts)
        queue = queue.then(async () => {
          if (ended) return;
          proc.lines.push(line);
          if (/^svcplane-ack-\d+$/.test(line)) {
            child.stdout.write(markerAnswer(line));
            return;
          }
          const a = answer(line);
          if (typeof a === 'string') child.stdout.write(a);
          else if ('exit' in a) exit(a.exit, null);
          else if (!ended) child.stdout.write(await a.wait);
        });
    });
    child.stdin.on('end', () => {
      proc.eof = true;
      void queue.then(() => exit(0, null));
    });
    return child;
  };
  return f;
}

/** The transaction lines a process read (markers left out). */
const transactions = (p: { lines: string[] }): string[] =>
  p.lines.filter((l) => !l.startsWith('svcplane-ack-'));

const TEXT = [
  'add element ip svcplane service-ips { 10.96.0.11 . tcp . 80 : goto service-a }',
  '',
  'flush chain ip svcplane service-a',
  'delete element ip svcplane service-ips { 10.96.0.99 . tcp . 80 }',
  '',
].join('\n');
const LINE = [
  'add element ip svcplane service-ips { 10.96.0.11 . tcp . 80 : goto service-a }',
  'flush chain ip svcplane service-a',
  'delete element ip svcplane service-ips { 10.96.0.99 . tcp . 80 }',
].join('; ');

describe('oneLine and mapErrors', () => {
  it('joins the commands, keeping their lines; refuses what nft -i cannot take as one line', () => {
    const l = oneLine(TEXT);
    assert.equal(l?.line, LINE);
    assert.deepEqual(
      l?.commands.map((c) => [c.line, c.start]),
      [
        [1, 0],
        [3, LINE.indexOf('flush')],
        [4, LINE.indexOf('delete')],
      ],
    );
    assert.equal(oneLine('add rule ip t c counter # why\n'), undefined);
    assert.equal(oneLine('table ip t {\n  chain c {\n  }\n}\n'), undefined);
    assert.equal(oneLine('define x = 1\nadd rule ip t c ip daddr $x\n'), undefined);
    assert.equal(oneLine('\n\n'), undefined);
    assert.equal(oneLine('add rule ip t c \\\ncounter\n'), undefined);
    // Braces inside a quoted string do not count.
    assert.equal(
      oneLine('add rule ip t c counter comment "{"\n')?.line,
      'add rule ip t c counter comment "{"',
    );
  });

  it('rewrites each error echoing the line to echo the command its caret points at', () => {
    const sent = oneLine(TEXT)!;
    const caret = (col: number, n: number): string => ' '.repeat(col) + '^'.repeat(n);
    const out = [
      'Error: Could not process rule: No such file or directory',
      LINE,
      caret(LINE.indexOf('delete') + 38, 11),
      'Error: something else',
      LINE,
      caret(LINE.indexOf('flush') + 6, 5),
      '',
    ].join('\n');
    const { stderr, at } = mapErrors(out, sent);
    assert.equal(at?.line, 4);
    assert.equal(
      stderr,
      [
        'Error: Could not process rule: No such file or directory',
        'delete element ip svcplane service-ips { 10.96.0.99 . tcp . 80 }',
        `${' '.repeat(38)}^^^^^^^^^^^`,
        'Error: something else',
        'flush chain ip svcplane service-a',
        '      ^^^^^',
        '',
      ].join('\n'),
    );
  });
});

describe('NftRunner.applySmall through nft -i (fake nft)', () => {
  it('sends the text as one line to one nft -i, stderr merged into stdout, and resolves on silence', async () => {
    const f = fakeNft();
    const runner = nftRunner({ spawn: f.spawn, netns: 'ns1', bin: '/x/nft' });
    await runner.applySmall(TEXT);
    await runner.applySmall('add rule ip svcplane service-a counter\n');
    assert.equal(f.procs.length, 1, 'one process for both');
    const argv = f.procs[0]!.argv;
    assert.deepEqual(argv.slice(1, 3), ['-c', 'HOME=/dev/null; export HOME; exec "$0" "$@" 2>&1']);
    assert.deepEqual(argv.slice(-5), ['netns', 'exec', 'ns1', '/x/nft', '-i']);
    assert.deepEqual(transactions(f.procs[0]!), [LINE, 'add rule ip svcplane service-a counter']);
    assert.deepEqual(f.files, []);
    await runner.close();
    assert.equal(f.procs[0]!.eof, true);
    assert.equal(f.procs[0]!.killed, false);
  });

  it('a refusal rejects with an NftError naming the command of the text the caret points at', async () => {
    const col = LINE.indexOf('{ 10.96.0.99');
    let refused = 0;
    const f = fakeNft(() =>
      refused++ > 0
        ? ''
        : [
            'Error: Could not process rule: No such file or directory',
            LINE,
            `${' '.repeat(col)}${'^'.repeat(24)}`,
            '',
          ].join('\n'),
    );
    const runner = nftRunner({ spawn: f.spawn });
    await assert.rejects(runner.applySmall(TEXT), (e: unknown) => {
      assert.ok(e instanceof NftError, String(e));
      assert.equal(e.line, 4);
      assert.equal(e.lineText, 'delete element ip svcplane service-ips { 10.96.0.99 . tcp . 80 }');
      assert.equal(
        e.stderr,
        'Error: Could not process rule: No such file or directory\n' +
          'delete element ip svcplane service-ips { 10.96.0.99 . tcp . 80 }\n' +
          `${' '.repeat('delete element ip svcplane service-ips '.length)}${'^'.repeat(24)}\n`,
      );
      assert.match(
        e.message,
        /^nft -i failed at line 4: delete element .* \(refused: Error: Could not process rule: No such file or directory\)$/,
      );
      return true;
    });
    // The same nft goes on.
    await runner.applySmall(TEXT);
    assert.equal(f.procs.length, 1);
    await runner.close();
  });

  it('runs one transaction at a time', async () => {
    let release!: (out: string) => void;
    const f = fakeNft((line) =>
      line.startsWith('add rule') ? '' : { wait: new Promise<string>((r) => (release = r)) },
    );
    const runner = nftRunner({ spawn: f.spawn });
    const done: string[] = [];
    const first = runner.applySmall(TEXT).then(() => done.push('first'));
    const second = runner
      .applySmall('add rule ip svcplane service-a counter\n')
      .then(() => done.push('second'));
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(transactions(f.procs[0]!), [LINE], 'the second waits for the first');
    assert.deepEqual(done, []);
    release('');
    await Promise.all([first, second]);
    assert.deepEqual(done, ['first', 'second']);
    assert.deepEqual(transactions(f.procs[0]!), [LINE, 'add rule ip svcplane service-a counter']);
    await runner.close();
  });

  it('nft dying in a transaction rejects it with an NftError saying so; the next one starts nft anew', async () => {
    let die = true;
    const f = fakeNft(() => {
      if (!die) return '';
      die = false;
      return { exit: 139 };
    });
    const runner = nftRunner({ spawn: f.spawn });
    await assert.rejects(runner.applySmall(TEXT), (e: unknown) => {
      assert.ok(e instanceof NftError, String(e));
      assert.equal(e.line, undefined);
      assert.match(e.message, /^nft -i failed \(exit 139: nft -i exited\)$/);
      return true;
    });
    await runner.applySmall(TEXT);
    assert.equal(f.procs.length, 2);
    assert.deepEqual(transactions(f.procs[1]!), [LINE]);
    await runner.close();
  });

  it('a program that cannot start rejects with an NftError, and is tried again next time', async () => {
    let starts = 0;
    const f = fakeNft();
    const spawn: ProgramSpawn = (cmd, args, o) => {
      if (starts++ > 0) return f.spawn(cmd, args, o);
      const child = Object.assign(new EventEmitter(), {
        stdin: new PassThrough(),
        stdout: new PassThrough(),
        stderr: new PassThrough(),
        kill: () => true,
      });
      setImmediate(() => child.emit('error', new Error('spawn sh ENOENT')));
      return child;
    };
    const runner = nftRunner({ spawn });
    await assert.rejects(runner.applySmall(TEXT), {
      name: 'NftError',
      message: 'nft -i failed (cannot start: cannot run nft: spawn sh ENOENT)',
    });
    await runner.applySmall(TEXT);
    assert.equal(starts, 2);
    await runner.close();
  });

  it('an abort kills nft and rejects with the reason, not an NftError; the next one starts nft anew', async () => {
    const f = fakeNft((line) => (line === LINE ? { wait: new Promise<string>(() => {}) } : ''));
    const runner = nftRunner({ spawn: f.spawn });
    const ac = new AbortController();
    const pending = runner.applySmall(TEXT, ac.signal);
    await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    await assert.rejects(pending, (e: unknown) => {
      assert.ok(!(e instanceof NftError));
      assert.equal((e as Error).name, 'AbortError');
      return true;
    });
    assert.equal(f.procs[0]!.killed, true);
    // Aborted before it was sent: nothing is written.
    await assert.rejects(runner.applySmall('add rule ip svcplane a counter\n', ac.signal), {
      name: 'AbortError',
    });
    await runner.applySmall('add rule ip svcplane service-a counter\n');
    assert.equal(f.procs.length, 2);
    assert.deepEqual(transactions(f.procs[1]!), ['add rule ip svcplane service-a counter']);
    await runner.close();
  });

  it('a text with a comment, or larger than sessionBytes, goes to `nft -f -`', async () => {
    const f = fakeNft();
    const runner = nftRunner({ spawn: f.spawn, sessionBytes: 200 });
    await runner.applySmall('# a comment\nadd rule ip svcplane service-a counter\n');
    const big = 'add rule ip svcplane service-a counter\n'.repeat(6);
    await runner.applySmall(big);
    assert.deepEqual(f.files, ['# a comment\nadd rule ip svcplane service-a counter\n', big]);
    assert.equal(f.procs.length, 0, 'no nft -i started');
    // The default limit: 32 KiB.
    const dflt = nftRunner({ spawn: f.spawn });
    const line = 'add element ip svcplane health-check-nodeports { 30001 }\n';
    await dflt.applySmall(line.repeat(Math.floor(32768 / line.length)));
    assert.equal(f.procs.length, 1, 'up to 32 KiB: nft -i');
    await dflt.applySmall(line.repeat(Math.floor(32768 / line.length) + 1));
    assert.equal(f.files.length, 3, 'beyond: nft -f -');
    await dflt.close();
    const none = nftRunner({ spawn: f.spawn, sessionBytes: 0 });
    await none.applySmall('add rule ip svcplane service-a counter\n');
    assert.equal(f.files.length, 4);
    await runner.close();
  });

  it('ends an nft once it was sent renewBytes, and starts another for the next transaction', async () => {
    const f = fakeNft();
    const session = new NftSession({ argv: ['nft', '-i'], spawn: f.spawn, renewBytes: 100 });
    const text = 'add element ip svcplane health-check-nodeports { 30001 }\n'; // 71 bytes sent with its marker
    await session.apply(text);
    await session.apply(text);
    assert.equal(f.procs.length, 1);
    await session.apply(text);
    assert.equal(f.procs.length, 2);
    assert.equal(f.procs[0]!.eof, true, 'the first nft saw the end of its input');
    assert.equal(transactions(f.procs[1]!).length, 1);
    await session.close();
  });

  it('close() with no nft running does nothing; apply() does not use the session', async () => {
    const f = fakeNft();
    const runner = nftRunner({ spawn: f.spawn });
    await runner.close();
    await runner.apply(TEXT);
    assert.deepEqual(f.files, [TEXT]);
    assert.equal(f.procs.length, 0);
  });
});
