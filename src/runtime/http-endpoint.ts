// Listening, and the small plain-HTTP endpoints (the controller manager's and the proxy's metrics and
// health servers): answer a few fixed paths, and 404 with Go's net/http text for the rest.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { ListenOptions, Server as NetServer } from 'node:net';

/**
 * Listens. Resolves once the server listens (its listen-error handler removed again: later errors are
 * the caller's to handle), rejects with the error that kept it from listening (EADDRINUSE, EACCES...).
 */
export function listen(server: NetServer, options: ListenOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Answers one request whose path (without the query) is `path`; false when the path is not served,
 * which the endpoint answers with "404 page not found".
 */
export type PathAnswer = (path: string, req: IncomingMessage, res: ServerResponse) => boolean;

/** A plain-HTTP server on host:port answering through `answer`; resolves once it listens. */
export async function servePaths(host: string, port: number, answer: PathAnswer): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (!answer(path, req, res))
      res.writeHead(404, { 'content-type': 'text/plain' }).end('404 page not found\n');
  });
  await listen(server, { port, host });
  return server;
}
