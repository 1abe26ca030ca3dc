// One watch stream: newline-delimited JSON WatchEvents (or Table events for kubectl get -w), headers
// flushed at once, periodic BOOKMARKs when asked for, closed after timeoutSeconds, and closed with an
// ERROR (410 Expired) when the client is too slow to drain its bounded queue, so it relists; no event
// is ever dropped silently. Event bytes are built once per (object version, rendering) and shared.
import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import type { KObject } from '../../api/object.js';
import { groupVersion, type ResourceInfo } from '../../api/resources.js';
import type { Status } from '../../api/status.js';
import { statusErrors } from '../../api/status.js';
import type { ApiMetrics } from '../metrics.js';
import type { CachedObject } from '../watch-cache/cached-object.js';
import type { WatchEventType, WatchFilter } from '../watch-cache/delivery.js';
import { CacheError, type WatchCache } from '../watch-cache/watch-cache.js';
import { partialMetadata, table, type IncludeObject } from './table.js';

export type WatchRendering =
  | { kind: 'json' }
  | { kind: 'table'; version: string; include: IncludeObject }
  | { kind: 'metadata'; version: string };

export interface WatchRequest {
  readonly resource: ResourceInfo;
  readonly filter: WatchFilter;
  readonly rendering: WatchRendering;
  /** Where to start: after a revision, or with the current state as ADDED events. */
  readonly start:
    | { kind: 'from'; revision: number }
    | { kind: 'initial'; freshRevision?: number; initialEventsEnd: boolean };
  readonly bookmarks: boolean;
  readonly timeoutMs: number;
}

export interface WatchOptions {
  readonly cache: WatchCache;
  readonly metrics: ApiMetrics;
  readonly bookmarkIntervalMs: number;
  /** Bytes a watcher may have queued (unsent) before it is closed as too slow. */
  readonly maxQueuedBytes: number;
  readonly now: () => number;
}

/** Every open watch, so shutdown can end them cleanly. */
export class WatchRegistry {
  /** Each open watch's end, and the bytes it has queued (written, not yet taken by its socket). */
  private readonly open = new Map<() => void, () => number>();
  add(end: () => void, queued: () => number = () => 0): () => void {
    this.open.set(end, queued);
    return () => this.open.delete(end);
  }
  get size(): number {
    return this.open.size;
  }
  /** What the open watches have queued: in all, and the most one of them has. */
  queuedBytes(): { readonly total: number; readonly max: number } {
    let total = 0;
    let max = 0;
    for (const queued of this.open.values()) {
      const n = queued();
      total += n;
      if (n > max) max = n;
    }
    return { total, max };
  }
  endAll(): void {
    for (const end of [...this.open.keys()]) end();
  }
}

function renderEvent(
  r: ResourceInfo,
  type: string,
  obj: CachedObject,
  rendering: WatchRendering,
  nowMs: number,
): Buffer {
  const key =
    rendering.kind === 'json'
      ? `j${type}`
      : rendering.kind === 'table'
        ? `t${type}${rendering.version}${rendering.include}`
        : `m${type}${rendering.version}`;
  obj.memo ??= new Map();
  let buf = obj.memo.get(key);
  if (buf === undefined) {
    let body: string;
    if (rendering.kind === 'json') body = obj.json;
    else {
      const parsed = JSON.parse(obj.json) as KObject;
      body = JSON.stringify(
        rendering.kind === 'table'
          ? table(r, [parsed], {
              version: rendering.version,
              include: rendering.include,
              resourceVersion: String(obj.rv),
              nowMs,
            })
          : partialMetadata(parsed, rendering.version),
      );
    }
    buf = chunkFrame(`{"type":"${type}","object":${body}}\n`);
    // Table cells hold ages, so only the plain encodings are worth keeping.
    if (rendering.kind !== 'table') obj.memo.set(key, buf);
  }
  return buf;
}

/**
 * `line` as one chunk of a chunked HTTP/1.1 body, framed (`<hex length>\r\n<line>\r\n`): what
 * res.write(line) would send, built once per event and shared by every watcher, and written to the
 * socket as one buffer (res.write writes three, which a TLS socket copies into one per watcher).
 */
function chunkFrame(line: string | Buffer): Buffer {
  const size = typeof line === 'string' ? Buffer.byteLength(line) : line.length;
  const head = `${size.toString(16)}\r\n`;
  // Unpooled: a slow watcher's socket may hold one a long while, and a pooled one would keep its whole
  // 8 KiB pool slab alive, mostly holding other requests' garbage.
  const out = Buffer.allocUnsafeSlow(head.length + size + 2);
  out.write(head, 0, 'latin1');
  if (typeof line === 'string') out.write(line, head.length, 'utf8');
  else line.copy(out, head.length);
  out.write('\r\n', head.length + size, 'latin1');
  return out;
}

