// Crash safety of the SQLite store: a child process (testing/crash-writer.ts) writes from 16 concurrent
// loops and is SIGKILLed mid-write; the store is then reopened here and checked against the child's
// journal of acknowledged writes. Ten rounds on one data directory, so every round also recovers the
// previous rounds' crashes and must leave their data exactly as it was.
//
// Reproduce a failure with CRASH_SEED=<the logged seed> (it fixes the kill delays; the writes are random).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { KeyValue } from '../store.js';
import { prng } from '../testing/helpers.js';
import { dbPath } from './sqlite-files.js';
import { SqliteStore } from './sqlite-store.js';

const WRITER = fileURLToPath(new URL('./testing/crash-writer.ts', import.meta.url));
const ROUNDS = 10;
const WRITERS = 16;
const READY_TIMEOUT_MS = 30_000;
const COUNTER_PREFIX = '/crash/counter/';

interface ChildRun {
  lines: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Runs one crash-writer, SIGKILLs it `delayMs` after it said ready, and returns its complete journal. */
function runChild(dir: string, round: number, delayMs: number): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, dir, String(round)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let head = '';
    let stderr = '';
    let ready = false;
    let killTimer: NodeJS.Timeout | undefined;
    const readyTimer = setTimeout(() => child.kill('SIGKILL'), READY_TIMEOUT_MS);
    child.stdout.on('data', (chunk: Buffer) => {
      out.push(chunk);
      if (ready) return;
      head += chunk.toString('utf8');
      if (head.startsWith('ready\n')) {
        ready = true;
        clearTimeout(readyTimer);
        killTimer = setTimeout(() => child.kill('SIGKILL'), delayMs);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', (err) => {
      clearTimeout(readyTimer);
      clearTimeout(killTimer);
      reject(err);
    });
    // 'close' comes after the process exited and both pipes reached EOF: everything written is in `out`.
    child.on('close', (code, signal) => {
      clearTimeout(readyTimer);
      clearTimeout(killTimer);
      const text = Buffer.concat(out).toString('utf8');
      const lines = text.split('\n');
      lines.pop(); // '' after the last newline, or a line the kill cut short: not a complete record
      resolve({ lines, code, signal, stderr });
    });
  });
}

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
const text = (v: Uint8Array): string => Buffer.from(v).toString('utf8');

/** Checks one stored value under /crash/: an intact counter, or an intact self-checking JSON object. */
function checkIntact(kv: KeyValue): void {
  const s = text(kv.value);
  if (kv.key.startsWith(COUNTER_PREFIX)) {
    assert.match(kv.key, /^\/crash\/counter\/w\d+$/, `unexpected counter key ${kv.key}`);
    assert.ok(Number(kv.key.slice(COUNTER_PREFIX.length + 1)) < WRITERS, `unexpected counter key ${kv.key}`);
    assert.match(s, /^\d+$/, `counter ${kv.key} holds ${JSON.stringify(s.slice(0, 80))}`);
    return;
  }
  assert.match(kv.key, /^\/crash\/r\d+\/w\d+\/\d+$/, `unexpected key ${kv.key}`);
  let obj: { key?: unknown; n?: unknown; pad?: unknown; sha?: unknown };
  try {
    obj = JSON.parse(s) as typeof obj;
  } catch {
    assert.fail(`${kv.key}: value is not JSON (${s.length} bytes, ends ${JSON.stringify(s.slice(-40))})`);
  }
  assert.equal(obj.key, kv.key, `${kv.key}: value belongs to another key`);
  assert.equal(typeof obj.n, 'number', `${kv.key}: no n`);
  assert.equal(kv.key.split('/').pop(), String(obj.n), `${kv.key}: n does not match the key`);
  assert.equal(typeof obj.pad, 'string', `${kv.key}: no pad`);
  assert.equal(obj.sha, sha256(JSON.stringify({ key: obj.key, n: obj.n, pad: obj.pad })), `${kv.key}: sha`);
}

type Pending = { kind: 'create' } | { kind: 'update'; value: number } | { kind: 'delete' };

