// The repository speaks only of itself and of upstream: no tracked file (source, tests, scripts, bench,
// docs, README, CHANGELOG, configuration) cites a path outside the repository, the notes a change was
// written from, or an issue number that names no tracker. The rules are test/repo/citations.ts's; this
// test applies them to every file git knows (tracked, or new and not ignored) and names each file:line.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { citationsInText } from './citations.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

// package-lock.json is generated (its integrity hashes are not prose).
const SKIPPED = new Set(['package-lock.json']);
// Outside a git checkout (an unpacked tarball), the files below the root, less what .gitignore lists.
const NOT_SOURCE = new Set(['.git', 'node_modules', 'dist', '.svcplane', 'results']);

function walk(dir: string, out: string[]): string[] {
  for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    if (NOT_SOURCE.has(e.name)) continue;
    const rel = dir === '' ? e.name : `${dir}/${e.name}`;
    if (e.isDirectory()) walk(rel, out);
    else if (e.isFile() && !e.name.endsWith('.log')) out.push(rel);
  }
  return out;
}

function repositoryFiles(): string[] {
  if (!existsSync(path.join(root, '.git'))) return walk('', []).sort();
  const out = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return [...new Set(out.split('\0').filter((f) => f !== ''))].sort();
}

/** A file's text, or undefined for a binary file (a NUL byte) or one deleted but not yet staged. */
function textOf(file: string): string | undefined {
  const p = path.join(root, file);
  if (!existsSync(p)) return undefined;
  const bytes = readFileSync(p);
  if (bytes.includes(0)) return undefined;
  return bytes.toString('utf8');
}

describe('citations in the repository', () => {
  it('no file cites the outside notes, a design file elsewhere or a bare issue number', () => {
    const files = repositoryFiles();
    assert.ok(files.includes('package.json'), 'git ls-files listed the repository');
    const problems: string[] = [];
    for (const file of files) {
      if (SKIPPED.has(file)) continue;
      const text = textOf(file);
      if (text === undefined) continue;
      for (const c of citationsInText(text)) problems.push(`${file}:${c.line}: ${c.rule}: ${c.text}`);
    }
    assert.deepEqual(
      problems,
      [],
      `${problems.length} citation(s) of something outside the repository (rules in test/repo/citations.ts):\n` +
        problems.join('\n'),
    );
  });
});
