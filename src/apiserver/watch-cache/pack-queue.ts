// The watch cache's objects waiting to be packed (WatchCacheOptions.packObjects): packed in a later turn
// than the one that handed them out, since a watch stream writes on the next tick, so packing never
// delays a delivery; a backlog (an initial sync, a cluster-wide change) is packed as it comes instead, as
// it would otherwise wait, unpacked, for a quiet turn and set the process's peak.
import type { JsonPacker } from '../../api/json-packer.js';
import type { Cached } from './cached-object.js';

/** Objects left to pack before each new one is packed as it comes. */
export const PACK_BACKLOG = 1_024;

export class PackQueue {
  private objects: Cached[] = [];
  private packers: JsonPacker[] = [];
  private timer: NodeJS.Immediate | undefined;
  private stopped = false;

  add(o: Cached, packer: JsonPacker): void {
    if (this.stopped) return;
    if (this.objects.length >= PACK_BACKLOG) this.objects.shift()!.pack(this.packers.shift()!);
    this.objects.push(o);
    this.packers.push(packer);
    this.timer ??= setImmediate(() => this.packSome());
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearImmediate(this.timer);
    this.timer = undefined;
    this.objects = [];
    this.packers = [];
  }

  /** Packs queued objects for about 5 ms, then yields to the event loop if more are left. */
  private packSome(): void {
    this.timer = undefined;
    const until = performance.now() + 5;
    let i = 0;
    while (i < this.objects.length) {
      this.objects[i]!.pack(this.packers[i]!);
      i++;
      if ((i & 31) === 0 && performance.now() > until) break;
    }
    this.objects.splice(0, i);
    this.packers.splice(0, i);
    if (this.objects.length > 0) this.timer = setImmediate(() => this.packSome());
  }
}
