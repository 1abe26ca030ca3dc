// followResource: the current objects, then each change; after the cache re-initialises (it expires its
// watchers), a reset and the whole state again; nothing after stop.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ResourceInfo } from '../../api/resources.js';
import type { CachedObject } from './cached-object.js';
import type { WatchSink } from './delivery.js';
import { followResource } from './follow.js';
import type { WatchCache } from './watch-cache.js';

/** The part of the watch cache followResource uses: one resource's objects and its watchers. */
class FakeCache {
  readonly objects = new Map<string, CachedObject>();
  readonly sinks = new Set<WatchSink>();
  watch(_r: ResourceInfo, _f: unknown, sink: WatchSink): { revision: number; stop: () => void } {
    for (const o of this.objects.values()) sink.deliver('ADDED', o);
    this.sinks.add(sink);
    return { revision: 0, stop: () => this.sinks.delete(sink) };
  }
  put(name: string): void {
    const o = { name, key: name } as CachedObject;
    const type = this.objects.has(name) ? 'MODIFIED' : 'ADDED';
    this.objects.set(name, o);
    for (const s of this.sinks) s.deliver(type, o);
  }
  reload(names: string[]): void {
    this.objects.clear();
    for (const n of names) this.objects.set(n, { name: n, key: n } as CachedObject);
    for (const s of this.sinks) s.expire('reloaded');
    this.sinks.clear();
  }
}

describe('followResource', () => {
  it('hands over the state, each change, and the whole state again after a reload', async () => {
    const cache = new FakeCache();
    cache.put('a');
    const log: string[] = [];
    const stop = followResource(cache as unknown as WatchCache, {} as ResourceInfo, {
      reset: () => log.push('reset'),
      put: (o) => log.push(`put ${o.name}`),
      delete: (o) => log.push(`delete ${o.name}`),
    });
    cache.put('b');
    assert.deepEqual(log, ['reset', 'put a', 'put b']);
    cache.reload(['b', 'c']);
    await Promise.resolve();
    assert.deepEqual(log.slice(3), ['reset', 'put b', 'put c']);
    stop();
    cache.put('d');
    assert.equal(log.includes('put d'), false);
  });
});
