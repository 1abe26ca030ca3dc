// The storage contract every backend (memory, sqlite, etcd) implements, in kine's shape: exactly what an
// apiserver needs of etcd, no more. See docs/design/storage.md for the reasoning.
//
// Revisions are global to one store, strictly increasing, and never reused: every successful create,
// update or delete takes the next revision, and that number becomes the object's resourceVersion.
// Keys are strings that start with "/"; they are ordered (and prefixes matched) by their UTF-8 bytes,
// the order etcd uses, so every backend lists in the same order.

/** One stored version of a key. */
export interface KeyValue {
  readonly key: string;
  readonly value: Uint8Array;
  /** Revision of the create that started this key's current life. */
  readonly createRevision: number;
  /** Revision of the last change to this key (its resourceVersion). */
  readonly modRevision: number;
}

/**
 * One change, as watch delivers it. `revision` is the revision of the change. For a DELETE, `value` is
 * the last value the key held before the delete (what a Kubernetes DELETED event carries).
 */
export interface WatchEvent {
  readonly type: 'PUT' | 'DELETE';
  readonly key: string;
  readonly value: Uint8Array;
  readonly revision: number;
  readonly createRevision: number;
}

export interface GetOptions {
  /** Read the key as it was at this revision (default: the current revision). */
  readonly revision?: number;
}

export interface ListOptions {
  /** At most this many items (default: no limit). */
  readonly limit?: number;
  /** The token from a previous page; the page is read at that page's revision. */
  readonly continue?: string;
  /** Read at this revision (default: current). Ignored with `continue`, which carries its own. */
  readonly revision?: number;
}

export interface ListResult {
  /** The revision every item of this list (and every later page of it) was read at. */
  readonly revision: number;
  readonly items: KeyValue[];
  /** Present when more items follow; pass it back as `continue`. */
  readonly continue?: string;
}

export interface Store {
  readonly backend: 'memory' | 'sqlite' | 'etcd';

  /** The key's value, or undefined when it does not exist (at `revision`). Throws Compacted or FutureRevision. */
  get(key: string, opts?: GetOptions): Promise<KeyValue | undefined>;

  /** Every key under `prefix` (a plain byte prefix; end it with "/" to mean a folder), in key order. */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;

  /** Creates the key. Throws AlreadyExists when it exists. */
  create(key: string, value: Uint8Array): Promise<KeyValue>;

  /**
   * Replaces the key's value if its modRevision is still `expectedRevision`.
   * Throws NotFound when the key does not exist, Conflict when it changed since.
   */
  update(key: string, value: Uint8Array, expectedRevision: number): Promise<KeyValue>;

  /**
   * Deletes the key, only if its modRevision is `expectedRevision` when that is given. Returns the deleted
   * value with `modRevision` set to the revision of the delete. Throws NotFound or Conflict.
   */
  delete(key: string, expectedRevision?: number): Promise<KeyValue>;

  /**
   * Every change under `prefix` with revision > `fromRevision`, in revision order, with no gaps and no
   * duplicates, in batches. It runs until `signal` aborts (then the iterator ends without an error) or
   * it fails: Compacted when changes after `fromRevision` were compacted away, Unavailable when the
   * backend is lost, WatchOverflow when the consumer fell too far behind a backend that pushes.
   * The caller resumes after a failure from the last revision it processed.
   */
  watch(prefix: string, fromRevision: number, signal: AbortSignal): AsyncIterable<WatchEvent[]>;

  /** The newest revision. */
  currentRevision(): Promise<number>;

  /** Requests retried while the backend failed over (etcd only), for etcd_request_retries_total. */
  retries?(): StoreRetries;

  /** The oldest revision still readable: reads and watches from older revisions throw Compacted. */
  compactRevision(): Promise<number>;

  /**
   * Discards history older than `revision`: the state at `revision` and every change from it on stay.
   * Afterwards get/list at a revision below it throw Compacted, and so does a watch that would need a
   * change before it (fromRevision + 1 < revision), exactly as in etcd.
   */
  compact(revision: number): Promise<void>;

  /** Flushes and closes. Pending writes finish first; open watches end. */
  close(): Promise<void>;
}

export type StoreErrorCode =
  | 'AlreadyExists'
  | 'NotFound'
  | 'Conflict'
  | 'Compacted'
  | 'FutureRevision'
  | 'TooLarge'
  | 'InvalidArgument'
  | 'WatchOverflow'
  | 'Unavailable'
  | 'Closed'
  | 'Corrupt'
  | 'NotSvcplaneDatabase'
  | 'NotWritable'
  | 'Locked';

/** The one error type stores throw. `code` is stable; the apiserver maps it to a Kubernetes Status. */
export type StoreRetries = readonly { operation: string; reason: string; count: number }[];

export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    readonly details: { key?: string; revision?: number; compactRevision?: number } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export const isStoreError = (err: unknown, code?: StoreErrorCode): err is StoreError =>
  err instanceof StoreError && (code === undefined || err.code === code);

/** Values larger than this are refused with TooLarge: etcd's default request limit, and Kubernetes' object limit. */
export const MAX_VALUE_BYTES = 1.5 * 1024 * 1024;

export function notFoundError(key: string): StoreError {
  return new StoreError('NotFound', `key ${key} not found`, { key });
}

export function alreadyExistsError(key: string): StoreError {
  return new StoreError('AlreadyExists', `key ${key} already exists`, { key });
}

export function conflictError(key: string, expected: number, actual: number): StoreError {
  return new StoreError(
    'Conflict',
    `key ${key} was modified: expected revision ${expected}, current revision ${actual}`,
    { key, revision: actual },
  );
}
