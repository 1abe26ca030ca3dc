// The nft runner's error handling against a fake spawn: no nft, no root needed. The real program runs in
// test/e2e/proxy-nftables-runner.test.ts.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { NftError, nftRunner, parseNftError } from './nft-runner.js';
import type { ProgramSpawn } from './run-program.js';

interface Call {
  cmd: string;
  args: readonly string[];
  stdin: string;
}

/** A spawn whose child reads its stdin, then prints `stdout`/`stderr` and exits with `code` (or fails to start). */
function fakeSpawn(
  reply: {
    code?: number | null;
    signal?: NodeJS.Signals;
    stdout?: string;
    stderr?: string;
    startError?: string;
  },
  calls: Call[],
): ProgramSpawn {
  return (cmd, args) => {
    const child = new EventEmitter() as EventEmitter & {
      stdin: PassThrough;
      stdout: PassThrough;
      stderr: PassThrough;
      kill: () => boolean;
    };
    child.kill = () => true;
    child.stdin = new PassThrough();
    child.stdout = new PassThrough();
    child.stderr = new PassThrough();
    const input: Buffer[] = [];
    child.stdin.on('data', (b: Buffer) => input.push(b));
    child.stdin.on('end', () => {
      calls.push({ cmd, args, stdin: Buffer.concat(input).toString('utf8') });
      setImmediate(() => {
        if (reply.startError !== undefined) {
          child.emit('error', new Error(reply.startError));
          return;
        }
        if (reply.stdout !== undefined) child.stdout.write(reply.stdout);
        if (reply.stderr !== undefined) child.stderr.write(reply.stderr);
        child.stdout.end();
        child.stderr.end();
        setImmediate(() => child.emit('close', reply.code ?? null, reply.signal ?? null));
      });
    });
    return child;
  };
}

const TEXT = [
  'add table ip svcp-test',
  'add chain ip svcp-test services',
  'add rule ip svcp-test services ip daddr 10.96.0.10 tcp dport 80 bogus',
  '',
].join('\n');

