// The start-up scan for stored objects a typed client could not decode (api/undecodable.ts), over the
// watch cache once it has loaded (the cache already holds every object: the store is not read twice).
// Each one is logged; a LIST that serves one carries a Warning naming it (docs/storage.md says why the
// objects are served rather than hidden). An object fixed or replaced since the scan is checked again
// the first time a LIST serves it.
import { RESOURCES, type ResourceInfo } from '../api/resources.js';
import { checkStoredObject, undecodableLine, undecodableName } from '../api/undecodable.js';
import type { Logger } from '../runtime/logger.js';
import type { CachedObject } from './watch-cache/cached-object.js';
import type { WatchCache } from './watch-cache/watch-cache.js';

const EVERYTHING = { label: { requirements: [] }, field: { requirements: [] } } as const;

/** At most this many objects are named in one response's Warning headers. */
const MAX_NAMED = 10;

/** The Warning headers' texts for the undecodable objects among a LIST's items. */
export type ListWarnings = (r: ResourceInfo, items: readonly CachedObject[]) => string[];

/** Scans the loaded cache, logs each undecodable object and a summary (nothing when none), and returns the LIST warnings. */
export function scanUndecodable(cache: WatchCache, log: Pick<Logger, 'warn'>): ListWarnings {
  const found = new Map<string, { rv: number; text: string }>();
  const record = (r: ResourceInfo, o: CachedObject): string | undefined => {
    const bad = checkStoredObject(r, o.key, o.json);
    if (bad === undefined) found.delete(o.key);
    else
      found.set(o.key, {
        rv: o.rv,
        text: `${undecodableName(bad)} cannot be decoded by typed clients (${bad.problems.join('; ')}); fix or delete it`,
      });
    return bad && undecodableLine(bad);
  };
  let checked = 0;
  for (const r of RESOURCES) {
    for (const o of cache.list(r, EVERYTHING).items) {
      checked++;
      const line = record(r, o);
      if (line !== undefined) log.warn(`stored object cannot be decoded by typed clients: ${line}`);
    }
  }
  // A clean store logs nothing: start-up output stays as it was.
  const summary = { checked, undecodable: found.size, revision: cache.revision };
  if (found.size > 0)
    log.warn('stored objects typed clients cannot decode; see `svcplane store check`', summary);

  return (r, items) => {
    if (found.size === 0) return [];
    const texts: string[] = [];
    let more = 0;
    for (const o of items) {
      const seen = found.get(o.key);
      if (seen === undefined) continue;
      if (seen.rv !== o.rv && record(r, o) === undefined) continue;
      if (texts.length < MAX_NAMED) texts.push(found.get(o.key)!.text);
      else more++;
    }
    if (more > 0) texts.push(`${more} more objects in this list cannot be decoded by typed clients`);
    return texts;
  };
}
