// Splitting a watch stream into lines: wherever the chunks break, multi-byte text, CRLF, blank lines.
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ndjsonLines } from './client.js';

async function collect(chunks: Array<Buffer | string>): Promise<string[]> {
  const out: string[] = [];
  async function* source(): AsyncGenerator<Buffer | string> {
    yield* chunks;
  }
  for await (const l of ndjsonLines(source())) out.push(l);
  return out;
}

describe('ndjsonLines', () => {
  it('yields each non-blank line, with LF or CRLF, and a last line without a newline', async () => {
    assert.deepEqual(await collect(['{"a":1}\n\n  \r\n{"b":2}\r\n', '{"c":', '3}']), [
      '{"a":1}',
      '{"b":2}',
      '{"c":3}',
    ]);
    assert.deepEqual(await collect([]), []);
    assert.deepEqual(await collect(['\n\n']), []);
  });

  it('gives the same lines however the bytes are cut into chunks (property)', async () => {
    const line = fc.oneof(
      fc.constant(''),
      fc.constant('   '),
      fc.string({ unit: 'binary', minLength: 1, maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, '')),
      fc.constantFrom('{"n":"日本語 ✓ 😀"}', '{"x":"ünïcödé"}'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 12 }),
        fc.boolean(),
        fc.array(fc.nat(40), { maxLength: 8 }),
        async (lines, crlf, cuts) => {
          const bytes = Buffer.from(lines.map((l) => `${l}${crlf ? '\r\n' : '\n'}`).join(''));
          const at = [...new Set(cuts.map((c) => Math.min(c, bytes.length)))].sort((a, b) => a - b);
          const chunks: Buffer[] = [];
          let prev = 0;
          for (const c of [...at, bytes.length]) {
            chunks.push(bytes.subarray(prev, c));
            prev = c;
          }
          assert.deepEqual(
            await collect(chunks),
            lines.filter((l) => /\S/.test(l)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });
});
