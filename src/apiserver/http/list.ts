// LIST responses: JSON streamed item by item from the cached encodings, Tables, metadata, YAML.
import type { ServerResponse } from 'node:http';
import type { KObject } from '../../api/object.js';
import { groupVersion, type ResourceInfo } from '../../api/resources.js';
import { listObjects, listOptionsInvalid } from '../registry/lister.js';
import type { CachedObject } from '../watch-cache/watch-cache.js';
import { type Rendering } from './negotiation.js';
import { headers, writeJson } from './respond.js';
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
    );
    return;
  }
  if (rendering.kind === 'metadata') {
    writeJson(res, 200, {
      kind: 'PartialObjectMetadataList',
      apiVersion: `meta.k8s.io/${rendering.version}`,
      metadata: meta,
      items: result.items.map((o) => partialMetadata(JSON.parse(o.json) as KObject, rendering.version)),
    });
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
      { yaml: true },
    );
    return;
  }
  await streamList(res, r, meta, result.items);
}

/** Bytes a LIST response may have queued on its socket before it waits for the socket to drain. */
const LIST_WINDOW = 4 * 1024 * 1024;
/** The size of the buffers a LIST's items are encoded into. */
const CHUNK_BYTES = 256 * 1024;

/**
 * A JSON list written item by item from the cached encodings: no re-serialization, bounded chunks.
 * Once LIST_WINDOW bytes wait on the socket it waits for them to drain, so a big list (100k pods ≈
 * 330 MB) is never queued whole in memory and never holds the event loop for its whole length; a list
 * of up to a few MiB goes out in one turn, without yielding to other work once per 256 KiB chunk (which
 * made a 10,000-Service LIST wait behind every write the controllers sent meanwhile). `items` is a
 * snapshot of immutable cached objects, so waiting does not change what the list contains.
 */
async function streamList(
  res: ServerResponse,
  r: ResourceInfo,
  meta: Record<string, string>,
  items: readonly CachedObject[],
): Promise<void> {
  res.writeHead(200, headers({ 'Content-Type': 'application/json' }));
  res.write(
    `{"kind":"${r.listKind}","apiVersion":"${groupVersion(r)}","metadata":${JSON.stringify(meta)},"items":[`,
  );
  // Items are encoded straight into chunk buffers (one copy), rather than joined into a string that is
  // then encoded (two): a 10,000-Service LIST spent a third of its time on the join.
  let chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let used = 0;
  for (let i = 0; i < items.length; i++) {
    const json = items[i]!.json;
    const worst = json.length * 3 + 1; // UTF-8 bytes per UTF-16 unit, at most; and the comma
    if (used > 0 && used + worst > chunk.length) {
      if (res.writableLength > LIST_WINDOW && !(await writable(res))) return; // the client went away
      res.write(chunk.subarray(0, used));
      chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      used = 0;
    }
    if (worst > chunk.length) chunk = Buffer.allocUnsafe(worst); // one item larger than a chunk
    if (i > 0) chunk[used++] = 0x2c; // ','
    used += chunk.write(json, used, 'utf8');
  }
  if (res.writableLength > LIST_WINDOW && !(await writable(res))) return;
  if (used > 0) res.write(chunk.subarray(0, used));
  res.end(']}\n');
}

/** Resolves true on 'drain', false when the response is closed first. */
function writable(res: ServerResponse): Promise<boolean> {
  if (res.destroyed) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => (): void => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}