/** What the child's journal says about one round. */
interface Journal {
  acks: number;
  revisions: number[];
  /** Acked creates of data keys (this round's), with their revisions. */
  created: Map<string, number>;
  /** Acked deletes, with their revisions. */
  deleted: Map<string, number>;
  /** The last acked value and revision of each counter written this round (a create acks value 0). */
  counters: Map<string, { value: number; rev: number }>;
  /** Writes issued but neither acked nor refused when the child died: each may or may not have committed. */
  pending: Map<string, Pending>;
  counts: Record<'create' | 'update' | 'delete', number>;
}

function parseJournal(lines: string[], round: number, counterFloor: Map<string, number>): Journal {
  const j: Journal = {
    acks: 0,
    revisions: [],
    created: new Map(),
    deleted: new Map(),
    counters: new Map(),
    pending: new Map(),
    counts: { create: 0, update: 0, delete: 0 },
  };
  const mine = `/crash/r${round}/`;
  assert.equal(lines[0], 'ready', 'the journal starts with ready');
  for (const line of lines.slice(1)) {
    const f = line.split(' ');
    const [verb, kind, key] = f;
    assert.ok(
      key !== undefined && (key.startsWith(mine) || key.startsWith(COUNTER_PREFIX)),
      `bad line ${line}`,
    );
    const isCounter = key.startsWith(COUNTER_PREFIX);
    if (verb === 'op') {
      assert.ok(!j.pending.has(key), `two writes of ${key} in flight: ${line}`);
      if (kind === 'create' || kind === 'delete') j.pending.set(key, { kind });
      else if (kind === 'update') j.pending.set(key, { kind, value: Number(f[3]) });
      else assert.fail(`bad line ${line}`);
      continue;
    }
    if (verb === 'fail') {
      assert.equal(j.pending.get(key)?.kind, kind, `fail without op: ${line}`);
      j.pending.delete(key);
      continue;
    }
    assert.equal(verb, 'ack', `bad line ${line}`);
    assert.equal(j.pending.get(key)?.kind, kind, `ack without op: ${line}`);
    j.pending.delete(key);
    const rev = Number(f[f.length - 1]);
    assert.ok(Number.isSafeInteger(rev) && rev > 0, `bad revision: ${line}`);
    j.acks++;
    j.revisions.push(rev);
    const prevCounter = j.counters.get(key)?.value ?? counterFloor.get(key) ?? -1;
    if (kind === 'create' && isCounter) {
      assert.equal(prevCounter, -1, `counter ${key} created while it existed: ${line}`);
      j.counters.set(key, { value: 0, rev });
    } else if (kind === 'create') {
      assert.ok(!j.created.has(key), `${key} created twice`);
      j.created.set(key, rev);
    } else if (kind === 'update') {
      assert.ok(isCounter, `update of a data key: ${line}`);
      const value = Number(f[3]);
      assert.equal(value, prevCounter + 1, `counter ${key} skipped a value: ${line}`);
      j.counters.set(key, { value, rev });
    } else if (kind === 'delete') {
      assert.ok(j.created.has(key) && !j.deleted.has(key), `delete of a key not live: ${line}`);
      j.deleted.set(key, rev);
    } else {
      assert.fail(`bad line ${line}`);
    }
    j.counts[kind]++;
  }
  return j;
}

