// `--data-dir` that cannot be a directory is a usage error naming the flag and the path in the way.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { UsageError } from './flags.js';
import { ensureDataDir } from './serve.js';

const root = mkdtempSync(join(tmpdir(), 'svcplane-data-dir-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('ensureDataDir', () => {
  it('creates the directory and the sub-directory, owner-only, and accepts them when they exist', () => {
    const dir = join(root, 'a', 'b');
    ensureDataDir(dir, 'pki');
    ensureDataDir(dir, 'pki');
    assert.ok(statSync(join(dir, 'pki')).isDirectory());
    assert.equal(statSync(join(dir, 'pki')).mode & 0o777, 0o700);
  });

  it('names the path that is a file: the directory itself, a parent, or the sub-directory', () => {
    const file = join(root, 'file');
    writeFileSync(file, 'x');
    const inTheWay = join(root, 'd');
    ensureDataDir(inTheWay);
    writeFileSync(join(inTheWay, 'pki'), 'x');
    const cases: Array<[string, string, string]> = [
      [file, '', file],
      [join(file, 'below'), '', file],
      [inTheWay, 'pki', join(inTheWay, 'pki')],
    ];
    for (const [dir, sub, blocking] of cases)
      assert.throws(
        () => ensureDataDir(dir, sub),
        (err: unknown) =>
          err instanceof UsageError &&
          err.message === `--data-dir: ${blocking} exists and is not a directory`,
      );
  });

  it('is a usage error, at once, where the kernel refuses to create it (/proc)', () => {
    // In a child with a deadline: Node's own recursive mkdir loops forever here, and a loop in this
    // process could not be timed out.
    const serve = new URL('./serve.ts', import.meta.url).href;
    const flags = new URL('./flags.ts', import.meta.url).href;
    const script = `const { ensureDataDir, ensureServingCert } = await import(${JSON.stringify(serve)});
      const { UsageError } = await import(${JSON.stringify(flags)});
      for (const f of [() => ensureDataDir('/proc/svcplane-x/y'), () => ensureServingCert('/proc/svcplane-x', [])]) {
        try { f(); console.log('created'); }
        catch (err) { console.log(err instanceof UsageError ? err.message : 'not a usage error: ' + err); }
      }`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(r.signal, null, 'ensureDataDir did not return');
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 2, r.stdout + r.stderr);
    for (const line of lines) assert.match(line, /^--data-dir: cannot create \/proc\/svcplane-x.*ENOENT/);
  });
});
