// How etcd and gRPC failures become StoreErrors: matched on etcd's stable server messages.
import { StoreError } from '../store.js';
import { errText } from '../../api/err-text.js';

/** A short reason for a failed first contact: the socket error, or the deadline that passed. */
export function unreachableReason(err: unknown, timeoutMs: number): string {
  const msg = errText(err);
  const errno = /\b(E[A-Z]{3,})\b/.exec(msg)?.[1];
  if (errno !== undefined) return `${errno === 'ECONNREFUSED' ? 'connection refused' : errno} (${errno})`;
  if (/deadline|timed? ?out/i.test(msg)) return `no answer within ${timeoutMs} ms`;
  return msg.split('\n')[0]!.replace(/\s*Resolution note:.*$/, '');
}

export function mapError(what: string, err: unknown, key?: string): StoreError {
  if (err instanceof StoreError) return err;
  const msg = errText(err);
  const details = key === undefined ? {} : { key };
  if (msg.includes('required revision has been compacted')) {
    return new StoreError('Compacted', `${what}: required revision has been compacted`, details, {
      cause: err,
    });
  }
  if (msg.includes('future revision')) {
    return new StoreError('FutureRevision', `${what}: required revision is a future revision`, details, {
      cause: err,
    });
  }
  if (msg.includes('request is too large') || msg.includes('larger than max')) {
    return new StoreError('TooLarge', `${what}: etcd refused the request as too large (${msg})`, details, {
      cause: err,
    });
  }
  if (err instanceof Error && err.name === 'ClientClosedError') {
    return new StoreError('Closed', 'store is closed', details, { cause: err });
  }
  return new StoreError('Unavailable', `${what}: ${msg}`, details, { cause: err });
}
