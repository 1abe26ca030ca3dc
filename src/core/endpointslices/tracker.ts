// What the EndpointSlice controller expects its informer cache to show after its own writes (in behaviour
// like upstream's endpointSliceTracker). Without it, a sync that runs before the cache has caught up with
// the previous sync's create would plan the same slice again and create a duplicate.
//   - expect(): a create or update was accepted with this generation; expectDeletion(): a delete was.
//   - observe()/observeDeletion(): the informer delivered an event; an expectation the event meets is
//     cleared. The result says whether the event is just the controller's own write coming back ('own',
//     nothing to sync) or something else changed the slice ('other', sync the Service).
//   - stale(): some expectation of the Service is not met by the cache yet, so a sync now would plan from
//     old data; the caller waits for the events (and syncs once hasPending() turns false).
// Expectations older than `ttlMs` are dropped by stale(), so an event that never comes (a slice created and
// deleted by someone else between two relists) cannot block a Service for ever. Pure: time is passed in.

const DELETED = -1;

interface Expectation {
  readonly generation: number;
  readonly at: number;
}

export interface CachedSlice {
  readonly uid: string;
  readonly generation: number;
}

export class EndpointSliceTracker {
  private readonly byService = new Map<string, Map<string, Expectation>>();

  constructor(private readonly ttlMs = 30_000) {}

  expect(service: string, uid: string, generation: number, now: number): void {
    this.entries(service).set(uid, { generation, at: now });
  }

  expectDeletion(service: string, uid: string, now: number): void {
    this.entries(service).set(uid, { generation: DELETED, at: now });
  }

  /** An add or update of a slice of `service` was observed. */
  observe(service: string, uid: string, generation: number): 'own' | 'other' {
    const entries = this.byService.get(service);
    const want = entries?.get(uid);
    if (entries === undefined || want === undefined) return 'other';
    // An earlier write of ours (or a write of ours to a slice we have since deleted): the latest is coming.
    if (want.generation === DELETED || generation < want.generation) return 'own';
    this.clear(service, entries, uid);
    return generation === want.generation ? 'own' : 'other';
  }

  /** A deletion of a slice of `service` was observed. */
  observeDeletion(service: string, uid: string): 'own' | 'other' {
    const entries = this.byService.get(service);
    const want = entries?.get(uid);
    if (entries === undefined || want === undefined) return 'other';
    this.clear(service, entries, uid);
    return want.generation === DELETED ? 'own' : 'other';
  }

  /** Whether the cached slices of `service` are older than what this controller wrote. */
  stale(service: string, cached: readonly CachedSlice[], now: number): boolean {
    const entries = this.byService.get(service);
    if (entries === undefined) return false;
    const inCache = new Map(cached.map((s) => [s.uid, s.generation]));
    let stale = false;
    for (const [uid, want] of entries) {
      if (now - want.at > this.ttlMs) {
        entries.delete(uid);
        continue;
      }
      const have = inCache.get(uid);
      if (want.generation === DELETED ? have !== undefined : have === undefined || have < want.generation) {
        stale = true;
      }
    }
    if (entries.size === 0) this.byService.delete(service);
    return stale;
  }

  hasPending(service: string): boolean {
    return this.byService.has(service);
  }

  /** The Service is gone: nothing more to expect for it. */
  forget(service: string): void {
    this.byService.delete(service);
  }

  private entries(service: string): Map<string, Expectation> {
    let entries = this.byService.get(service);
    if (entries === undefined) this.byService.set(service, (entries = new Map()));
    return entries;
  }

  private clear(service: string, entries: Map<string, Expectation>, uid: string): void {
    entries.delete(uid);
    if (entries.size === 0) this.byService.delete(service);
  }
}
