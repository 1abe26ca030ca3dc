// LIST responses: JSON streamed item by item from the cached encodings, Tables, metadata, YAML.
import type { ServerResponse } from 'node:http';
import type { KObject } from '../../api/object.js';
import { groupVersion, type ResourceInfo } from '../../api/resources.js';
import { listObjects, listOptionsInvalid } from '../registry/lister.js';
import type { CachedObject } from '../watch-cache/cached-object.js';
import { type Rendering } from './negotiation.js';
import { headers, warningHeaders, writeJson } from './respond.js';
import { parseIncludeObject, partialMetadata, table } from './table.js';
import { type HandlerDeps } from './types.js';
import { filterFrom, parseLimit } from './request-options.js';

export async function serveList(
  deps: HandlerDeps,
  res: ServerResponse,
  r: ResourceInfo,
  ns: string,
  query: URLSearchParams,
  rendering: Rendering,
  nowMs: number,
): Promise<void> {
  const filter = filterFrom(r, ns, query);
  const rv = query.get('resourceVersion') ?? undefined;
  const rvm = query.get('resourceVersionMatch') ?? undefined;
  if (query.get('sendInitialEvents') !== null) {
    throw listOptionsInvalid('sendInitialEvents', 'sendInitialEvents is forbidden for list');
  }
  const result = await listObjects(deps.registry.store, deps.cache, r, {
    filter,
    limit: parseLimit(query),
    ...(query.get('continue') ? { continueToken: query.get('continue')! } : {}),
    ...(rv === undefined ? {} : { resourceVersion: rv }),
    ...(rvm === undefined ? {} : { resourceVersionMatch: rvm }),
  });
  const warned = warningHeaders(deps.listWarnings?.(r, result.items) ?? []);
  const meta = {
    resourceVersion: String(result.revision),
    ...(result.continueToken === undefined ? {} : { continue: result.continueToken }),
  };
  if (rendering.kind === 'table') {
    const objs = result.items.map((o) => JSON.parse(o.json) as KObject);
    writeJson(
      res,
      200,
      table(r, objs, {
        version: rendering.version,
        include: parseIncludeObject(query.get('includeObject')),
        resourceVersion: meta.resourceVersion,
        ...(result.continueToken === undefined ? {} : { continueToken: result.continueToken }),
        nowMs,
      }),
      { extraHeaders: warned },
    );
    return;
  }
  if (rendering.kind === 'metadata') {
    writeJson(
      res,
      200,
      {
        kind: 'PartialObjectMetadataList',
        apiVersion: `meta.k8s.io/${rendering.version}`,
        metadata: meta,
        items: result.items.map((o) => partialMetadata(JSON.parse(o.json) as KObject, rendering.version)),
      },
      { extraHeaders: warned },
    );
    return;
  }
  if (rendering.kind === 'yaml') {
    writeJson(
      res,
      200,
      {
        kind: r.listKind,
        apiVersion: groupVersion(r),
        metadata: meta,
        items: result.items.map((o) => JSON.parse(o.json) as unknown),
      },
      { yaml: true, extraHeaders: warned },
    );
    return;
  }
  await streamList(
    res,
    r,
    meta,
    result.items,
    warned,
    deps.listWindow ?? { bytes: LIST_WINDOW, chunkBytes: CHUNK_BYTES },
  );
}

/**
 * Bytes of a LIST response written but not yet handed to the kernel before it waits. Counted from the
 * write callbacks: a TLS socket's writableLength stays near zero while its native side takes (and
 * encrypts) everything it is given, so it cannot bound the memory a big LIST holds.
 */
const LIST_WINDOW = 4 * 1024 * 1024;
/**
 * Encodes items into the chunk buffers. Buffer#write(string, offset, 'utf8') copies each string on the
 * V8 heap first: a LIST left its whole size as garbage (+120 MiB heap for a 119 MiB LIST), and RSS
 * followed; encodeInto writes in place, and is faster.
 */
const UTF8 = new TextEncoder();
/**
 * How long a LIST waits for room in its window: a client that takes nothing for this long (it stopped
 * reading, or its connection is half gone) loses the connection rather than holding the window forever.
 */
