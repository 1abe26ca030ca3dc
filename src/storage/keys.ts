// Key handling shared by every backend: validation, byte order, prefix ranges and continue tokens.
import { MAX_VALUE_BYTES, StoreError, type KeyValue, type ListOptions, type ListResult } from './store.js';

const MAX_KEY_BYTES = 4096;

/** A lone UTF-16 surrogate has no UTF-8 form: it would be stored as U+FFFD and collide with other keys. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Keys start with "/" and fit etcd's comfortable limits; anything else is a programming error upstream. */
export function checkKey(key: string): void {
  if (typeof key !== 'string' || !key.startsWith('/')) {
    throw new StoreError('InvalidArgument', `invalid key ${JSON.stringify(key)}: keys must start with "/"`, {
      key,
    });
  }
  if (LONE_SURROGATE.test(key)) {
    throw new StoreError('InvalidArgument', `invalid key ${JSON.stringify(key)}: not valid Unicode`, { key });
  }
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) {
    throw new StoreError('InvalidArgument', `invalid key: longer than ${MAX_KEY_BYTES} bytes`, { key });
  }
}

export function checkPrefix(prefix: string): void {
  if (typeof prefix !== 'string' || !prefix.startsWith('/')) {
    throw new StoreError('InvalidArgument', `invalid prefix ${JSON.stringify(prefix)}: must start with "/"`);
  }
  if (LONE_SURROGATE.test(prefix)) {
    throw new StoreError('InvalidArgument', `invalid prefix ${JSON.stringify(prefix)}: not valid Unicode`);
  }
}

export function checkValue(key: string, value: Uint8Array): void {
  if (!(value instanceof Uint8Array)) {
    throw new StoreError('InvalidArgument', `value for ${key} must be bytes`, { key });
  }
  if (value.byteLength > MAX_VALUE_BYTES) {
    throw new StoreError(
      'TooLarge',
      `value for ${key} is ${value.byteLength} bytes, over the limit of ${MAX_VALUE_BYTES} bytes`,
      { key },
    );
  }
}

export function checkRevision(what: string, rev: number): void {
  if (!Number.isSafeInteger(rev) || rev < 0) {
    throw new StoreError('InvalidArgument', `${what} must be a non-negative integer, got ${String(rev)}`);
  }
}

/** Compares keys by their UTF-8 bytes (etcd's and SQLite BLOB order), not by UTF-16 code units. */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}

/**
 * The smallest byte string greater than every string that starts with `prefix`: etcd's range_end for
 * a prefix. Trailing 0xff bytes are dropped and the last remaining byte incremented.
 */
export function prefixEnd(prefix: Uint8Array): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i] = end[i]! + 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]); // unreachable for prefixes that start with "/"
}

interface ContinueToken {
  /** Revision the whole list is read at. */
  readonly rev: number;
  /** Prefix of the list, so a token cannot be replayed against another prefix. */
  readonly prefix: string;
  /** The last key returned; the next page starts strictly after it. */
  readonly after: string;
}

export function encodeContinue(token: ContinueToken): string {
  return Buffer.from(JSON.stringify({ v: 1, ...token })).toString('base64url');
}

export function decodeContinue(raw: string, prefix: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch (err) {
    throw new StoreError('InvalidArgument', 'continue token is invalid', {}, { cause: err });
  }
  const t = parsed as Partial<ContinueToken> & { v?: unknown };
  if (
    t === null ||
    typeof t !== 'object' ||
    t.v !== 1 ||
    typeof t.rev !== 'number' ||
    !Number.isSafeInteger(t.rev) ||
    t.rev < 0 ||
    typeof t.after !== 'string' ||
    typeof t.prefix !== 'string'
  ) {
    throw new StoreError('InvalidArgument', 'continue token is invalid');
  }
  if (t.prefix !== prefix) {
    throw new StoreError('InvalidArgument', 'continue token was issued for another prefix');
  }
  return { rev: t.rev, prefix: t.prefix, after: t.after };
}

/** Validates `limit` (positive integer or absent). */
export function checkLimit(limit: number | undefined): void {
  if (limit !== undefined && (!Number.isSafeInteger(limit) || limit < 0)) {
    throw new StoreError('InvalidArgument', `limit must be a non-negative integer, got ${String(limit)}`);
  }
}

/** A create's arguments: a valid key and value. */
export function checkCreate(key: string, value: Uint8Array): void {
  checkKey(key);
  checkValue(key, value);
}

/** An update's arguments: a valid key and value, and the revision it must replace. */
export function checkUpdate(key: string, value: Uint8Array, expectedRevision: number): void {
  checkCreate(key, value);
  checkRevision('expectedRevision', expectedRevision);
}

/** A delete's arguments: a valid key, and the revision it must remove when one is given. */
export function checkDelete(key: string, expectedRevision: number | undefined): void {
  checkKey(key);
  if (expectedRevision !== undefined) checkRevision('expectedRevision', expectedRevision);
}

/** A watch's arguments: a valid prefix and the revision it starts after. */
export function checkWatch(prefix: string, fromRevision: number): void {
  checkPrefix(prefix);
  checkRevision('fromRevision', fromRevision);
}

/** Where a list page starts: the revision to read at (absent: the newest) and the key it resumes after. */
export interface ListStart {
  readonly revision: number | undefined;
  readonly after: string | undefined;
}

/** Checks a list's arguments; a continue token gives the revision and the last key of the page before. */
export function listStart(prefix: string, opts: ListOptions): ListStart {
  checkPrefix(prefix);
  checkLimit(opts.limit);
  if (opts.continue !== undefined && opts.continue !== '') {
    const token = decodeContinue(opts.continue, prefix);
    return { revision: token.rev, after: token.after };
  }
  return { revision: opts.revision, after: undefined };
}

/** A list page read at `revision`; when more items follow, a continue token resumes after its last key. */
export function listPage(revision: number, prefix: string, items: KeyValue[], more: boolean): ListResult {
  const last = items[items.length - 1];
  return more && last !== undefined
    ? { revision, items, continue: encodeContinue({ rev: revision, prefix, after: last.key }) }
    : { revision, items };
}
