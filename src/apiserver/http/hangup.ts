// A response whose connection is gone is closed, and says so ('close'), also when it never got its
// socket. Node queues the responses of pipelined HTTP/1.1 requests until those before them are written;
// when the connection closes first it neither destroys the queued ones nor emits their 'close', so a
// handler waiting for room to write (a LIST's flush window) or for its client to leave (a watch) waited
// forever, holding what it had written.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Each connection's responses that have no socket yet. One 'close' listener per connection. */
const queued = new WeakMap<Socket, Set<ServerResponse>>();

const abandon = (res: ServerResponse): void => {
  if (res.destroyed || res.socket !== null) return; // Node closes an attached response itself
  res.destroy();
  res.emit('close');
};

/** Closes `res` (destroyed, 'close' emitted) once the connection `req` came on closes, if it is still open. */
export function closeWithConnection(req: IncomingMessage, res: ServerResponse): void {
  const socket = req.socket;
  if (res.socket !== null) return;
  if (socket.destroyed) {
    process.nextTick(abandon, res);
    return;
  }
  let set = queued.get(socket);
  if (set === undefined) {
    const mine = new Set<ServerResponse>();
    set = mine;
    queued.set(socket, mine);
    socket.once('close', () => {
      queued.delete(socket);
      for (const r of mine) abandon(r);
      mine.clear();
    });
  }
  const own = set;
  own.add(res);
  const forget = (): void => {
    own.delete(res);
  };
  res.once('socket', forget);
  res.once('close', forget);
}
