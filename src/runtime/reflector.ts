// The reflector: keeps a local store equal to one resource on the server by list-then-watch, written
// as an explicit state machine so relists are visible and testable (kube-rs's watcher does the same):
//
//   Listing ──(all pages read at one resourceVersion; store swapped atomically)──▶ Watching
//   Watching ──(stream ends normally)──▶ Watching (resume from the last resourceVersion seen)
//   Watching ──(410 Gone / Expired, as an HTTP status or an ERROR event)──▶ Listing
//   Listing | Watching ──(any other failure)──▶ Backoff ──▶ back to where it failed
//   any ──(stop())──▶ Stopped
//
// Bookmarks move the resourceVersion forward without touching the store. Backoff is exponential with
// jitter (client-go: 800 ms up to 30 s) and resets after a successful list or a healthy watch.
import type { KObject } from '../api/object.js';
import type { ListOptions, ObjectList, WatchEvent, WatchOptions } from './client.js';
import { isApiError } from './client.js';
import { sleep } from './sleep.js';
import { errText } from '../api/err-text.js';

export type ReflectorState = 'Listing' | 'Watching' | 'Backoff' | 'Stopped';

/** What the reflector needs of a client, for one resource (and optionally one namespace/selector). */
export interface ListerWatcher {
  list(opts: ListOptions, signal: AbortSignal): Promise<ObjectList>;
  watch(opts: WatchOptions, signal: AbortSignal): AsyncIterable<WatchEvent>;
}

/** Where the reflector writes. replace() must swap the whole content at once. */
export interface ReflectorStore {
  replace(items: KObject[], resourceVersion: string): void;
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: KObject): void;
  /**
   * Optional: a store that takes a relist page by page, so the whole list is never held at once (a node
   * agent's memory). beginReplace() starts a relist, each page follows, and endReplace() ends it:
   * whatever no page of it held is gone. abortReplace() says a relist failed midway (another follows,
   * after a backoff). Such a store must not expose a half-applied relist.
   */
  readonly paged?: {
    beginReplace(): void;
    replacePage(items: KObject[]): void;
    endReplace(resourceVersion: string): void;
    abortReplace(): void;
  };
}

export interface ReflectorOptions {
  readonly pageSize?: number;
  readonly backoffInitialMs?: number;
  readonly backoffMaxMs?: number;
  /** Server-side watch timeout; default a random 300–600 s, as client-go picks. */
  readonly watchTimeoutSeconds?: () => number;
  readonly random?: () => number;
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly onState?: (state: ReflectorState, detail?: string) => void;
  readonly onError?: (err: unknown) => void;
}

const isGone = (err: unknown): boolean => isApiError(err, 410);

class GoneEvent extends Error {}

export class Reflector {
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;
  private stateNow: ReflectorState = 'Listing';
  private rv = '';
  private backoffMs: number;
  private synced = false;
  private syncWaiters: (() => void)[] = [];
  /** How many full lists have replaced the store (1 after the first sync). */
  relists = 0;

  constructor(
    private readonly lw: ListerWatcher,
    private readonly store: ReflectorStore,
    private readonly o: ReflectorOptions = {},
  ) {
    this.backoffMs = o.backoffInitialMs ?? 800;
  }

  get state(): ReflectorState {
    return this.stateNow;
  }

  /** The resourceVersion the store is at. */
  get resourceVersion(): string {
    return this.rv;
  }

  get hasSynced(): boolean {
    return this.synced;
  }

  /** Resolves after the first complete list has been written to the store. */
  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
    this.set('Stopped');
  }

  private set(state: ReflectorState, detail?: string): void {
    this.stateNow = state;
    this.o.onState?.(state, detail);
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    let next: 'Listing' | 'Watching' = 'Listing';
    while (!signal.aborted) {
      try {
        if (next === 'Listing') {
          this.set('Listing');
          await this.list(signal);
          next = 'Watching';
        } else {
          this.set('Watching');
          await this.watch(signal);
        }
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof GoneEvent || isGone(err)) {
          next = 'Listing';
          continue;
        }
        this.o.onError?.(err);
        this.set('Backoff', errText(err));
        const jitter = 1 + (this.o.random ?? Math.random)() * 0.2;
        await (this.o.sleep ?? sleep)(this.backoffMs * jitter, signal);
        this.backoffMs = Math.min(this.backoffMs * 2, this.o.backoffMaxMs ?? 30_000);
      }
    }
  }

  /** Reads every page at one resourceVersion, then swaps the store. */
  private async list(signal: AbortSignal): Promise<void> {
    const items: KObject[] = [];
    const paged = this.store.paged;
    let cont: string | undefined;
    let rv = '';
    paged?.beginReplace();
    try {
      do {
        const page = await this.lw.list(
          { limit: this.o.pageSize ?? 500, ...(cont === undefined ? {} : { continue: cont }) },
          signal,
        );
        if (paged !== undefined) {
          if (!signal.aborted) paged.replacePage(page.items);
        } else items.push(...page.items);
        rv = page.metadata.resourceVersion ?? rv;
        cont = page.metadata.continue === '' ? undefined : page.metadata.continue;
      } while (cont !== undefined);
    } catch (err) {
      paged?.abortReplace();
      throw err;
    }
    if (signal.aborted) {
      paged?.abortReplace();
      return;
    }
    if (paged !== undefined) paged.endReplace(rv);
    else this.store.replace(items, rv);
    this.rv = rv;
    this.relists++;
    this.backoffMs = this.o.backoffInitialMs ?? 800;
    if (!this.synced) {
      this.synced = true;
      for (const w of this.syncWaiters.splice(0)) w();
    }
  }

  private async watch(signal: AbortSignal): Promise<void> {
    const timeout =
      this.o.watchTimeoutSeconds?.() ?? Math.floor(300 + (this.o.random ?? Math.random)() * 300);
    for await (const ev of this.lw.watch(
      { resourceVersion: this.rv, allowWatchBookmarks: true, timeoutSeconds: timeout },
      signal,
    )) {
      if (ev.type === 'ERROR') {
        const status = ev.object as unknown as { code?: number; message?: string };
        if (status.code === 410) throw new GoneEvent(status.message ?? 'resourceVersion too old');
        throw new Error(`watch error: ${status.message ?? JSON.stringify(ev.object)}`);
      }
      const rv = ev.object.metadata?.resourceVersion;
      if (ev.type !== 'BOOKMARK') this.store.apply(ev.type, ev.object);
      if (rv !== undefined && rv !== '') this.rv = rv;
      this.backoffMs = this.o.backoffInitialMs ?? 800;
    }
  }
}
