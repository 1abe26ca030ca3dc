// runProgram: what a program is handed on stdin arrives whole and unchanged, however large (it is written
// a piece at a time), and what it prints comes back.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findProgram, runProgram } from './run-program.js';

const startError = (e: Error): Error => e;

describe('runProgram', () => {
  it('hands a program input of several megabytes whole, with no surrogate pair split across pieces', async () => {
    const cat = findProgram('cat');
    assert.ok(cat, 'cat is installed');
    // Pairs (an emoji is two UTF-16 code units) straddle every 1 Mi boundary, and the text is not ASCII.
    const unit = 'add rule ip t c ip daddr 10.0.0.1 tcp dport 80 counter € 😀\n';
    let text = unit.repeat(Math.ceil((3 * 2 ** 20) / unit.length));
    for (const at of [2 ** 20 - 1, 2 * 2 ** 20 - 1, 3 * 2 ** 20 - 1])
      text = `${text.slice(0, at)}😀${text.slice(at)}`;
    const r = await runProgram([cat], { stdin: text, startError });
    assert.equal(r.code, 0);
    assert.equal(r.stdout.length, text.length);
    assert.ok(r.stdout === text, 'the same text came back');
  });

  it('hands input given in pieces, read as it is written (empty ones, and larger than what is written at once), in order', async () => {
    const cat = findProgram('cat');
    assert.ok(cat, 'cat is installed');
    const pieces = ['', 'a'.repeat(2 ** 20 + 7), '', 'b\n', 'c'.repeat(3 * 2 ** 20), 'd'];
    let read = 0;
    function* lazily(): Generator<string> {
      for (const p of pieces) {
        read++;
        yield p;
      }
    }
    const r = await runProgram([cat], { stdin: lazily(), startError });
    assert.equal(read, pieces.length);
    assert.equal(r.code, 0);
    assert.ok(r.stdout === pieces.join(''), 'the pieces came back in order');
  });

  it('resolves with the exit status when the program stops reading early', async () => {
    const sh = findProgram('sh');
    assert.ok(sh, 'sh is installed');
    const r = await runProgram([sh, '-c', 'head -c 10 >/dev/null; echo done; exit 3'], {
      stdin: 'x'.repeat(5 * 2 ** 20),
      startError,
    });
    assert.equal(r.code, 3);
    assert.equal(r.stdout, 'done\n');
  });
});
