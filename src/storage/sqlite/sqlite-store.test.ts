import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runStoreConformance } from '../testing/conformance.js';
import { SqliteStore } from './sqlite-store.js';

const dirs: string[] = [];
runStoreConformance('sqlite', {
  open: async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-sqlite-'));
    dirs.push(dir);
    return SqliteStore.open({ dataDir: dir });
  },
  teardown: async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  },
});
