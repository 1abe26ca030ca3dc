import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { request } from 'node:http';
import { describe, it } from 'node:test';
import { PodServers } from './echo-server.js';

const get = (host: string, port: number): Promise<string> =>
  new Promise((resolve, reject) => {
    const req = request({ host, port, path: '/x' }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });

describe('PodServers', () => {
  it('answers on the pod IP with the echo lines, and stops answering once the pod is closed', async () => {
    const servers = new PodServers();
    const ip = `127.77.${process.pid % 250}.9`;
    const port = 20000 + (process.pid % 20000);
    const failed = await servers.ensure('default/web', {
      namespace: 'default',
      name: 'web',
      node: 'n1',
      ips: [ip],
      ports: [port],
    });
    assert.deepEqual(failed, []);
    assert.equal(servers.listeners, 1);
    const body = await get(ip, port);
    for (const line of ['node name: n1', 'pod name: web', 'pod namespace: default', `pod IP: ${ip}`]) {
      assert.match(body, new RegExp(`^\\t${line.replaceAll('.', '\\.')}$`, 'm'));
    }
    assert.match(body, /^\tclient address: 127\.0\.0\.1:\d+$/m);
    assert.match(body, /^\treal path: \/x$/m);
    await servers.close('default/web');
    assert.equal(servers.listeners, 0);
    await assert.rejects(get(ip, port));
  });

  it('hands back, and does not throw, a pod IP that is not local or a port someone holds; retries the port', async () => {
    const servers = new PodServers();
    const far = await servers.ensure('default/far', {
      namespace: 'default',
      name: 'far',
      node: 'n1',
      ips: ['192.0.2.10'],
      ports: [8080],
    });
    assert.equal(servers.listeners, 0);
    assert.deepEqual(
      far.map((f) => [f.ip, f.port, f.code, /EADDRNOTAVAIL/.test(f.message)]),
      [['192.0.2.10', 8080, 'EADDRNOTAVAIL', true]],
    );
    const farPod = { namespace: 'default', name: 'far', node: 'n1', ips: ['192.0.2.10'], ports: [8080] };
    assert.deepEqual(
      await servers.ensure('default/far', farPod),
      [],
      'an address the host lacks is not retried',
    );

    const ip = `127.77.${process.pid % 250}.10`;
    const [p1, p2] = [21000 + (process.pid % 20000), 21001 + (process.pid % 20000)];
    const squatter = createServer().listen({ host: ip, port: p2 });
    await once(squatter, 'listening');
    const pod = { namespace: 'default', name: 'web', node: 'n1', ips: [ip], ports: [p1, p2] };
    const first = await servers.ensure('default/web', pod);
    assert.deepEqual(
      first.map((f) => [f.port, f.code, /EADDRINUSE/.test(f.message)]),
      [[p2, 'EADDRINUSE', true]],
    );
    assert.equal(servers.addresses('default/web').length, 1, 'the port that was free is served');
    // The same pod again: what failed is tried again (and fails while the port is held) ...
    assert.equal((await servers.ensure('default/web', pod)).length, 1);
    await new Promise((r) => squatter.close(r));
    // ... and succeeds once it is free.
    assert.deepEqual(await servers.ensure('default/web', pod), []);
    assert.equal(servers.listeners, 2);
    assert.match(await get(ip, p2), /pod name: web/);
    await servers.closeAll();
  });
});
