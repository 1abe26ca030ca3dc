// The adapter between the etcd3 client's Watcher and the store's OpenRawWatch (etcd-watch.ts): one etcd
// watch with prev_kv on a prefix, from a revision, mapped to WatchEvents and StoreErrors.
import type { Etcd3, IWatchResponse } from 'etcd3';
import { StoreError, type WatchEvent } from '../store.js';
import { mapError } from './etcd-errors.js';
import type { OpenRawWatch } from './etcd-watch.js';

export interface RawWatchDeps {
  readonly client: Etcd3;
  /** How long etcd may take to create a watch. */
  readonly timeoutMs: number;
  /** Logical key ↔ physical (prefixed) etcd key. */
  phys(key: string): Buffer;
  logical(physKey: Buffer): string;
  /** Throws Closed once the store is closed. */
  ensureOpen(): void;
}

export function rawWatchOpener({ client, timeoutMs, phys, logical, ensureOpen }: RawWatchDeps): OpenRawWatch {
  /**
   * One etcd watch (with prev_kv) on a logical prefix, from after `after`; see etcd-watch.ts. Its
   * listeners are attached before it connects, so no response can arrive unheard; it must be created
   * within the store's timeout; cancel() does not wait for etcd, which may be gone.
   */
  const open: OpenRawWatch = async (prefix, after, h, signal) => {
    ensureOpen();
    const watcher = client
      .watch()
      .prefix(phys(prefix))
      .startRevision(String(after + 1))
      .withPreviousKV()
      .watcher();
    let last = after;
    let done = false;
    let settle: ((err?: StoreError) => void) | undefined;
    const connected = new Promise<void>((resolve, reject) => {
      settle = (err) => {
        settle = undefined;
        if (err === undefined) resolve();
        else reject(err);
      };
    });
    const fail = (err: StoreError): void => {
      if (done) return;
      done = true;
      if (settle !== undefined) settle(err);
      else h.failed(err);
    };
    const cancel = (): void => {
      done = true;
      watcher.removeAllListeners();
      watcher.on('error', () => undefined);
      void watcher.cancel().catch(() => undefined);
    };
    watcher.on('connected', () => settle?.());
    watcher.on('data', (res: IWatchResponse) => {
      if (done || res.events.length === 0) return;
      const batch = res.events.map<WatchEvent>((ev) => {
        const isDelete = ev.type === 'Delete';
        const source = isDelete ? ev.prev_kv : ev.kv;
        return {
          type: isDelete ? 'DELETE' : 'PUT',
          key: logical(ev.kv.key),
          value: source?.value ?? Buffer.alloc(0),
          revision: Number(ev.kv.mod_revision),
          createRevision: Number(source?.create_revision ?? ev.kv.create_revision),
        };
      });
      last = batch[batch.length - 1]!.revision;
      h.events(batch);
    });
    watcher.on('disconnected', (err: Error) =>
      fail(
        new StoreError(
          'Unavailable',
          `watch on ${prefix} lost its etcd stream: ${err.message}`,
          {},
          { cause: err },
        ),
      ),
    );
    watcher.on('error', (err: Error) => {
      void explainCancel(prefix, last, err).then(fail);
    });
    const timer = setTimeout(
      () =>
        fail(new StoreError('Unavailable', `etcd did not start a watch on ${prefix} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onAbort = (): void => fail(new StoreError('Closed', 'watch aborted while connecting'));
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await connected;
    } catch (err) {
      cancel();
      throw err;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    return { cancel };
  };

  /** etcd cancels a watch whose start was compacted; tell that apart from other cancellations. */
  async function explainCancel(prefix: string, after: number, err: Error): Promise<StoreError> {
    try {
      await client.kv.range({ key: phys(prefix), revision: after + 1, count_only: true });
    } catch (probe) {
      const mapped = mapError('watch', probe);
      if (mapped.code === 'Compacted') return mapped;
    }
    return new StoreError(
      'Unavailable',
      `watch on ${prefix} was cancelled by etcd: ${err.message}`,
      {},
      { cause: err },
    );
  }

  return open;
}
