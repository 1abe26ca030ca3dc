// Child process of crash.test.ts: opens the SQLite store on a data directory and writes to it from 16
// concurrent loops until it is killed (SIGKILL, mid-write). It journals to stdout, synchronously:
//
//   ready                          the store is open; writes start now
//   op create <key>                a write is about to be issued (it may or may not commit)
//   op update <key> <value>
//   op delete <key>
//   ack create <key> <rev>         the write's promise resolved: it must survive the crash
//   ack update <key> <value> <rev>
//   ack delete <key> <rev>
//   fail <kind> <key> <code>       the write was refused (nothing was written)
//
// Each loop has at most one write in flight, so after the crash every key has at most one "op" without
// its "ack"/"fail": the one write whose fate is unknown. Keys:
//   /crash/r<round>/w<writer>/<n>  created once, never updated, sometimes deleted; the value is JSON
//                                  {key, n, pad, sha} with sha = sha256 of JSON {key, n, pad}, so a torn
//                                  or mixed-up value is detectable
//   /crash/counter/w<writer>       a decimal counter, created as "0", then CAS-incremented by its writer
//
// Run: node --import tsx src/storage/sqlite/testing/crash-writer.ts <dataDir> <round>
import { createHash, randomInt } from 'node:crypto';
import { writeSync } from 'node:fs';
import { isStoreError, type Store } from '../../store.js';
import { SqliteStore } from '../sqlite-store.js';

const WRITERS = 16;
/** The child never outlives a test that forgot it: it exits on its own after this long. */
const MAX_LIFETIME_MS = 60_000;
const PAD_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Writes one whole line to fd 1 before returning, so a line on the pipe means the event happened. */
function emit(line: string): void {
  const buf = Buffer.from(`${line}\n`, 'utf8');
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(1, buf, off, buf.length - off);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') continue; // a non-blocking pipe that is momentarily full
      if (code === 'EPIPE') process.exit(3); // the test is gone
      throw err;
    }
  }
}

function die(err: unknown): never {
  const msg = err instanceof Error ? (err.stack ?? err.message) : String(err);
  try {
    writeSync(2, `crash-writer: ${msg}\n`);
  } finally {
    process.exit(1);
  }
}

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');

function makeValue(key: string, n: number): Uint8Array {
  const len = randomInt(0, 4001);
  let pad = '';
  for (let i = 0; i < len; i++) pad += PAD_CHARS[randomInt(PAD_CHARS.length)];
  const body = { key, n, pad };
  return Buffer.from(JSON.stringify({ ...body, sha: sha256(JSON.stringify(body)) }), 'utf8');
}

async function incrementCounter(store: Store, key: string): Promise<void> {
  for (;;) {
    const cur = await store.get(key);
    if (cur === undefined) {
      emit(`op create ${key}`);
      try {
        const kv = await store.create(key, Buffer.from('0'));
        emit(`ack create ${key} ${kv.modRevision}`);
        return;
      } catch (err) {
        if (!isStoreError(err, 'AlreadyExists') && !isStoreError(err, 'Conflict')) throw err;
        emit(`fail create ${key} ${err.code}`);
        continue;
      }
    }
    const text = Buffer.from(cur.value).toString('utf8');
    if (!/^\d+$/.test(text)) throw new Error(`counter ${key} holds ${JSON.stringify(text)}`);
    const next = Number(text) + 1;
    emit(`op update ${key} ${next}`);
    try {
      const kv = await store.update(key, Buffer.from(String(next)), cur.modRevision);
      emit(`ack update ${key} ${next} ${kv.modRevision}`);
      return;
    } catch (err) {
      if (!isStoreError(err, 'Conflict')) throw err;
      emit(`fail update ${key} ${err.code}`);
    }
  }
}

async function writerLoop(store: Store, round: number, w: number): Promise<never> {
  const counterKey = `/crash/counter/w${w}`;
  const live: Array<{ key: string; rev: number }> = [];
  let n = 0;
  for (;;) {
    const dice = Math.random();
    if (dice < 0.1 && live.length > 0) {
      const [victim] = live.splice(randomInt(live.length), 1);
      emit(`op delete ${victim!.key}`);
      const kv = await store.delete(victim!.key, victim!.rev);
      emit(`ack delete ${victim!.key} ${kv.modRevision}`);
    } else if (dice < 0.4) {
      await incrementCounter(store, counterKey);
    } else {
      const key = `/crash/r${round}/w${w}/${n}`;
      const value = makeValue(key, n);
      n++;
      emit(`op create ${key}`);
      const kv = await store.create(key, value);
      emit(`ack create ${key} ${kv.modRevision}`);
      live.push({ key, rev: kv.modRevision });
    }
  }
}

function main(): void {
  const [dataDir, roundArg] = process.argv.slice(2);
  if (dataDir === undefined || roundArg === undefined || !/^\d+$/.test(roundArg)) {
    die(new Error('usage: crash-writer.ts <dataDir> <round>'));
  }
  const round = Number(roundArg);
  setTimeout(
    () => die(new Error(`still alive after ${MAX_LIFETIME_MS} ms; nobody killed me`)),
    MAX_LIFETIME_MS,
  );
  const store = SqliteStore.open({ dataDir });
  emit('ready');
  for (let w = 0; w < WRITERS; w++) writerLoop(store, round, w).catch(die);
}

try {
  main();
} catch (err) {
  die(err);
}