const STALL_MS = 60_000;
/** The size of the buffers a LIST's items are encoded into. */
const CHUNK_BYTES = 256 * 1024;

/**
 * A JSON list written item by item from the cached encodings: no re-serialization, bounded chunks.
 * At most LIST_WINDOW bytes are in flight, so a big list (100k pods ≈ 330 MB) is never queued whole in
 * memory and never holds the event loop for its whole length; a list of a few MiB goes out in one turn,
 * without yielding to other work after every 256 KiB chunk (which made a 10,000-Service LIST wait behind
 * every write the controllers sent meanwhile). `items` is a snapshot of immutable cached objects, so
 * waiting does not change what the list contains.
 */
async function streamList(
  res: ServerResponse,
  r: ResourceInfo,
  meta: Record<string, string>,
  items: readonly CachedObject[],
  extraHeaders: Record<string, string[]>,
  window: { readonly bytes: number; readonly chunkBytes: number; readonly stallMs?: number },
): Promise<void> {
  res.writeHead(200, headers({ 'Content-Type': 'application/json', ...extraHeaders }));
  res.write(
    `{"kind":"${r.listKind}","apiVersion":"${groupVersion(r)}","metadata":${JSON.stringify(meta)},"items":[`,
  );
  const out = new FlushWindow(res, window.bytes, window.chunkBytes, window.stallMs ?? STALL_MS);
  // Items are encoded straight into chunk buffers (one copy), rather than joined into a string that is
  // then encoded (two): a 10,000-Service LIST spent a third of its time on the join.
  let chunk = out.buffer();
  let used = 0;
  for (let i = 0; i < items.length; i++) {
    const json = items[i]!.json;
    const worst = json.length * 3 + 1; // UTF-8 bytes per UTF-16 unit, at most; and the comma
    if (used > 0 && used + worst > chunk.length) {
      if (!(await out.room())) return; // the client went away
      out.write(chunk, used);
      chunk = out.buffer();
      used = 0;
    }
    if (worst > chunk.length) chunk = Buffer.allocUnsafe(worst); // one item larger than a chunk
    if (i > 0) chunk[used++] = 0x2c; // ','
    used += UTF8.encodeInto(json, chunk.subarray(used)).written;
  }
  if (!(await out.room())) return;
  if (used > 0) out.write(chunk, used);
  res.end(']}\n');
}

/**
 * Writes buffers to a response with at most `limit` bytes not yet flushed to the kernel, and hands
 * back buffers of `size` bytes whose writes have completed, so a LIST of any length allocates about
 * limit/size buffers rather than one per chunk (which the GC frees late: +165 MiB RSS for one 119 MiB
 * LIST without reuse, against +19 MiB before and with reuse).
 */
class FlushWindow {
  private pending = 0;
  private wake: ((open: boolean) => void) | undefined;
  private stall: NodeJS.Timeout | undefined;
  private readonly free: Buffer[] = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly limit: number,
    private readonly size: number,
    private readonly stallMs: number,
  ) {
    res.once('close', () => this.release(false));
  }

  /** A buffer of `size` bytes to fill: one whose write has completed, or a new one. */
  buffer(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafe(this.size);
  }

  /** Writes the first `used` bytes of `buf`; a buffer of `size` bytes is reused once written. */
  write(buf: Buffer, used: number): void {
    this.pending += used;
    this.res.write(buf.subarray(0, used), (err) => {
      this.pending -= used;
      if (err === undefined || err === null) {
        if (buf.length === this.size) this.free.push(buf);
      }
      if (this.pending <= this.limit) this.release(!this.res.destroyed);
    });
  }

  /** Resolves once there is room again: true, or false when the response closed first. */
  room(): Promise<boolean> {
    if (this.res.destroyed) return Promise.resolve(false);
    if (this.pending <= this.limit) return Promise.resolve(true);
    return new Promise((resolve) => {
      this.wake = resolve;
      this.stall = setTimeout(() => {
        this.res.destroy();
        this.release(false);
      }, this.stallMs);
    });
  }

  private release(open: boolean): void {
    clearTimeout(this.stall);
    const w = this.wake;
    this.wake = undefined;
    w?.(open);
  }
}
