import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { makeDirs } from './make-dirs.js';

describe('makeDirs', () => {
  const roots: string[] = [];
  const scratch = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'make-dirs-'));
    roots.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of roots.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('creates every missing level with the mode', () => {
    const root = scratch();
    const dir = join(root, 'a', 'b', 'c');
    makeDirs(dir, 0o700);
    for (const p of [join(root, 'a'), join(root, 'a', 'b'), dir]) {
      assert.ok(statSync(p).isDirectory());
      assert.equal(statSync(p).mode & 0o777, 0o700);
    }
  });

  it('is a no-op for a directory that exists', () => {
    const root = scratch();
    makeDirs(root);
    assert.ok(statSync(root).isDirectory());
  });

  it('fails, and does not hang, where the kernel says ENOENT under an existing parent', () => {
    // Node's own recursive mkdir loops forever here, so the call runs in a child with a deadline.
    const mod = new URL('./make-dirs.ts', import.meta.url).href;
    const script = `const { makeDirs } = await import(${JSON.stringify(mod)});
      try { makeDirs('/proc/svcplane-make-dirs-test/x'); console.log('created'); }
      catch (err) { console.log(err.code); }`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(r.signal, null, 'makeDirs did not return');
    assert.equal(r.stdout.trim(), 'ENOENT');
  });

  it('fails where a level is a file', () => {
    const root = scratch();
    writeFileSync(join(root, 'f'), '');
    assert.throws(() => makeDirs(join(root, 'f', 'x')), /ENOTDIR/);
    assert.throws(() => makeDirs(join(root, 'f')), /EEXIST/);
  });
});
