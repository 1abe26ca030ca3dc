import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { listen, servePaths } from './http-endpoint.js';

const close = (s: Server): Promise<void> =>
  new Promise<void>((resolve) => {
    s.close(() => resolve());
    s.closeAllConnections();
  });

describe('servePaths', () => {
  it('answers its paths (query cut off) and 404s the rest as Go does', async () => {
    const seen: string[] = [];
    const server = await servePaths('127.0.0.1', 0, (path, _req, res) => {
      seen.push(path);
      if (path !== '/ok') return false;
      res.writeHead(200).end('fine');
      return true;
    });
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const ok = await fetch(`${base}/ok?x=1`);
      assert.equal(ok.status, 200);
      assert.equal(await ok.text(), 'fine');
      const missing = await fetch(`${base}/nope`);
      assert.equal(missing.status, 404);
      assert.equal(missing.headers.get('content-type'), 'text/plain');
      assert.equal(await missing.text(), '404 page not found\n');
      assert.deepEqual(seen, ['/ok', '/nope']);
    } finally {
      await close(server);
    }
  });
});

describe('listen', () => {
  it('rejects with the listen error, and leaves no error handler behind once listening', async () => {
    const first = createServer();
    await listen(first, { host: '127.0.0.1', port: 0 });
    try {
      assert.equal(first.listenerCount('error'), 0);
      const port = (first.address() as AddressInfo).port;
      const second = createServer();
      await assert.rejects(listen(second, { host: '127.0.0.1', port }), { code: 'EADDRINUSE' });
    } finally {
      await close(first);
    }
  });
});
