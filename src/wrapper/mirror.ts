// What the wrapper keeps of each upstream resource instead of an informer's cache. Memory is what a node
// agent is judged on (SuperEdge's DaemonSet allows 100 Mi), so the upstream objects are not kept parsed:
//   - of every object, a hash of its stored form (Mirror: to tell a relist's unchanged objects from
//     changed ones, and to find the deleted ones);
//   - Services and Nodes are served unchanged, so their stored form is held (by sync.ts) only until it is
//     written: the watch cache holds it from then on; the index keeps what it reads (rules, labels);
//   - EndpointSlices and Endpoints are re-served whenever their view changes, so each is kept packed
//     (json-packer.ts: a tenth of the JSON or less): an Endpoints object as its stored form, a slice as sliceText() (its
//     JSON cut around each endpoint, so a served form is a concatenation, not a parse); the index keeps
//     each endpoint's topology.
import type { KObject } from '../api/object.js';
import { hash53 } from '../core/hash.js';
import { objectKeyOf } from '../runtime/informer.js';
import type { ReflectorStore } from '../runtime/reflector.js';

/** The stored form: no resourceVersion (the store assigns it) and no managedFields. */
export function storedForm(obj: KObject): string {
  return JSON.stringify(storedObject(obj));
}

/** The object as storedForm() serializes it. */
export function storedObject(obj: KObject): KObject {
  const { resourceVersion: _rv, managedFields: _mf, ...meta } = obj.metadata;
  return { ...obj, metadata: meta };
}

/** What a mirror tells the sync about one upstream object. */
export interface MirrorHandlers {
  /** The object is new, or its form changed. `form` is that form (the stored form, by default). */
  put(key: string, obj: KObject, form: string): void;
  /** The object is gone. */
  remove(key: string): void;
}

/**
 * The reflector's store for one upstream resource: a hash of each object's stored form, nothing more. A
 * relist's objects whose form is unchanged are not passed on; the ones missing from it are removed.
 */
export class Mirror implements ReflectorStore {
  private readonly known = new Map<string, number>();
  /** During a relist: the keys its pages have held so far. */
  private seen: Set<string> | undefined;

  constructor(
    private readonly on: MirrorHandlers & {
      relisting(active: boolean): void;
      /** The form hashed and handed to `put` (default storedForm; slices use their sliceText). */
      form?: (obj: KObject) => string;
    },
  ) {}

  has(key: string): boolean {
    return this.known.has(key);
  }

  /**
   * Whether a relist is under way and has applied a page (what it removes is known only at its end):
   * until its first page, what the mirror holds is still the last whole state (a list that hangs on an
   * unreachable upstream holds nothing back).
   */
  get relisting(): boolean {
    return this.seen !== undefined && (this.seen.size > 0 || this.ending);
  }

  /** While endReplace applies the removals. */
  private ending = false;

  readonly paged = {
    beginReplace: (): void => {
      this.seen = new Set();
      this.on.relisting(true);
    },
    replacePage: (items: KObject[]): void => {
      for (const o of items) this.seen?.add(this.put(o));
    },
    endReplace: (): void => {
      const seen = this.seen ?? new Set();
      // Still relisting while the removals are applied: a write now would show half of them.
      this.ending = true;
      try {
        for (const key of [...this.known.keys()])
          if (!seen.has(key)) {
            this.known.delete(key);
            this.on.remove(key);
          }
      } finally {
        this.ending = false;
      }
      this.seen = undefined;
      this.on.relisting(false);
    },
    abortReplace: (): void => {
      // What the pages applied is newer upstream state, and the next relist starts afresh: writes resume.
      if (this.seen === undefined) return;
      this.seen = undefined;
      this.on.relisting(false);
    },
  };

  replace(items: KObject[]): void {
    this.paged.beginReplace();
    this.paged.replacePage(items);
    this.paged.endReplace();
  }

  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KObject): void {
    if (type !== 'DELETED') {
      this.put(obj);
      return;
    }
    const key = objectKeyOf(obj);
    if (this.known.delete(key)) this.on.remove(key);
  }

  private put(obj: KObject): string {
    const key = objectKeyOf(obj);
    const form = (this.on.form ?? storedForm)(obj);
    const h = hash53(form);
    if (this.known.get(key) !== h) {
      this.known.set(key, h);
      this.on.put(key, obj, form);
    }
    return key;
  }
}
