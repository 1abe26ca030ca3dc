// The host of `up`'s controller thread, with stand-in workers: readiness follows the worker, a worker that
// dies is restarted with backoff (the API is never taken down), metrics are relayed, and stop() ends it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../runtime/logger.js';
import { until } from '../../test/e2e/testing/until.js';
import { ControllerHost } from './controller-host.js';

const data = { socketPath: '/nonexistent', token: 't', schedulerToken: 't', controllers: [] } as const;

/** A worker from source: `ready` posts ready, answers metrics, and exits when told to stop. */
const healthy = (): Worker =>
  new Worker(
    `const { parentPort } = require('node:worker_threads');
     parentPort.postMessage({ type: 'ready' });
     parentPort.on('message', (m) => {
       if (m.type === 'metrics') parentPort.postMessage({ type: 'metrics', id: m.id, text: 'workqueue_depth{name="x"} 0\\n' });
       if (m.type === 'stop') parentPort.close();
     });`,
    { eval: true },
  );

function recordingLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    info: (m) => lines.push(`info ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
  };
}

describe('ControllerHost', () => {
  it('is ready once the worker says so, relays its metrics, and stops it', async () => {
    const host = new ControllerHost({ data, log: recordingLog(), spawn: healthy });
    assert.equal(host.ready, false);
    assert.equal(await host.metrics(), '', 'no worker yet: no metrics');
    host.start();
    await until('ready', 10_000, async () => host.ready || undefined);
    assert.equal(await host.metrics(), 'workqueue_depth{name="x"} 0\n');
    await host.stop();
    assert.equal(host.ready, false);
    assert.equal(await host.metrics(), '');
  });

  it('restarts a worker that dies, with growing backoff, and logs each death', async () => {
    const log = recordingLog();
    let spawned = 0;
    const host = new ControllerHost({
      data,
      log,
      backoffMs: [20, 80],
      spawn: () => {
        spawned++;
        // The first three die at once (a crash); the fourth stays up.
        return spawned <= 3 ? new Worker('throw new Error("boom")', { eval: true }) : healthy();
      },
    });
    const t0 = Date.now();
    host.start();
    await until('ready after 3 restarts', 10_000, async () => host.ready || undefined);
    assert.equal(host.restartCount, 3);
    assert.ok(Date.now() - t0 >= 20 + 40 + 80, 'waited 20, 40 then 80 ms (capped) between restarts');
    assert.equal(log.lines.filter((l) => l === 'error controllers crashed').length, 3);
    assert.equal(log.lines.filter((l) => l === 'error controllers exited; restarting').length, 3);
    await host.stop();
  });

  it('does not restart after stop(), and terminates a worker that ignores it', async () => {
    let spawned = 0;
    const deaf = (): Worker => {
      spawned++;
      return new Worker(
        `const { parentPort } = require('node:worker_threads');
         parentPort.postMessage({ type: 'ready' });
         setInterval(() => {}, 1000);`,
        { eval: true },
      );
    };
    const host = new ControllerHost({ data, log: recordingLog(), spawn: deaf, backoffMs: [10, 10] });
    host.start();
    await until('ready', 10_000, async () => host.ready || undefined);
    await host.stop(200);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(spawned, 1);
    assert.equal(host.ready, false);
  });
});
