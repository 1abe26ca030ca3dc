// The health-check node port servers on real loopback sockets: answers, count updates on the same socket,
// a port change, a removal, and a port held by someone else (reported, then opened once it is free).
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, it } from 'node:test';
import type { HealthCheckService } from '../core/proxy/health-check.js';
import { ServiceHealthServers } from './service-health.js';
import { freePort, isFree } from './testing/userspace-harness.js';

const A = '127.78.0.1';
const B = '127.78.0.2';

const open: ServiceHealthServers[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

function servers(o: { healthy?: () => boolean } = {}): {
  s: ServiceHealthServers;
  errors: string[];
} {
  const errors: string[] = [];
  const s = new ServiceHealthServers({
    addresses: [A, B],
    proxyHealthy: o.healthy ?? (() => true),
    onListenError: (svc, err) =>
      errors.push(`${svc.name}:${svc.port}:${(err as NodeJS.ErrnoException).code}`),
  });
  open.push(s);
  return { s, errors };
}

const hc = (name: string, port: number, localEndpoints: number): [string, HealthCheckService] => [
  `default/${name}`,
  { namespace: 'default', name, port, localEndpoints },
];

function get(
  host: string,
  port: number,
  path = '/healthz',
): Promise<{ status: number; type: string | undefined; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host, port, path, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body: JSON.parse(text) }),
        );
      })
      .on('error', reject);
  });
}

const refused = (host: string, port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const c = net.connect({ host, port });
    c.on('connect', () => {
      c.destroy();
      resolve(false);
    });
    c.on('error', (e: NodeJS.ErrnoException) => resolve(e.code === 'ECONNREFUSED'));
  });

describe('ServiceHealthServers', () => {
  it('answers on every address, 200 with local endpoints and 503 without, on any path', async () => {
    const [p1, p2] = [await freePort(A), await freePort(A)];
    const { s, errors } = servers();
    await s.sync(new Map([hc('web', p1, 2), hc('idle', p2, 0)]));
    assert.deepEqual(errors, []);
    for (const host of [A, B]) {
      const ok = await get(host, p1);
      assert.equal(ok.status, 200);
      assert.equal(ok.type, 'application/json');
      assert.deepEqual(ok.body, {
        service: { namespace: 'default', name: 'web' },
        localEndpoints: 2,
        serviceProxyHealthy: true,
      });
      assert.equal((await get(host, p2, '/anything')).status, 503);
    }
    assert.deepEqual(
      s.open(),
      new Map([
        ['default/web', p1],
        ['default/idle', p2],
      ]),
    );
  });

  it('updates the count on the same socket, moves a changed port, closes a removed Service', async () => {
    const [p1, p2, p3] = [await freePort(A), await freePort(A), await freePort(A)];
    const { s } = servers();
    await s.sync(new Map([hc('web', p1, 1), hc('gone', p2, 1)]));
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const viaAgent = (): Promise<number> =>
      new Promise((resolve, reject) =>
        http
          .get({ host: A, port: p1, agent: keepAlive }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          })
          .on('error', reject),
      );
    assert.equal(await viaAgent(), 200);
    await s.sync(new Map([hc('web', p1, 0)]));
    assert.equal(await viaAgent(), 503, 'the same server answers with the new count');
    keepAlive.destroy();
    assert.ok(await refused(A, p2), 'a removed Service closes its port');
    assert.ok(await isFree(A, p2));
    await s.sync(new Map([hc('web', p3, 4)]));
    assert.ok(await refused(A, p1), 'the old port closes');
    assert.equal((await get(B, p3)).body['localEndpoints'], 4);
  });

  it('answers 503 while the proxy is unhealthy, whatever the count', async () => {
    const p = await freePort(A);
    let healthy = false;
    const { s } = servers({ healthy: () => healthy });
    await s.sync(new Map([hc('web', p, 3)]));
    const r = await get(A, p);
    assert.equal(r.status, 503);
    assert.equal(r.body['serviceProxyHealthy'], false);
    healthy = true;
    assert.equal((await get(A, p)).status, 200);
  });

  it('reports a port someone else holds, opens nothing for it, and opens it at a later sync once free', async () => {
    const p = await freePort(B);
    const squatter = net.createServer().listen({ host: B, port: p });
    await new Promise((r) => squatter.once('listening', r));
    const { s, errors } = servers();
    await s.sync(new Map([hc('web', p, 1)]));
    assert.deepEqual(errors, [`web:${p}:EADDRINUSE`]);
    assert.deepEqual(s.open(), new Map());
    assert.ok(await isFree(A, p), 'the address that did bind was let go again');
    await new Promise((r) => squatter.close(r));
    await s.sync(new Map([hc('web', p, 1)]));
    assert.deepEqual(s.open(), new Map([['default/web', p]]));
    assert.equal((await get(B, p)).status, 200);
  });

  it('close() leaves no listening sockets', async () => {
    const p = await freePort(A);
    const { s } = servers();
    await s.sync(new Map([hc('web', p, 1)]));
    await s.close();
    assert.ok(await isFree(A, p));
    assert.ok(await isFree(B, p));
  });
});
