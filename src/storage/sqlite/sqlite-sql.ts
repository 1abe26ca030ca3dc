// The SQL of the SQLite store: the schema, and every statement the store prepares once at open.
import type Database from 'better-sqlite3';
import { APPLICATION_ID, SCHEMA_VERSION } from './sqlite-files.js';

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

export interface Row {
  id: number;
  name: Buffer;
  create_revision: number;
  deleted: number;
  value: Buffer;
}

/** Columns of a Row: create_revision 0 means the row's own id. */
const ROW_COLS = `id, name, IIF(create_revision = 0, id, create_revision) AS create_revision, deleted, value`;

export type Statements = ReturnType<typeof prepareStatements>;

// Each write is ONE statement whose WHERE holds the precondition, so SQLite enforces the
// compare-and-swap; UNIQUE(name, prev_revision) stops two successors of one revision.
export function prepareStatements(db: Database.Database) {
  return {
    latest: db.prepare<[Buffer], Row>(`SELECT ${ROW_COLS} FROM kv WHERE name = ? ORDER BY id DESC LIMIT 1`),
    at: db.prepare<[Buffer, number], Row>(
      `SELECT ${ROW_COLS} FROM kv WHERE name = ? AND id <= ? ORDER BY id DESC LIMIT 1`,
    ),
    create: db.prepare<{ name: Buffer; value: Buffer }>(
      `INSERT INTO kv (name, create_revision, deleted, prev_revision, value)
       SELECT :name, 0, 0, COALESCE((SELECT MAX(id) FROM kv WHERE name = :name), 0), :value
       WHERE NOT EXISTS (SELECT 1 FROM kv WHERE id = (SELECT MAX(id) FROM kv WHERE name = :name) AND deleted = 0)`,
    ),
    update: db.prepare<{ name: Buffer; value: Buffer; expected: number }>(
      `INSERT INTO kv (name, create_revision, deleted, prev_revision, value)
       SELECT name, IIF(create_revision = 0, id, create_revision), 0, id, :value
       FROM kv WHERE id = :expected AND name = :name AND deleted = 0`,
    ),
    remove: db.prepare<{ name: Buffer; expected: number }>(
      `INSERT INTO kv (name, create_revision, deleted, prev_revision, value)
       SELECT name, IIF(create_revision = 0, id, create_revision), 1, id, value
       FROM kv WHERE id = :expected AND name = :name AND deleted = 0`,
    ),
    byId: db.prepare<[number], Row>(`SELECT ${ROW_COLS} FROM kv WHERE id = ?`),
    list: db.prepare<{ start: Buffer; end: Buffer; rev: number; limit: number }, Row>(
      `SELECT ${ROW_COLS} FROM kv AS a
       WHERE a.name >= :start AND a.name < :end AND a.id <= :rev AND a.deleted = 0
         AND NOT EXISTS (SELECT 1 FROM kv AS b WHERE b.name = a.name AND b.id > a.id AND b.id <= :rev)
       ORDER BY a.name LIMIT :limit`,
    ),
    range: db.prepare<{ after: number; upto: number; start: Buffer; end: Buffer }, Row>(
      `SELECT ${ROW_COLS} FROM kv WHERE id > :after AND id <= :upto AND name >= :start AND name < :end ORDER BY id`,
    ),
    compactable: db.prepare<{ cursor: number; target: number; limit: number }, { id: number }>(
      `SELECT a.id FROM kv AS a WHERE a.id > :cursor AND a.id < :target
         AND (a.deleted = 1 OR EXISTS (SELECT 1 FROM kv AS b WHERE b.name = a.name AND b.id > a.id AND b.id <= :target))
       ORDER BY a.id LIMIT :limit`,
    ),
    deleteId: db.prepare<[number]>(`DELETE FROM kv WHERE id = ?`),
    setCompact: db.prepare<[number]>(`UPDATE meta SET value = ? WHERE key = 'compact_revision'`),
  };
}
