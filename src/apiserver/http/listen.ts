// One port, TLS only: the HTTPS server behind a front that sniffs the first byte, so a plain-HTTP
// request gets Go's 400 answer instead of a hung handshake (as kube-apiserver). Shared by the API server
// and the wrapper.
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  createServer as createNetServer,
  type AddressInfo,
  type Server as NetServer,
  type Socket,
} from 'node:net';
import { listen } from '../../runtime/http-endpoint.js';

export interface TlsListener {
  readonly https: HttpsServer;
  readonly front: NetServer;
  readonly sockets: Set<Socket>;
  readonly port: number;
}

export async function listenTls(opts: {
  readonly handler: (req: IncomingMessage, res: ServerResponse) => void;
  readonly tls: { readonly cert: string; readonly key: string; readonly clientCA?: string };
  readonly bindAddress: string;
  readonly port: number;
}): Promise<TlsListener> {
  const https: HttpsServer = createHttpsServer(
    {
      cert: opts.tls.cert,
      key: opts.tls.key,
      ...(opts.tls.clientCA === undefined
        ? {}
        : { ca: opts.tls.clientCA, requestCert: true, rejectUnauthorized: false }),
      minVersion: 'TLSv1.2',
    },
    opts.handler,
  );
  https.keepAliveTimeout = 65_000;
  https.headersTimeout = 66_000;
  https.requestTimeout = 0; // watches are long; each handler bounds its own work
  https.on('tlsClientError', () => {
    /* a failed handshake is the client's problem; nothing to log per connection */
  });
  const sockets = new Set<Socket>();
  const front = createNetServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.once('data', (head: Buffer) => {
      socket.pause();
      socket.unshift(head);
      if (head[0] === 0x16) {
        https.emit('connection', socket);
        process.nextTick(() => socket.resume());
        return;
      }
      socket.end(
        'HTTP/1.0 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n',
      );
    });
  });
  await listen(front, { port: opts.port, host: opts.bindAddress });
  return { https, front, sockets, port: (front.address() as AddressInfo).port };
}
