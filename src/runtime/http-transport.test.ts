// The HTTP transport's pass-through requests (stream): method, headers and body as given, the
// transport's credentials on top, and the response's status, headers and body as they arrive.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { httpTransport } from './http-transport.js';
import type { Transport } from './transport.js';

const read = async (r: Readable): Promise<string> => {
  let text = '';
  for await (const chunk of r) text += String(chunk);
  return text;
};

describe('httpTransport.stream', () => {
  let server: Server;
  let transport: Transport;
  let seen: { req: IncomingMessage; body: string } | undefined;
  let closedEarly: Promise<void> = Promise.resolve();

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.url === '/slow') {
        // A watch-like answer: headers and a first line now, the rest never.
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.write('{"type":"ADDED"}\n');
        closedEarly = new Promise((resolve) => res.on('close', () => resolve()));
        return;
      }
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        seen = { req, body };
        res.writeHead(201, { 'Content-Type': 'application/yaml', 'X-Answer': 'yes' });
        res.end(`got ${body.length} bytes`);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const port = (server.address() as AddressInfo).port;
    transport = httpTransport({
      server: `http://127.0.0.1:${port}`,
      credentials: () => ({ headers: { Authorization: 'Bearer transport-token' } }),
    });
  });
  after(() => {
    transport.close();
    server.close();
  });

  it('sends the method, path, headers and streamed body; the transport credentials win', async () => {
    const res = await transport.stream!({
      method: 'PUT',
      path: '/api/v1/namespaces/a/widgets/w?dryRun=All',
      headers: {
        authorization: 'Bearer client-token',
        'content-type': 'application/json',
        'impersonate-group': ['dev', 'ops'],
      },
      body: Readable.from(['{"a":', '1}']),
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers['content-type'], 'application/yaml');
    assert.equal(res.headers['x-answer'], 'yes');
    assert.equal(await read(res.body), 'got 7 bytes');
    assert.ok(seen !== undefined);
    assert.equal(seen.req.method, 'PUT');
    assert.equal(seen.req.url, '/api/v1/namespaces/a/widgets/w?dryRun=All');
    assert.equal(seen.body, '{"a":1}');
    assert.equal(seen.req.headers.authorization, 'Bearer transport-token');
    assert.deepEqual(seen.req.headersDistinct['impersonate-group'], ['dev', 'ops']);
  });

  it('hands back the response as it streams, and an abort ends the request', async () => {
    const ac = new AbortController();
    const res = await transport.stream!({ method: 'GET', path: '/slow', headers: {}, signal: ac.signal });
    assert.equal(res.status, 200);
    const first = await new Promise<string>((resolve) =>
      res.body.once('data', (d: Buffer) => resolve(String(d))),
    );
    assert.equal(first, '{"type":"ADDED"}\n');
    res.body.on('error', () => undefined);
    ac.abort();
    await closedEarly;
  });

  it('only ever talks to its own server: a path that names another host is refused', async () => {
    for (const path of ['//evil.example:1/x', 'http://evil.example:1/y', 'x'])
      await assert.rejects(transport.stream!({ method: 'POST', path, headers: {} }), /not an absolute path/);
  });

  it('rejects when the server cannot be reached', async () => {
    const nowhere = httpTransport({ server: 'http://127.0.0.1:1', credentials: () => ({}) });
    await assert.rejects(nowhere.stream!({ method: 'GET', path: '/', headers: {} }), /ECONNREFUSED/);
    nowhere.close();
  });
});
