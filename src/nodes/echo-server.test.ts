import assert from 'node:assert/strict';
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
    const warnings: string[] = [];
    const servers = new PodServers({ warn: (m) => warnings.push(m) });
    const ip = `127.77.${process.pid % 250}.9`;
    const port = 20000 + (process.pid % 20000);
    await servers.ensure('default/web', {
      namespace: 'default',
      name: 'web',
      node: 'n1',
      ips: [ip],
      ports: [port],
    });
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
    assert.deepEqual(warnings, []);
  });

  it('logs, and does not throw, when the pod IP is not a local address', async () => {
    const warnings: string[] = [];
    const servers = new PodServers({ warn: (m) => warnings.push(m) });
    await servers.ensure('default/far', {
      namespace: 'default',
      name: 'far',
      node: 'n1',
      ips: ['192.0.2.10'],
      ports: [8080],
    });
    assert.equal(servers.listeners, 0);
    assert.equal(warnings.length, 1);
    await servers.closeAll();
  });
});