describe('nftRunner (fake spawn)', () => {
  it('apply() sends the text to `nft -f -` and resolves on exit 0', async () => {
    const calls: Call[] = [];
    await nftRunner({ spawn: fakeSpawn({ code: 0 }, calls) }).apply(TEXT);
    assert.deepEqual(calls, [{ cmd: 'nft', args: ['-f', '-'], stdin: TEXT }]);
  });

  it('validate() runs `nft -c -f -`, and a netns runs through `ip netns exec`', async () => {
    const calls: Call[] = [];
    await nftRunner({ spawn: fakeSpawn({ code: 0 }, calls), netns: 'ns1', bin: '/x/nft' }).validate(TEXT);
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]?.args.slice(-6), ['exec', 'ns1', '/x/nft', '-c', '-f', '-']);
    assert.equal(calls[0]?.args[calls[0].args.length - 7], 'netns');
  });

  it("apply() rejects with an NftError naming the failing line, its text and nft's message", async () => {
    const stderr = [
      '/dev/stdin:3:70-74: Error: syntax error, unexpected string',
      'add rule ip svcp-test services ip daddr 10.96.0.10 tcp dport 80 bogus',
      '                                                                     ^^^^^',
      '',
    ].join('\n');
    const runner = nftRunner({ spawn: fakeSpawn({ code: 1, stderr }, []) });
    await assert.rejects(runner.apply(TEXT), (e: unknown) => {
      assert.ok(e instanceof NftError, String(e));
      assert.equal(e.line, 3);
      assert.equal(e.lineText, 'add rule ip svcp-test services ip daddr 10.96.0.10 tcp dport 80 bogus');
      assert.equal(e.stderr, stderr);
      assert.match(e.message, /^nft -f - failed at line 3: add rule ip svcp-test services .* bogus/);
      assert.match(e.message, /\(exit 1: syntax error, unexpected string\)$/);
      return true;
    });
  });

  it('apply() of pieces sends them one after another, and names a failing line across pieces', async () => {
    const calls: Call[] = [];
    // Split inside the second line: the line is counted over the whole text.
    const pieces = [TEXT.slice(0, 30), TEXT.slice(30, 60), TEXT.slice(60)];
    await nftRunner({ spawn: fakeSpawn({ code: 0 }, calls) }).apply(pieces);
    assert.deepEqual(calls, [{ cmd: 'nft', args: ['-f', '-'], stdin: TEXT }]);
    const stderr = '/dev/stdin:2:1-33: Error: Could not process rule: No such file or directory\n';
    await assert.rejects(nftRunner({ spawn: fakeSpawn({ code: 1, stderr }, []) }).apply(pieces), {
      name: 'NftError',
      line: 2,
      lineText: 'add chain ip svcp-test services',
    });
  });

  it('a kernel refusal names its line too', async () => {
    const stderr =
      '/dev/stdin:2:1-33: Error: Could not process rule: No such file or directory\nadd chain ip svcp-test services\n^^^^^\n';
    await assert.rejects(nftRunner({ spawn: fakeSpawn({ code: 1, stderr }, []) }).apply(TEXT), {
      name: 'NftError',
      line: 2,
      lineText: 'add chain ip svcp-test services',
    });
  });

  it('an error without a line, an empty stderr, a signal and a start failure still say how it ended', async () => {
    await assert.rejects(
      nftRunner({ spawn: fakeSpawn({ code: 1, stderr: 'Error: out of memory\n' }, []) }).apply(TEXT),
      {
        line: undefined,
        message: 'nft -f - failed (exit 1: Error: out of memory)',
      },
    );
    await assert.rejects(nftRunner({ spawn: fakeSpawn({ code: 2 }, []) }).apply(TEXT), {
      message: 'nft -f - failed (exit 2: no error output)',
    });
    await assert.rejects(nftRunner({ spawn: fakeSpawn({ code: null, signal: 'SIGKILL' }, []) }).apply(TEXT), {
      message: 'nft -f - failed (signal SIGKILL: no error output)',
    });
    await assert.rejects(
      nftRunner({ spawn: fakeSpawn({ startError: 'spawn nft ENOENT' }, []) }).apply(TEXT),
      {
        name: 'NftError',
        message: 'nft -f - failed (cannot start: cannot run nft: spawn nft ENOENT)',
      },
    );
  });

  it('an aborted signal rejects before anything runs', async () => {
    const calls: Call[] = [];
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(nftRunner({ spawn: fakeSpawn({ code: 0 }, calls) }).apply(TEXT, ac.signal), {
      name: 'AbortError',
    });
    assert.deepEqual(calls, []);
  });

  it('listTable() parses the JSON, answers undefined for a missing table, and rejects other failures', async () => {
    const calls: Call[] = [];
    const json =
      '{"nftables": [{"metainfo": {"json_schema_version": 1}}, {"table": {"family": "ip", "name": "t"}}]}';
    const items = await nftRunner({ spawn: fakeSpawn({ code: 0, stdout: json }, calls) }).listTable(
      'ip',
      't',
    );
    assert.deepEqual(items, [
      { metainfo: { json_schema_version: 1 } },
      { table: { family: 'ip', name: 't' } },
    ]);
    assert.deepEqual(calls[0]?.args, ['-j', 'list', 'table', 'ip', 't']);
    const missing = 'Error: No such file or directory\nlist table ip t\n              ^\n';
    assert.equal(
      await nftRunner({ spawn: fakeSpawn({ code: 1, stderr: missing }, []) }).listTable('ip', 't'),
      undefined,
    );
    await assert.rejects(
      nftRunner({ spawn: fakeSpawn({ code: 1, stderr: 'Error: Operation not permitted\n' }, []) }).listTable(
        'ip',
        't',
      ),
      {
        name: 'NftError',
        message: /^nft -j list table ip t failed \(exit 1: Error: Operation not permitted\)$/,
      },
    );
    await assert.rejects(
      nftRunner({ spawn: fakeSpawn({ code: 0, stdout: '{}' }, []) }).listTable('ip', 't'),
      {
        name: 'NftError',
      },
    );
  });

  it('deleteTable() is true when deleted, false when there was none, and rejects other failures', async () => {
    const calls: Call[] = [];
    assert.equal(await nftRunner({ spawn: fakeSpawn({ code: 0 }, calls) }).deleteTable('inet', 'svcp'), true);
    assert.deepEqual(calls[0]?.args, ['delete', 'table', 'inet', 'svcp']);
    const missing = 'Error: Could not process rule: No such file or directory\ndelete table inet svcp\n';
    assert.equal(
      await nftRunner({ spawn: fakeSpawn({ code: 1, stderr: missing }, []) }).deleteTable('inet', 'svcp'),
      false,
    );
    await assert.rejects(
      nftRunner({
        spawn: fakeSpawn({ code: 1, stderr: 'Error: Operation not permitted\n' }, []),
      }).deleteTable('inet', 'svcp'),
      { name: 'NftError' },
    );
  });

  it('check() reports a failing nft with its message, and a missing program with the package to install', async () => {
    assert.deepEqual(await nftRunner({ spawn: fakeSpawn({ code: 0 }, []) }).check(), { ok: true });
    const denied = await nftRunner({
      spawn: fakeSpawn({ code: 1, stderr: 'Error: Operation not permitted\n' }, []),
    }).check();
    assert.ok(!denied.ok && /Operation not permitted/.test(denied.reason), JSON.stringify(denied));
    const missing = await nftRunner({ bin: '/nonexistent/nft' }).check();
    assert.ok(
      !missing.ok && /\/nonexistent\/nft not found.*nftables.*ensure-deps/.test(missing.reason),
      JSON.stringify(missing),
    );
  });
});

describe('parseNftError', () => {
  it('reads the line and message of the first error, and nothing from output without one', () => {
    assert.deepEqual(parseNftError('/dev/stdin:4:43-43: Error: syntax error, unexpected newline\n'), {
      line: 4,
      message: 'syntax error, unexpected newline',
    });
    assert.deepEqual(
      parseNftError(
        'In file included from x\n/dev/stdin:12:1-20: Error: Could not process rule: File exists\n/dev/stdin:13:1-2: Error: other\n',
      ),
      { line: 12, message: 'Could not process rule: File exists' },
    );
    assert.equal(parseNftError('Error: No such file or directory\n'), undefined);
    assert.equal(parseNftError(''), undefined);
  });
});