test(
  'sqlite store: every acknowledged write survives SIGKILL, 10 times in a row',
  { timeout: 120_000 },
  async (t) => {
    const seed = process.env.CRASH_SEED !== undefined ? Number(process.env.CRASH_SEED) : Date.now() >>> 0;
    t.diagnostic(`seed ${seed} (CRASH_SEED=${seed} reproduces the kill delays)`);
    const random = prng(seed);
    const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-crash-'));

    // What the previous rounds established, checked again after every later crash.
    let prevHead = 0;
    /** Every data key of earlier rounds, as stored after that round: nothing may change them any more. */
    let frozen = new Map<string, { modRevision: number; createRevision: number; value: string }>();
    /** Each counter's value (-1: absent) as stored after the previous round. */
    let counterFloor = new Map<string, number>();
    let totalAcks = 0;

    try {
      for (let round = 1; round <= ROUNDS; round++) {
        const delayMs = 30 + Math.floor(random() * 371);
        const started = performance.now();
        const run = await runChild(dir, round, delayMs);
        const ctx = `[seed ${seed}, round ${round}, kill after ${delayMs} ms]`;
        assert.equal(
          run.signal,
          'SIGKILL',
          `${ctx} the child must die of SIGKILL, not exit ${run.code}:\n${run.stderr}`,
        );
        assert.ok(run.lines[0] === 'ready', `${ctx} the child never became ready:\n${run.stderr}`);

        let j: Journal;
        try {
          j = parseJournal(run.lines, round, counterFloor);
        } catch (err) {
          if (err instanceof Error) err.message = `${ctx} ${err.message}`;
          throw err;
        }
        totalAcks += j.acks;

        const store = SqliteStore.open({ dataDir: dir });
        let head: number;
        let listed: KeyValue[];
        try {
          head = await store.currentRevision();
          const res = await store.list('/crash/');
          assert.equal(res.revision, head, `${ctx} list reads at the current revision`);
          listed = res.items;
          const byKey = new Map(listed.map((kv) => [kv.key, kv]));
          let committedPending = 0;

          // Revisions: every ack is a distinct revision of this round, and all of them are on disk.
          assert.equal(new Set(j.revisions).size, j.revisions.length, `${ctx} two acks share a revision`);
          for (const rev of j.revisions) {
            assert.ok(
              rev > prevHead,
              `${ctx} acked revision ${rev} is not after the previous head ${prevHead}`,
            );
            assert.ok(rev <= head, `${ctx} acked revision ${rev} is newer than the recovered head ${head}`);
          }
          assert.ok(head >= prevHead, `${ctx} the head went back from ${prevHead} to ${head}`);
          if (j.acks > 0) assert.ok(head > prevHead, `${ctx} acks but the head stayed at ${prevHead}`);

          // No partial value anywhere, and nothing newer than the head.
          for (const kv of listed) {
            checkIntact(kv);
            assert.ok(kv.modRevision <= head, `${ctx} ${kv.key} at ${kv.modRevision} > head ${head}`);
            assert.ok(kv.createRevision <= kv.modRevision, `${ctx} ${kv.key} created after its last change`);
          }

          // Data keys of this round.
          for (const [key, rev] of j.created) {
            const kv = byKey.get(key);
            const got = await store.get(key);
            assert.deepEqual(got, kv, `${ctx} get and list disagree on ${key}`);
            const deletedAt = j.deleted.get(key);
            if (deletedAt !== undefined) {
              assert.equal(kv, undefined, `${ctx} ${key}: acked delete at ${deletedAt} lost (still there)`);
              continue;
            }
            if (j.pending.get(key)?.kind === 'delete') {
              if (kv === undefined)
                committedPending++; // the in-flight delete committed: allowed
              else assert.equal(kv.modRevision, rev, `${ctx} ${key}: modRevision`);
              continue;
            }
            assert.ok(kv !== undefined, `${ctx} ${key}: acked create at revision ${rev} lost`);
            assert.ok(kv.modRevision >= rev, `${ctx} ${key}: modRevision ${kv.modRevision} < acked ${rev}`);
            // Nothing ever updates a data key, so it is exactly the acked version.
            assert.equal(kv.modRevision, rev, `${ctx} ${key}: modRevision`);
            assert.equal(kv.createRevision, rev, `${ctx} ${key}: createRevision`);
          }
          for (const [key, p] of j.pending) {
            if (p.kind === 'create' && !key.startsWith(COUNTER_PREFIX) && byKey.has(key)) committedPending++;
          }

          // Counters: exactly the last acked value, or the one in-flight increment on top of it.
          for (let w = 0; w < WRITERS; w++) {
            const key = `${COUNTER_PREFIX}w${w}`;
            const kv = byKey.get(key);
            assert.deepEqual(await store.get(key), kv, `${ctx} get and list disagree on ${key}`);
            const acked = j.counters.get(key);
            const floor = acked?.value ?? counterFloor.get(key) ?? -1;
            const value = kv === undefined ? -1 : Number(text(kv.value));
            assert.ok(value >= floor, `${ctx} ${key} = ${value}, but ${floor} was acked`);
            assert.ok(
              value <= floor + 1,
              `${ctx} ${key} = ${value}, more than one write past the acked ${floor}`,
            );
            if (value === floor + 1) {
              const p = j.pending.get(key);
              const ok =
                (p?.kind === 'update' && p.value === value) || (p?.kind === 'create' && floor === -1);
              assert.ok(ok, `${ctx} ${key} = ${value} but the write in flight was ${JSON.stringify(p)}`);
              committedPending++;
            } else if (acked !== undefined) {
              assert.equal(kv?.modRevision, acked.rev, `${ctx} ${key}: modRevision of the acked value`);
            }
          }

          // Every stored key is accounted for: earlier rounds' keys are unchanged, this round's were written.
          const mine = `/crash/r${round}/`;
          for (const kv of listed) {
            if (kv.key.startsWith(COUNTER_PREFIX)) continue;
            if (kv.key.startsWith(mine)) {
              assert.ok(
                kv.modRevision > prevHead,
                `${ctx} ${kv.key}: modRevision ${kv.modRevision} from before`,
              );
              assert.ok(
                j.created.has(kv.key) || j.pending.get(kv.key)?.kind === 'create',
                `${ctx} ${kv.key} exists but was never written`,
              );
              continue;
            }
            const old = frozen.get(kv.key);
            assert.ok(old !== undefined, `${ctx} ${kv.key} reappeared or was never written`);
            assert.deepEqual(
              { modRevision: kv.modRevision, createRevision: kv.createRevision, value: text(kv.value) },
              old,
              `${ctx} ${kv.key} of an earlier round changed`,
            );
          }
          const oldKept = listed.filter((kv) => frozen.has(kv.key)).length;
          assert.equal(oldKept, frozen.size, `${ctx} keys of earlier rounds were lost`);

          // The revision count adds up: each committed write took exactly one revision.
          assert.equal(
            head - prevHead,
            j.acks + committedPending,
            `${ctx} head ${head} - previous head ${prevHead} != ${j.acks} acks + ${committedPending} in-flight writes that committed`,
          );

          t.diagnostic(
            `round ${round}: kill after ${delayMs} ms, ${j.acks} acks (${j.counts.create} creates, ` +
              `${j.counts.update} updates, ${j.counts.delete} deletes), ${committedPending} unacked writes committed, ` +
              `head ${head}, ${listed.length} keys, ${Math.round(performance.now() - started)} ms`,
          );
        } finally {
          await store.close();
        }

        const db = new Database(dbPath(dir), { readonly: true });
        try {
          assert.equal(db.pragma('integrity_check', { simple: true }), 'ok', `${ctx} integrity_check`);
        } finally {
          db.close();
        }

        prevHead = head;
        frozen = new Map(
          listed
            .filter((kv) => !kv.key.startsWith(COUNTER_PREFIX))
            .map((kv) => [
              kv.key,
              { modRevision: kv.modRevision, createRevision: kv.createRevision, value: text(kv.value) },
            ]),
        );
        counterFloor = new Map();
        for (let w = 0; w < WRITERS; w++) {
          const kv = listed.find((x) => x.key === `${COUNTER_PREFIX}w${w}`);
          counterFloor.set(`${COUNTER_PREFIX}w${w}`, kv === undefined ? -1 : Number(text(kv.value)));
        }
      }
      assert.ok(
        totalAcks > 100,
        `only ${totalAcks} writes were acknowledged in ${ROUNDS} rounds: the test proved little`,
      );
      t.diagnostic(`${totalAcks} acknowledged writes in ${ROUNDS} rounds`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
