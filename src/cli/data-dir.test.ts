// `--data-dir` that cannot be a directory is a usage error naming the flag and the path in the way.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { UsageError } from './flags.js';
import { ensureDataDir, ensureServingCert } from './serve.js';

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
    const usage = (err: unknown): boolean =>
      err instanceof UsageError && /^--data-dir: cannot create \/proc\/svcplane-x.*ENOENT/.test(err.message);
    assert.throws(() => ensureDataDir('/proc/svcplane-x/y'), usage);
    assert.throws(() => ensureServingCert('/proc/svcplane-x', []), usage);
  });
});
