// One event handler's deliveries, apart from the store and from every other handler (client-go's
// processorListener in shared_informer.go): the informer writes its store first, then appends what
// changed to each handler's own unbounded queue and goes on. Each queue hands its notifications to its
// handler in order, one at a time, starting on a later microtask: a handler that returns a Promise is
// awaited before its next notification, so a slow handler delays only itself, never the store, the
// reflector or another handler. A throw (or a rejection) is reported and the queue goes on.
import type { KObject } from '../api/object.js';

/** What a handler returns is ignored unless it is a Promise, which its queue awaits before the next call. */
export interface EventHandlers {
  onAdd?(obj: KObject): unknown;
  onUpdate?(old: KObject, obj: KObject): unknown;
  onDelete?(obj: KObject): unknown;
}

/** What addHandlers gives back (client-go's ResourceEventHandlerRegistration). */
export interface HandlerRegistration {
  /**
   * True once the handler has been handed every object of the initial list: the store's first full
   * list if the handler was added before it, or else the objects cached when it was added (client-go's
   * per-registration HasSynced). Later events do not count.
   */
  readonly hasSynced: boolean;
}

type Notification =
  | { readonly type: 'add'; readonly obj: KObject }
  | { readonly type: 'update'; readonly old: KObject; readonly obj: KObject }
  | { readonly type: 'delete'; readonly obj: KObject };

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  typeof (v as { then?: unknown } | null | undefined)?.then === 'function';

export class HandlerQueue implements HandlerRegistration {
  private buffer: Notification[] = [];
  private head = 0;
  private running: Promise<void> | undefined;
  private stopped = false;
  private queued = 0;
  private delivered = 0;
  /** How many notifications make up the initial list, once it has been queued. */
  private initialList: number | undefined;
  private syncWaiters: (() => void)[] = [];

  constructor(
    private readonly handlers: EventHandlers,
    private readonly onError: (err: unknown) => void,
  ) {}

  add(obj: KObject): void {
    this.push({ type: 'add', obj });
  }

  update(old: KObject, obj: KObject): void {
    this.push({ type: 'update', old, obj });
  }

  delete(obj: KObject): void {
    this.push({ type: 'delete', obj });
  }

  /** Says that everything queued so far is the initial list. */
  initialListQueued(): void {
    if (this.initialList !== undefined) return;
    this.initialList = this.queued;
    this.checkSynced();
  }

  get hasSynced(): boolean {
    return this.initialList !== undefined && this.delivered >= this.initialList;
  }

  /** Resolves once hasSynced is true. */
  synced(): Promise<void> {
    if (this.hasSynced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** Drops what is still queued and waits for the notification in hand, as a stopped informer does. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.buffer = [];
    this.head = 0;
    await this.running;
  }

  private push(n: Notification): void {
    if (this.stopped) return;
    this.buffer.push(n);
    this.queued++;
    this.running ??= this.run();
  }

  private async run(): Promise<void> {
    await Promise.resolve(); // never inside the store's write: the caller goes on first
    while (!this.stopped && this.head < this.buffer.length) {
      const n = this.buffer[this.head++]!;
      if (this.head === this.buffer.length) {
        this.buffer = [];
        this.head = 0;
      } else if (this.head >= 1024 && this.head * 2 >= this.buffer.length) {
        this.buffer = this.buffer.slice(this.head);
        this.head = 0;
      }
      try {
        const result = this.deliver(n);
        if (isThenable(result)) await result;
      } catch (err) {
        this.onError(err);
      }
      this.delivered++;
      this.checkSynced();
    }
    this.running = undefined;
  }

  private deliver(n: Notification): unknown {
    const h = this.handlers;
    if (n.type === 'add') return h.onAdd?.(n.obj);
    if (n.type === 'update') return h.onUpdate?.(n.old, n.obj);
    return h.onDelete?.(n.obj);
  }

  private checkSynced(): void {
    if (this.syncWaiters.length > 0 && this.hasSynced) for (const w of this.syncWaiters.splice(0)) w();
  }
}
