// File-level checks for the SQLite store, done before SQLite ever opens the file, so that a wrong path
// is refused with a clear one-line error and the file is left exactly as it was.
import type Database from 'better-sqlite3';
import { accessSync, closeSync, constants, existsSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { makeDirs } from '../make-dirs.js';
import { StoreError } from '../store.js';
import { errText } from '../../api/err-text.js';

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
    makeDirs(dir);
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
  const msg = errText(err);
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

/** Opens an existing file read-only and checks it is an intact svcplane database, writing nothing. */
export function validateExisting(
  file: string,
  verify: boolean,
  open: (file: string, opts: { readonly: true; fileMustExist: true }) => Database.Database,
): void {
  // Reading a WAL-mode file makes SQLite create -wal/-shm side files; remove the ones we caused.
  const sideFiles = [`${file}-wal`, `${file}-shm`].filter((f) => !existsSync(f));
  let db: Database.Database | undefined;
  try {
    db = open(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 200');
    const appId = db.pragma('application_id', { simple: true }) as number;
    const version = db.pragma('user_version', { simple: true }) as number;
    if (appId !== APPLICATION_ID) {
      const tables = db.prepare(`SELECT count(*) AS n FROM sqlite_master`).get() as { n: number };
      if (appId !== 0 || tables.n > 0) {
        throw new StoreError(
          'NotSvcplaneDatabase',
          `${file} is not a svcplane database (a SQLite file of another application); refusing to open it`,
        );
      }
    } else if (version > SCHEMA_VERSION) {
      throw new StoreError(
        'NotSvcplaneDatabase',
        `${file} was written by a newer svcplane (schema ${version}, this one knows ${SCHEMA_VERSION})`,
      );
    }
    if (verify) {
      const result = db.pragma('quick_check', { simple: true }) as string;
      if (result !== 'ok') {
        throw new StoreError(
          'Corrupt',
          `${file} is corrupt (${result.split('\n')[0]}); svcplane left it untouched: restore it from a backup`,
        );
      }
    }
  } catch (err) {
    throw openError(file, err);
  } finally {
    db?.close();
    for (const f of sideFiles) rmSync(f, { force: true });
  }
}