/**
 * Work left for the end of this turn of the event loop, shared by every watch: the sockets corked by
 * this turn's deliveries, and the events delivered, added to their counters once. One nextTick per turn
 * instead of one per watcher.
 *
 * A lone event (a store batch of one) goes out at once on a stream with nothing queued: with one event
 * for a thousand watchers, the first watcher's bytes leave while the rest are still being dispatched,
 * instead of every watcher waiting for the whole dispatch. The events of a bigger batch (a relabel's
 * hundred slices, a busy server's group commit) are corked and leave as one TLS write per stream at the
 * end of the turn, as do any later writes to a stream in the same turn.
 */
const endOfTurn = {
  touched: new Set<Writable>(),
  corked: new Set<Writable>(),
  counts: new Map<{ inc(n: number): void }, number>(),
  scheduled: false,
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    process.nextTick(() => this.run());
  },
  run(): void {
    this.scheduled = false;
    this.touched.clear();
    const corked = [...this.corked];
    this.corked.clear();
    for (const w of corked) if (!w.destroyed) w.uncork();
    for (const [counter, n] of this.counts) counter.inc(n);
    this.counts.clear();
  },
  /**
   * Writes `buf` to `w`: at once if it is w's first write of this turn, w has nothing queued, and no more
   * events of the same batch follow (`more`: they will be written together at the end of the turn).
   */
  send(w: Writable, buf: Buffer | string, more = false): void {
    if (!more && !this.touched.has(w)) {
      this.touched.add(w);
      this.schedule();
      if (w.writableLength === 0 && w.writableCorked === 0) {
        w.write(buf);
        return;
      }
    }
    this.cork(w);
    w.write(buf);
  },
  cork(w: Writable): void {
    if (this.corked.has(w)) return;
    w.cork();
    this.corked.add(w);
    this.schedule();
  },
  count(counter: { inc(n: number): void }): void {
    this.counts.set(counter, (this.counts.get(counter) ?? 0) + 1);
    this.schedule();
  },
};

/** The line inside a chunk framed by chunkFrame, for res.write (which frames it itself). */
const unframe = (framed: Buffer): Buffer => framed.subarray(framed.indexOf(0x0a) + 1, framed.length - 2);

export const errorEventLine = (status: Status): Buffer =>
  Buffer.from(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);

function bookmarkLine(r: ResourceInfo, revision: number, initialEventsEnd: boolean): Buffer {
  const object = {
    kind: r.kind,
    apiVersion: groupVersion(r),
    metadata: {
      resourceVersion: String(revision),
      creationTimestamp: null,
      ...(initialEventsEnd ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}),
    },
  };
  return Buffer.from(`${JSON.stringify({ type: 'BOOKMARK', object })}\n`);
}

/** Serves one watch until timeout, client disconnect, overflow or server shutdown. */
/** How long a watch's replay may stay queued beyond the queue limit before the watcher counts as slow. */
const REPLAY_GRACE_MS = 30_000;

