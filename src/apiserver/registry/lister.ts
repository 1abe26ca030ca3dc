// LIST with kube-apiserver's resourceVersion semantics, served from the watch cache:
//   resourceVersion unset      → most recent: wait until the cache has every acknowledged write
//   resourceVersion "0"        → any: whatever the cache holds now
//   N (NotOlderThan, default)  → wait until the cache has reached N
//   N with Exact               → the state at N: the cache when nothing of this resource changed since,
//                                otherwise the store's history (410 when compacted)
// limit/continue pages are all read at the first page's revision; the continue token is kube's shape.
import type { ResourceInfo } from '../../api/resources.js';
import { statusErrors, type StatusError } from '../../api/status.js';
import { isStoreError } from '../../storage/store.js';
import { encodeContinue as encodeStoreContinue } from '../../storage/keys.js';
import { decodeObject, resourcePrefix } from '../codec.js';
import { toCached, type CachedObject } from '../watch-cache/cached-object.js';
import { matches, type WatchFilter } from '../watch-cache/delivery.js';
import { CacheError, type WatchCache } from '../watch-cache/watch-cache.js';
import type { Store } from '../../storage/store.js';

export interface ListRequest {
  readonly filter: WatchFilter;
  readonly limit: number;
  readonly continueToken?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: string;
}

export interface ListResult {
  readonly revision: number;
  readonly items: readonly CachedObject[];
  readonly continueToken?: string;
}

interface Token {
  readonly rv: number;
  readonly start: string;
}

const encodeToken = (t: Token): string =>
  Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: t.rv, start: t.start })).toString('base64');

function decodeToken(raw: string): Token {
  try {
    const t = JSON.parse(Buffer.from(raw, 'base64').toString('utf8')) as {
      v?: unknown;
      rv?: unknown;
      start?: unknown;
    };
    if (
      t.v === 'meta.k8s.io/v1' &&
      typeof t.rv === 'number' &&
      Number.isSafeInteger(t.rv) &&
      typeof t.start === 'string'
    ) {
      return { rv: t.rv, start: t.start };
    }
  } catch {
    /* fall through */
  }
  throw statusErrors.badRequest('continue key is not valid: the token is malformed');
}

export function parseResourceVersion(raw: string | undefined, what = 'resourceVersion'): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw statusErrors.badRequest(`invalid ${what}: ${JSON.stringify(raw)}: must be a non-negative integer`);
  }
  return Number(raw);
}

/**
 * GET with resourceVersion N > 0 (kube's cacher): the answer must be no older than N, so wait until the
 * cache has reached N; a revision the server does not reach within the wait is kube's 504 "Too large
 * resource version". (Unset and "0" need no wait: the store's read is the most recent.)
 */
export async function waitForResourceVersion(
  cache: WatchCache,
  raw: string | undefined,
  signal?: AbortSignal,
): Promise<void> {
  const rv = parseResourceVersion(raw);
  if (rv === undefined || rv === 0) return;
  try {
    await cache.waitFor(rv, signal);
  } catch (err) {
    throw tooLarge(err, rv);
  }
}

const tooLarge = (err: unknown, rv: number | undefined): unknown =>
  err instanceof CacheError && err.code === 'TooLargeResourceVersion'
    ? statusErrors.timeout(
        `Too large resource version: ${rv ?? ''}, current: ${err.details.current ?? ''}`,
        1,
      )
    : err;

export const listOptionsInvalid = (field: string, detail: string): StatusError =>
  statusErrors.invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', [
    { type: 'FieldValueForbidden', field, detail },
  ]);

export async function listObjects(
  store: Store,
  cache: WatchCache,
  r: ResourceInfo,
  req: ListRequest,
  signal?: AbortSignal,
): Promise<ListResult> {
  const rv = parseResourceVersion(req.resourceVersion);
  const match = req.resourceVersionMatch ?? '';
  if (match !== '' && match !== 'NotOlderThan' && match !== 'Exact') {
    throw statusErrors.invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', [
      {
        type: 'FieldValueNotSupported',
        field: 'resourceVersionMatch',
        badValue: match,
        detail: '',
        supported: ['Exact', 'NotOlderThan'],
      },
    ]);
  }
  if (match !== '' && rv === undefined) {
    throw listOptionsInvalid(
      'resourceVersionMatch',
      'resourceVersionMatch is forbidden unless resourceVersion is provided',
    );
  }
  if (match === 'Exact' && rv === 0) {
    throw listOptionsInvalid(
      'resourceVersionMatch',
      'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
    );
  }
  const limit = req.limit;
  try {
    if (req.continueToken !== undefined && req.continueToken !== '') {
      if (rv !== undefined && rv !== 0) {
        throw statusErrors.badRequest('specifying resource version is not allowed when using continue');
      }
      const token = decodeToken(req.continueToken);
      return await page(store, cache, r, req.filter, limit, token.rv, token.start);
    }
    if (rv === undefined) await cache.waitFresh(signal);
    else if (rv > 0) await cache.waitFor(rv, signal);
    if (match === 'Exact' && rv !== undefined && !cache.unchangedSince(r, rv)) {
      return await fromStore(store, r, req.filter, limit, rv, undefined);
    }
    const res = cache.list(r, req.filter, { limit });
    return {
      revision: match === 'Exact' && rv !== undefined ? rv : res.revision,
      items: res.items,
      ...(res.more ? { continueToken: encodeToken({ rv: res.revision, start: res.lastKey! }) } : {}),
    };
  } catch (err) {
    throw tooLarge(err, rv);
  }
}

async function page(
  store: Store,
  cache: WatchCache,
  r: ResourceInfo,
  filter: WatchFilter,
  limit: number,
  rv: number,
  start: string,
): Promise<ListResult> {
  if (cache.unchangedSince(r, rv)) {
    const res = cache.list(r, filter, { afterKey: start, limit });
    return {
      revision: rv,
      items: res.items,
      ...(res.more ? { continueToken: encodeToken({ rv, start: res.lastKey! }) } : {}),
    };
  }
  return fromStore(store, r, filter, limit, rv, start);
}

/** A page read from the store's history at revision `rv` (used when the cache has moved on). */
async function fromStore(
  store: Store,
  r: ResourceInfo,
  filter: WatchFilter,
  limit: number,
  rv: number,
  after: string | undefined,
): Promise<ListResult> {
  const prefix = resourcePrefix(r, filter.namespace);
  const items: CachedObject[] = [];
  let cont: string | undefined =
    after === undefined ? undefined : encodeStoreContinue({ rev: rv, prefix, after });
  let lastKey: string | undefined;
  try {
    for (;;) {
      const res = await store.list(prefix, {
        limit: 1_000,
        ...(cont === undefined ? { revision: rv } : { continue: cont }),
      });
      for (const kv of res.items) {
        const o = toCached(r, kv.key, decodeObject(kv.value, kv.modRevision));
        if (!matches(filter, o)) continue;
        if (limit > 0 && items.length === limit) {
          return { revision: rv, items, continueToken: encodeToken({ rv, start: lastKey! }) };
        }
        items.push(o);
        lastKey = kv.key;
      }
      if (res.continue === undefined) break;
      cont = res.continue;
    }
  } catch (err) {
    if (isStoreError(err, 'Compacted')) {
      throw statusErrors.expired(
        after === undefined
          ? 'The resourceVersion for the provided list is too old.'
          : 'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
      );
    }
    if (isStoreError(err, 'FutureRevision')) {
      throw statusErrors.timeout(`Too large resource version: ${rv}`, 1);
    }
    throw err;
  }
  return { revision: rv, items };
}
