// The containers of simulated pods: a taken port crash-loops (the first failure restarted at once, then a
// back-off), an address the host lacks does not (the pod runs unserved, as it always has), and a start
// that works after a crash reports the restarts.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import type { KObject } from '../api/object.js';
import { PodContainers } from './pod-containers.js';

const IP = `127.78.${process.pid % 250}.20`;
const PORT = 22000 + (process.pid % 20000);
const T0 = Date.parse('2026-11-27T10:00:00Z');

const pod = (uid = 'u1'): KObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid },
    spec: { containers: [{ name: 'web', image: 'echo', ports: [{ containerPort: PORT }] }] },
    status: { phase: 'Pending' },
  }) as KObject;

const logs: string[] = [];
const containers = new PodContainers({ info: (m) => logs.push(m), warn: (m) => logs.push(m) });
afterEach(async () => {
  await containers.stopAll();
  logs.length = 0;
});

describe('PodContainers', () => {
  it('a taken port: restarted at once, then CrashLoopBackOff; starts again once the port is free', async () => {
    const squatter = createServer().listen({ host: IP, port: PORT });
    await once(squatter, 'listening');
    try {
      assert.equal(await containers.start('default/web', pod(), 'n1', [IP], T0, 'now'), true);
      const r = containers.restarts('default/web', 'u1')!;
      assert.equal(r['web']!.restartCount, 1);
      assert.equal(r['web']!.crash!.backoff, '10s');
      assert.equal(containers.backoffMs('default/web', 'u1', T0 + 4_000), 6_000);
      assert.equal(
        containers.restarts('default/web', 'another-uid'),
        undefined,
        'a new pod of the name starts afresh',
      );
      assert.equal(
        await containers.start('default/web', pod(), 'n1', [IP], T0 + 4_000, 'now'),
        false,
        'nothing is tried during the back-off',
      );
    } finally {
      squatter.close();
      await once(squatter, 'close');
    }
    assert.equal(await containers.start('default/web', pod(), 'n1', [IP], T0 + 10_000, 'now'), true);
    assert.deepEqual(containers.restarts('default/web', 'u1'), { web: { restartCount: 2 } });
    assert.equal(containers.backoffMs('default/web', 'u1', T0 + 10_000), undefined);
    assert.equal(await containers.start('default/web', pod(), 'n1', [IP], T0 + 11_000, 'now'), false);
    await containers.stop('default/web', true);
    assert.equal(containers.restarts('default/web', 'u1'), undefined);
  });

  it('an address the host does not have: a warning, no crash loop', async () => {
    assert.equal(await containers.start('default/far', pod(), 'n1', ['192.0.2.10'], T0, 'now'), false);
    assert.equal(containers.restarts('default/far', 'u1'), undefined);
    assert.deepEqual(logs, ['cannot serve the pod on its IP']);
  });
});