export async function serveWatch(
  res: ServerResponse,
  req: WatchRequest,
  opts: WatchOptions,
  registry: WatchRegistry,
): Promise<void> {
  const { cache, metrics } = opts;
  const r = req.resource;
  const kindLabels = { group: r.group, version: r.version, kind: r.kind };
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Transfer-Encoding': 'chunked',
  });
  res.flushHeaders();
  // After the headers, events go straight to the socket as pre-framed chunks (see chunkFrame), unless
  // the response itself still holds bytes (a pipelined request whose socket is not attached yet: its
  // writableLength counts more than its socket's), or it is a HEAD request, whose body res.write drops.
  const sock =
    res.socket !== null && res.writableLength === res.socket.writableLength && res.req.method !== 'HEAD'
      ? res.socket
      : undefined;
  let closed = false;
  let lastRevision = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const timers: NodeJS.Timeout[] = [];
  let stop: (() => void) | undefined;
  const finish = (final?: Buffer): void => {
    if (closed) return;
    closed = true;
    stop?.();
    unregister();
    for (const t of timers) clearTimeout(t); // clearTimeout also clears intervals
    metrics.registeredWatchers.dec(kindLabels);
    if (final !== undefined && !res.destroyed) res.write(final);
    res.end();
    // A client that does not read at all would keep the socket forever.
    const kill = setTimeout(() => res.destroy(), 10_000);
    kill.unref();
    res.once('close', () => clearTimeout(kill));
    resolveDone();
  };
  const unregister = registry.add(
    () => finish(),
    () => res.writableLength,
  );
  metrics.registeredWatchers.inc(kindLabels);
  // Bound once: a labelled child increments without hashing the labels on every delivery.
  const eventsCounter = metrics.watchEvents.labels(kindLabels);
  res.once('close', () => finish());
  if (res.destroyed) finish(); // the client left while the request was prepared

  // The replay (initial state, or history from an old resourceVersion) is written in one go, however
  // large: it is what the client asked for, not a sign of slowness. Its bytes are allowed on top of the
  // queue limit until they drain; a client that never reads still overflows on live events.
  let replaying = false;
  let allowance = 0;
  /** Writes a framed chunk (renderEvent, chunkFrame); `more`: events of the same batch follow. */
  const write = (framed: Buffer, more = false): void => {
    if (closed) return;
    if (!replaying) allowance = Math.min(allowance, res.writableLength);
    if (sock !== undefined) {
      if (!sock.writable) return; // the client hung up; 'close' finishes the watch
      endOfTurn.send(sock, framed, more);
    } else {
      endOfTurn.send(res, unframe(framed), more);
    }
    if (!replaying && res.writableLength - allowance > opts.maxQueuedBytes) {
      metrics.terminatedWatchers.inc({ resource: r.resource });
      finish(
        errorEventLine(
          statusErrors.expired(
            `the watcher fell too far behind (${res.writableLength} bytes queued); list again and resume from the new resourceVersion`,
          ).status,
        ),
      );
    }
  };

  const sink = {
    deliver: (type: WatchEventType, obj: CachedObject, more?: boolean): void => {
      if (closed) return;
      lastRevision = Math.max(lastRevision, obj.rv);
      endOfTurn.count(eventsCounter);
      write(renderEvent(r, type, obj, req.rendering, opts.now()), more);
    },
    expire: (message: string): void => finish(errorEventLine(statusErrors.expired(message).status)),
  };

  try {
    if (req.start.kind === 'initial') {
      if (req.start.freshRevision !== undefined) await cache.waitFor(req.start.freshRevision);
      if (closed) return;
      replaying = true;
      const w = cache.watch(r, req.filter, sink, { initial: true });
      replaying = false;
      allowance = res.writableLength;
      stop = w.stop;
      if (closed) {
        w.stop(); // finished during the replay: the cache must forget this watcher
        return done;
      }
      lastRevision = w.revision;
      if (req.start.initialEventsEnd) write(chunkFrame(bookmarkLine(r, w.revision, true)));
    } else {
      if (req.start.revision > cache.revision) await cache.waitFor(req.start.revision);
      if (closed) return;
      replaying = true;
      const w = cache.watch(r, req.filter, sink, { fromRevision: req.start.revision });
      replaying = false;
      allowance = res.writableLength;
      stop = w.stop;
      if (closed) {
        w.stop();
        return done;
      }
      lastRevision = Math.max(lastRevision, req.start.revision);
    }
  } catch (err) {
    if (err instanceof CacheError) {
      const status =
        err.code === 'Expired'
          ? statusErrors.expired(err.message).status
          : statusErrors.timeout(err.message, 1).status;
      finish(errorEventLine(status));
      return done;
    }
    finish(errorEventLine(statusErrors.internal(err).status));
    return done;
  }

  timers.push(setTimeout(() => finish(), req.timeoutMs));
  // The replay's allowance lasts a while only: a client that has not read its replay by then is slow.
  if (allowance > 0)
    timers.push(
      setTimeout(() => {
        allowance = 0;
        if (res.writableLength > opts.maxQueuedBytes) {
          metrics.terminatedWatchers.inc({ resource: r.resource });
          finish(
            errorEventLine(
              statusErrors.expired(
                `the watcher did not read its initial events in ${REPLAY_GRACE_MS / 1000} s (${res.writableLength} bytes queued); list again`,
              ).status,
            ),
          );
        }
      }, REPLAY_GRACE_MS),
    );
  if (req.bookmarks) {
    // Every interval, as kube's cacher does, even when nothing changed: a client then knows the watch is
    // alive (the wrapper's watches stay open through an upstream outage this way).
    const tick = setInterval(() => {
      lastRevision = Math.max(lastRevision, cache.revision);
      write(chunkFrame(bookmarkLine(r, lastRevision, false)));
    }, opts.bookmarkIntervalMs);
    timers.push(tick);
  }
  return done;
}
