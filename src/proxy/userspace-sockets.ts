// Socket plumbing for the userspace proxy (userspace.ts): splicing a client to its backend, waiting for a
// bind, and UDP calls that may race a close.
import type dgram from 'node:dgram';
import type net from 'node:net';

/** Pipes both ways. Half-close travels through pipe()'s end(); an error on one side resets the other. */
export function splice(client: net.Socket, backend: net.Socket): void {
  client.pipe(backend);
  backend.pipe(client);
  const cut =
    (other: net.Socket) =>
    (hadError: boolean): void => {
      if (hadError && !other.destroyed) other.resetAndDestroy();
    };
  client.once('close', cut(backend));
  backend.once('close', cut(client));
}

/** Resolves once `start` reports the socket bound; rejects with its bind error. */
export function bound(e: net.Server | dgram.Socket, start: (ok: () => void) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    e.once('error', reject);
    start(() => {
      e.off('error', reject);
      resolve();
    });
  });
}

/** For sends and closes on a UDP socket that a concurrent apply() or close() may have closed: UDP may
 * drop, and the client retries. */
export function quietly(f: () => void): void {
  try {
    f();
  } catch {
    // the socket is closed
  }
}
