// File-level checks for the SQLite store, done before SQLite ever opens the file, so that a wrong path
// is refused with a clear one-line error and the file is left exactly as it was.
import { accessSync, closeSync, constants, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { StoreError } from '../store.js';

/** "svcp": PRAGMA application_id of every svcplane database. */
export const APPLICATION_ID = 0x73766370;
/** PRAGMA user_version: the schema this code writes and understands. */
export const SCHEMA_VERSION = 1;
export const DB_FILE_NAME = 'svcplane.db';

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

const errno = (err: unknown): string => (err as NodeJS.ErrnoException | undefined)?.code ?? String(err);

/** Creates the data directory if needed and makes sure this process may write in it. */
export function prepareDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new StoreError(
      'NotWritable',
      `data directory ${dir} cannot be created (${errno(err)})`,
      {},
      { cause: err },
    );
  }
  let st;
  try {
    st = statSync(dir);
  } catch (err) {
    throw new StoreError(
      'NotWritable',
      `data directory ${dir} is not accessible (${errno(err)})`,
      {},
      { cause: err },
    );
  }
  if (!st.isDirectory()) throw new StoreError('NotWritable', `data directory ${dir} is not a directory`);
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new StoreError(
      'NotWritable',
      `data directory ${dir} is not writable (${errno(err)})`,
      {},
      { cause: err },
    );
  }
}

export type FileState = 'missing' | 'empty' | 'sqlite';

/**
 * Looks at the file without opening it as a database: missing, empty (SQLite treats a 0-byte file as a
 * new database), or starting with the SQLite header. Anything else is refused untouched.
 */
export function inspectFile(file: string): FileState {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (err) {
    if (errno(err) === 'ENOENT') return 'missing';
    throw new StoreError('NotWritable', `cannot read ${file} (${errno(err)})`, {}, { cause: err });
  }
  try {
    if (!fstatIsFile(file)) throw new StoreError('NotSvcplaneDatabase', `${file} is not a regular file`);
    const head = Buffer.alloc(SQLITE_MAGIC.length);
    const n = readSync(fd, head, 0, head.length, 0);
    if (n === 0) return 'empty';
    if (n < head.length || !head.equals(SQLITE_MAGIC)) {
      throw new StoreError(
        'NotSvcplaneDatabase',
        `${file} is not a svcplane database (not a SQLite file); refusing to open it`,
      );
    }
    return 'sqlite';
  } finally {
    closeSync(fd);
  }
}

function fstatIsFile(file: string): boolean {
  return statSync(file).isFile();
}

/** The database file for a data directory. */
export const dbPath = (dataDir: string): string => path.join(dataDir, DB_FILE_NAME);

/** Maps a SQLite error raised while opening/validating an existing file to a one-line StoreError. */
export function openError(file: string, err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const code = (err as { code?: string } | undefined)?.code ?? '';
  const msg = err instanceof Error ? err.message : String(err);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
    return new StoreError('Locked', `${file} is in use by another process (${code})`, {}, { cause: err });
  }
  if (code === 'SQLITE_NOTADB') {
    return new StoreError(
      'NotSvcplaneDatabase',
      `${file} is not a svcplane database (${msg})`,
      {},
      { cause: err },
    );
  }
  if (code.startsWith('SQLITE_CORRUPT')) {
    return new StoreError(
      'Corrupt',
      `${file} is corrupt (${msg}); svcplane left it untouched: restore it from a backup`,
      {},
      { cause: err },
    );
  }
  if (
    code.startsWith('SQLITE_READONLY') ||
    code.startsWith('SQLITE_CANTOPEN') ||
    code.startsWith('SQLITE_PERM')
  ) {
    return new StoreError(
      'NotWritable',
      `${file} cannot be opened for writing (${code})`,
      {},
      { cause: err },
    );
  }
  return new StoreError('Unavailable', `cannot open ${file}: ${msg}`, {}, { cause: err });
}

// The log: one row per change; the row id is the revision. `create_revision` 0 means "this row's own
// id" (the row is a create), so a create needs no second write to learn its id. A delete appends a
// tombstone row (deleted = 1) whose value is the last value, for the DELETE event.
// UNIQUE(name, prev_revision) is the compare-and-swap: two changes can never both follow one revision.
export const SCHEMA_SQL = `
CREATE TABLE kv (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name BLOB NOT NULL,
  create_revision INTEGER NOT NULL,
  deleted INTEGER NOT NULL CHECK (deleted IN (0, 1)),
  prev_revision INTEGER NOT NULL,
  value BLOB NOT NULL
);
CREATE UNIQUE INDEX kv_name_prev ON kv (name, prev_revision);
CREATE INDEX kv_name_id ON kv (name, id);
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO meta (key, value) VALUES ('compact_revision', 0);
PRAGMA application_id = ${APPLICATION_ID};
PRAGMA user_version = ${SCHEMA_VERSION};
`;
