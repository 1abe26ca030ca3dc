// src/core must stay pure (docs/architecture.md). The real eslint.config.js is applied to fixture text
// placed, by path, inside src/core and elsewhere, so this fails if the configuration stops enforcing it.
import { ESLint } from 'eslint';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

const eslint = new ESLint({ cwd: process.cwd() });

async function ruleIds(code: string, filePath: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

describe('src/core purity (eslint.config.js)', () => {
  const cases: Array<[string, string]> = [
    ["import { readFileSync } from 'node:fs';\nexport const f = readFileSync;\n", 'no-restricted-imports'],
    ["import path from 'path';\nexport const f = path.join;\n", 'no-restricted-imports'],
    ['export const now = (): number => Date.now();\n', 'no-restricted-globals'],
    ['export const d = (): Date => new Date();\n', 'no-restricted-globals'],
    ['export const r = (): number => Math.random();\n', 'no-restricted-properties'],
    ['export const t = (f: () => void): unknown => setTimeout(f, 1);\n', 'no-restricted-globals'],
    ['export const t = (f: () => void): unknown => setInterval(f, 1);\n', 'no-restricted-globals'],
    ['export const p = (): number => performance.now();\n', 'no-restricted-globals'],
  ];
  for (const [code, rule] of cases) {
    it(`forbids in src/core: ${code.split('\n')[0]}`, async () => {
      assert.ok((await ruleIds(code, 'src/core/allocator/x.ts')).includes(rule));
    });
  }

  it('allows the same code outside src/core, and in core tests', async () => {
    for (const [code] of cases) {
      assert.deepEqual(await ruleIds(code, 'src/storage/x.ts'), []);
      assert.deepEqual(await ruleIds(code, 'src/core/allocator/x.test.ts'), []);
    }
  });

  it('allows pure code in src/core', async () => {
    const code = 'export const next = (rand: () => number, n: number): number => Math.floor(rand() * n);\n';
    assert.deepEqual(await ruleIds(code, 'src/core/allocator/x.ts'), []);
  });
});
