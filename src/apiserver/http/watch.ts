// One watch stream: newline-delimited JSON WatchEvents (or Table events for kubectl get -w), headers
// flushed at once, periodic BOOKMARKs when asked for, closed after timeoutSeconds, and closed with an
// ERROR (410 Expired) when the client is too slow to drain its bounded queue, so it relists; no event
// is ever dropped silently. Event bytes are built once per (object version, rendering) and shared.
import type { ServerResponse } from 'node:http';
import type { KObject } from '../../api/object.js';
import { groupVersion, type ResourceInfo } from '../../api/resources.js';
import type { Status } from '../../api/status.js';
import { statusErrors } from '../../api/status.js';
import type { ApiMetrics } from '../metrics.js';
import {
  CacheError,
  type CachedObject,
  type WatchCache,
  type WatchEventType,
  type WatchFilter,
} from '../watch-cache/watch-cache.js';
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
  private readonly open = new Set<() => void>();
  add(end: () => void): () => void {
    this.open.add(end);
    return () => this.open.delete(end);
  }
  get size(): number {
    return this.open.size;
  }
  endAll(): void {
    for (const end of [...this.open]) end();
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
    buf = Buffer.from(`{"type":"${type}","object":${body}}\n`);
    // Table cells hold ages, so only the plain encodings are worth keeping.
    if (rendering.kind !== 'table') obj.memo.set(key, buf);
  }
  return buf;
}

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
  let closed = false;
  let corked = false;
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
    if (corked) res.uncork();
    if (final !== undefined && !res.destroyed) res.write(final);
    res.end();
    // A client that does not read at all would keep the socket forever.
    const kill = setTimeout(() => res.destroy(), 10_000);
    kill.unref();
    res.once('close', () => clearTimeout(kill));
    resolveDone();
  };
  const unregister = registry.add(() => finish());
  metrics.registeredWatchers.inc(kindLabels);
  // Bound once: a labelled child increments without hashing the labels on every delivery.
  const eventsCounter = metrics.watchEvents.labels(kindLabels);
  res.once('close', () => finish());

  const write = (buf: Buffer): void => {
    if (closed) return;
    // Everything written to this stream in one turn of the event loop leaves as one TLS write.
    if (!corked) {
      corked = true;
      res.cork();
      process.nextTick(() => {
        corked = false;
        if (!closed) res.uncork();
      });
    }
    res.write(buf);
    if (res.writableLength > opts.maxQueuedBytes) {
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
    deliver: (type: WatchEventType, obj: CachedObject): void => {
      if (closed) return;
      lastRevision = Math.max(lastRevision, obj.rv);
      eventsCounter.inc();
      write(renderEvent(r, type, obj, req.rendering, opts.now()));
    },
    expire: (message: string): void => finish(errorEventLine(statusErrors.expired(message).status)),
  };

  try {
    if (req.start.kind === 'initial') {
      if (req.start.freshRevision !== undefined) await cache.waitFor(req.start.freshRevision);
      if (closed) return;
      const w = cache.watch(r, req.filter, sink, { initial: true });
      stop = w.stop;
      lastRevision = w.revision;
      if (req.start.initialEventsEnd) write(bookmarkLine(r, w.revision, true));
    } else {
      if (req.start.revision > cache.revision) await cache.waitFor(req.start.revision);
      if (closed) return;
      const w = cache.watch(r, req.filter, sink, { fromRevision: req.start.revision });
      stop = w.stop;
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
  if (req.bookmarks) {
    const tick = setInterval(() => {
      const rev = cache.revision;
      if (rev > lastRevision) {
        lastRevision = rev;
        write(bookmarkLine(r, rev, false));
      }
    }, opts.bookmarkIntervalMs);
    timers.push(tick);
  }
  return done;
}
