// Creating a directory and its missing parents, one level at a time.
//
// Node's `mkdirSync(dir, { recursive: true })` loops forever when the kernel answers ENOENT for a path
// whose parent exists: it takes ENOENT to mean "the parent is missing", creates the parent (which is
// there), and tries again. /proc does this (`--data-dir /proc/x` hung `svcplane up` with no output). Here each missing level is created on its own, from the top, so such a path fails with the
// kernel's error at once.
import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const exists = (p: string): boolean => {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
};

/**
 * Creates `dir` and any missing parents with `mode`. Throws the first error mkdir gives (EEXIST when `dir`
 * is a file), except that a level created meanwhile by another process is fine.
 */
export function makeDirs(dir: string, mode = 0o777): void {
  const missing: string[] = [];
  for (let p = resolve(dir); !exists(p); p = dirname(p)) {
    missing.push(p);
    if (dirname(p) === p) break;
  }
  if (missing.length === 0 && !statSync(dir).isDirectory()) {
    throw Object.assign(new Error(`EEXIST: file already exists, mkdir '${dir}'`), { code: 'EEXIST' });
  }
  for (const p of missing.reverse()) {
    try {
      mkdirSync(p, { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && statSync(p).isDirectory()) continue;
      throw err;
    }
  }
}
