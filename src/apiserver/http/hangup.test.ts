// No request waits forever: over real connections, responses whose client is gone are abandoned and
// their in-flight slots and watch registrations released — pipelined LISTs queued behind a watch when
// the connection closes, abandoned watches (also ones queued behind another), a LIST whose client
// stops reading, a request whose body stalls. Each check waits (bounded) for the gauges to reach zero.
import assert from 'node:assert/strict';
import { connect as netConnect, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { connect, type TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { mustFindResource } from '../../api/resources.js';
import { bodyTimeouts } from './body.js';
import {
  startInProcessApiServer,
  type InProcessApiServer,
} from '../../../test/support/in-process-apiserver.js';
import { until } from '../../../test/e2e/testing/until.js';

const SERVICES = mustFindResource('', 'services');
const LIST = '/api/v1/namespaces/default/services';
/**
 * How long a state may take to be reached: well below the LIST stall timeout (STALL_MS) and a watch
 * replay's grace, which would end hung requests on their own, later.
 */
const WITHIN_MS = 5_000;
const STALL_MS = 10_000;

interface Conn {
  readonly tls: TLSSocket;
  /** The TCP connection under it: paused, the client reads nothing off the wire. */
  readonly raw: Socket;
}

/**
 * A connection to the server (its throwaway certificate, on loopback) with GETs of `paths` written at
 * once, reading nothing. TLS runs over a stream of the test's own, so that pausing the TCP socket stops
 * reading from the kernel (a TLS socket on its own keeps decrypting into memory while paused).
 */
async function pipeline(api: InProcessApiServer, paths: readonly string[]): Promise<Conn> {
  const raw = netConnect(api.server.port, '127.0.0.1');
  raw.on('error', () => {});
  const wire = new Duplex({
    read() {},
    write(chunk: Buffer, _enc, cb) {
      raw.write(chunk, () => cb());
    },
  });
  raw.on('data', (d) => wire.push(d));
  raw.on('close', () => wire.destroy());
  const sock = connect({ socket: wire, rejectUnauthorized: false });
  sock.on('error', () => {});
  await new Promise<void>((resolve) => sock.once('secureConnect', () => resolve()));
  raw.pause();
  sock.write(
    paths
      .map((p) => `GET ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${api.token}\r\n\r\n`)
      .join(''),
  );
  return { tls: sock, raw };
}

const gauge = async (g: { get(): Promise<{ values: { value: number }[] }> }): Promise<number> =>
  (await g.get()).values.reduce((n, v) => n + v.value, 0);

const state = async (api: InProcessApiServer): Promise<{ inflight: number; watchers: number }> => ({
  inflight: await gauge(api.server.metrics.inflight),
  watchers: await gauge(api.server.metrics.registeredWatchers),
});

/** Waits (bounded) until the server has `inflight` requests and `watchers` watches in progress. */
async function settle(
  api: InProcessApiServer,
  inflight: number,
  watchers: number,
  ms = WITHIN_MS,
): Promise<void> {
  let last = { inflight: -1, watchers: -1 };
  await until(
    () => `${inflight} in flight and ${watchers} watchers (have ${JSON.stringify(last)})`,
    ms,
    async () => {
      last = await state(api);
      return last.inflight === inflight && last.watchers === watchers;
    },
    50,
  );
}

describe('requests whose client is gone', { timeout: 120_000 }, () => {
  let api: InProcessApiServer;
  before(async () => {
    api = await startInProcessApiServer({
      listWindow: { bytes: 256 * 1024, chunkBytes: 64 * 1024, stallMs: STALL_MS },
    });
    // ~30 MB of Services: a LIST far bigger than its window and loopback's socket buffers.
    const big = 'p'.repeat(120_000);
    for (let i = 0; i < 250; i++) {
      await api.client.create(SERVICES, 'default', {
        metadata: { name: `big-${i}`, annotations: { big } },
        spec: { ports: [{ port: 80 }] },
      });
    }
  });
  after(() => api?.stop());

  it('abandons pipelined LISTs queued behind a watch when the connection closes', async () => {
    await settle(api, 0, 0);
    const sock = await pipeline(api, [`${LIST}?watch=true`, LIST, LIST, `${LIST}?limit=500`]);
    await settle(api, 3, 1); // the LISTs wait behind the watch, which never ends by itself
    sock.raw.destroy();
    await settle(api, 0, 0);
  });

  it('ends watches whose clients leave, also watches queued behind another', async () => {
    const socks = await Promise.all([
      pipeline(api, [`${LIST}?watch=true`]),
      pipeline(api, [`${LIST}?watch=true&allowWatchBookmarks=true`, `${LIST}?watch=true&resourceVersion=0`]),
      pipeline(api, [`/api/v1/services?watch=true`, `/api/v1/services?watch=true`, LIST]),
    ]);
    await settle(api, 1, 5);
    for (const s of socks) s.raw.destroy();
    await settle(api, 0, 0);
  });

  it('drops a LIST whose client stops reading, and closes its connection', async () => {
    const { tls, raw } = await pipeline(api, [LIST]);
    await settle(api, 1, 0);
    await settle(api, 0, 0, 3 * STALL_MS); // in flight until the stall gives up on it
    let bytes = 0;
    tls.on('data', (d: Buffer) => (bytes += d.length));
    const closed = new Promise<void>((resolve) => raw.once('close', () => resolve()));
    raw.resume();
    await closed;
    assert.ok(bytes < 30_000_000, `the LIST was cut short (${bytes} bytes)`);
  });

  it('still serves a client that reads slowly', async () => {
    const { tls, raw } = await pipeline(api, [LIST]);
    let bytes = 0;
    tls.on('data', (d: Buffer) => (bytes += d.length));
    raw.on('data', () => {
      raw.pause();
      setTimeout(() => raw.resume(), 1); // a trickle, but never a stall
    });
    raw.resume();
    await until('the whole LIST', 60_000, () => bytes > 30_000_000);
    await settle(api, 0, 0);
    raw.destroy();
  });
});

describe('a request body that stalls', () => {
  let api: InProcessApiServer;
  const saved = bodyTimeouts.idleMs;
  before(async () => {
    bodyTimeouts.idleMs = 300;
    api = await startInProcessApiServer();
  });
  after(async () => {
    bodyTimeouts.idleMs = saved;
    await api?.stop();
  });

  it('is given up, its connection dropped and its slot released', async () => {
    const { tls, raw } = await pipeline(api, []);
    const closed = new Promise<void>((resolve) => raw.once('close', () => resolve()));
    raw.resume();
    tls.write(
      `POST ${LIST} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${api.token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"kind":`,
    );
    await settle(api, 1, 0);
    await settle(api, 0, 0);
    await closed;
  });
});
