// Real sockets, loopback only (testing/userspace-harness.ts): round robin, affinity, retries, drains,
// listeners that come and go, UDP sessions.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { afterEach, describe, it } from 'node:test';
import {
  ask,
  cleanups,
  conversation,
  isFree,
  freePort,
  nextHost,
  proxy,
  runCleanups,
  sequential,
  service,
  tally,
  tcpBackend,
  udpAsk,
  udpBackend,
  udpClient,
  type Backend,
} from './testing/userspace-harness.js';
import type { ServicePortState } from '../core/proxy/types.js';

afterEach(runCleanups);

describe('UserspaceProxy TCP', () => {
  it('round-robins new connections over the endpoints', async () => {
    const backends = [await tcpBackend('b1'), await tcpBackend('b2'), await tcpBackend('b3')];
    const s = await service('rr');
    const { p } = proxy();
    assert.deepEqual(await p.apply(s.of(backends)), {
      opened: 1,
      closed: 0,
      updated: 0,
      failed: [],
      conflicts: 0,
    });
    assert.deepEqual(p.addresses(s.key), [
      { key: s.key, kind: 'cluster', protocol: 'TCP', address: s.address, port: s.port },
    ]);
    assert.deepEqual(tally(await sequential(9, () => ask(s))), { b1: 3, b2: 3, b3: 3 });
    assert.equal(await ask(s, 'hello'), 'b1:hello');
    assert.equal(p.stats().connectionsTotal, 10);
  });

  it('apply() of the same state changes nothing, and an endpoint change keeps the listener', async () => {
    const [b1, b2] = [await tcpBackend('b1'), await tcpBackend('b2')];
    const s = await service('idem');
    const { p } = proxy();
    await p.apply(s.of([b1]));
    assert.deepEqual(await p.apply(s.of([b1])), {
      opened: 0,
      closed: 0,
      updated: 0,
      failed: [],
      conflicts: 0,
    });
    const long = await conversation(s);
    assert.deepEqual(await p.apply(s.of([b2])), {
      opened: 0,
      closed: 0,
      updated: 1,
      failed: [],
      conflicts: 0,
    });
    assert.equal(await ask(s), 'b2:x');
    assert.equal(await long.say('still'), 'b1:still');
  });

  it('sends a client IP to the same endpoint while ClientIP affinity holds', async () => {
    const backends = [await tcpBackend('b1'), await tcpBackend('b2'), await tcpBackend('b3')];
    const s = await service('sticky');
    const { p } = proxy();
    await p.apply(s.of(backends, { affinityTimeoutSeconds: 60 }));
    const a = tally(await sequential(5, () => ask(s, 'x', '127.77.100.1')));
    const b = tally(await sequential(5, () => ask(s, 'x', '127.77.100.2')));
    assert.deepEqual(Object.values(a), [5]);
    assert.deepEqual(Object.values(b), [5]);
    assert.notDeepEqual(a, b, 'two clients start on different endpoints by round robin');
  });

  it('skips an endpoint that refuses and still answers the client', async () => {
    const dead = await tcpBackend('dead');
    await cleanups.pop()?.(); // close it: its port now refuses
    const live = await tcpBackend('live');
    const s = await service('retry');
    const { p } = proxy();
    await p.apply(s.of([dead, live]));
    assert.deepEqual(tally(await sequential(4, () => ask(s))), { live: 4 });
    assert.ok(p.stats().connectFailures >= 2);
  });

  it('resets the client when every endpoint fails', async () => {
    const dead = await tcpBackend('dead');
    await cleanups.pop()?.();
    const s = await service('alldead');
    const { p } = proxy();
    await p.apply(s.of([dead]));
    await assert.rejects(ask(s), (e: NodeJS.ErrnoException) => e.code === 'ECONNRESET' || e.code === 'EPIPE');
  });

  it('refuses connections while there are no endpoints, and answers once they appear', async () => {
    const b1 = await tcpBackend('b1');
    const s = await service('empty');
    const { p } = proxy();
    assert.equal((await p.apply(s.of([]))).opened, 0);
    await assert.rejects(ask(s), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');
    assert.equal((await p.apply(s.of([b1]))).opened, 1);
    assert.equal(await ask(s), 'b1:x');
    assert.equal((await p.apply(s.of([]))).closed, 1);
    await assert.rejects(ask(s), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');
  });

  it('uses serving-terminating endpoints only when none is ready', async () => {
    const [old, fresh] = [await tcpBackend('old'), await tcpBackend('fresh')];
    const s = await service('ready');
    const { p } = proxy();
    const eps = (ready: boolean) => [{ ip: old.ip, port: old.port, local: true, ready }];
    const both = [...eps(false), { ip: fresh.ip, port: fresh.port, local: true, ready: true }];
    await p.apply(s.of([], { internal: both }));
    assert.deepEqual(tally(await sequential(3, () => ask(s))), { fresh: 3 });
    await p.apply(s.of([], { internal: eps(false) }));
    assert.equal(await ask(s), 'old:x');
  });

  it('lets a connection to a removed endpoint finish and sends new ones elsewhere', async () => {
    const backends = [await tcpBackend('b1'), await tcpBackend('b2'), await tcpBackend('b3')];
    const s = await service('drain');
    const { p } = proxy();
    await p.apply(s.of(backends));
    const long = await conversation(s);
    const first = await long.say('one');
    assert.equal(first, 'b1:one');
    assert.equal((await p.apply(s.of(backends.slice(1)))).updated, 1);
    assert.equal(await long.say('two'), 'b1:two');
    assert.deepEqual(tally(await sequential(4, () => ask(s))), { b2: 2, b3: 2 });
    assert.equal(p.stats().activeConnections, 1);
  });

  it('stops accepting on a removed listener but lets its connections finish', async () => {
    const b1 = await tcpBackend('b1');
    const s = await service('gone');
    const { p } = proxy();
    await p.apply(s.of([b1]));
    const long = await conversation(s);
    assert.deepEqual(await p.apply(new Map()), {
      opened: 0,
      closed: 1,
      updated: 0,
      failed: [],
      conflicts: 0,
    });
    assert.deepEqual(p.addresses(s.key), []);
    await assert.rejects(ask(s), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');
    assert.equal(await long.say('after'), 'b1:after');
  });

  it('forwards node-port and external-IP traffic to the external endpoints', async () => {
    const [inside, outside] = [await tcpBackend('inside'), await tcpBackend('outside')];
    const s = await service('np');
    const h = nextHost();
    const nodeAddress = `127.77.150.${h}`;
    // An external IP whose copy of the service port is free (the port was picked on the cluster address).
    let externalIP = '';
    for (let i = 0; i < 250 && externalIP === ''; i++)
      if (await isFree(`127.77.151.${((h + i) % 250) + 1}`, s.port))
        externalIP = `127.77.151.${((h + i) % 250) + 1}`;
    assert.notEqual(externalIP, '', `no 127.77.151.x address has port ${s.port} free`);
    const nodePort = await freePort(nodeAddress);
    const eps = (b: Backend) => [{ ip: b.ip, port: b.port, local: true, ready: true }];
    const state = s.of([inside], { nodePort, externalIPs: [externalIP], external: eps(outside) });
    const { p } = proxy({ nodePortAddresses: [nodeAddress] });
    assert.equal((await p.apply(state)).opened, 3);
    assert.deepEqual(
      p.addresses(s.key).map((l) => l.kind),
      ['cluster', 'nodePort', 'external'],
    );
    assert.equal(await ask(s), 'inside:x');
    assert.equal(await ask({ ...s, address: nodeAddress, port: nodePort }), 'outside:x');
    assert.equal(await ask({ ...s, address: externalIP }), 'outside:x');
  });

  it('reports two service ports mapped to one listen address as a conflict', async () => {
    const b1 = await tcpBackend('b1');
    const s = await service('a-first');
    const { p, logs } = proxy();
    const other: ServicePortState = {
      ...(s.of([b1]).get(s.key) as ServicePortState),
      key: 'default/z-second',
      name: 'z-second',
      clusterIPs: [s.clusterIP.replace(/^10\.96\./, '10.97.')], // same host bits under /16
    };
    const state = new Map([...s.of([b1]), [other.key, other]]);
    const r = await p.apply(state);
    assert.equal(r.conflicts, 1);
    assert.equal(r.opened, 1);
    assert.equal(p.addresses(s.key).length, 1);
    assert.deepEqual(p.addresses(other.key), []);
    assert.equal(logs.filter((l) => l.startsWith('warn')).length, 1);
    await p.apply(state);
    assert.equal(logs.filter((l) => l.startsWith('warn')).length, 1, 'a standing conflict is logged once');
  });

  it('reports a listen address it cannot bind instead of throwing', async () => {
    const b1 = await tcpBackend('b1');
    const s = await service('taken');
    const squatter = net.createServer().listen({ host: s.address, port: s.port });
    await once(squatter, 'listening');
    cleanups.push(() => new Promise((r) => squatter.close(() => r())));
    const { p } = proxy();
    const r = await p.apply(s.of([b1]));
    assert.equal(r.opened, 0);
    assert.match(r.failed[0]?.error ?? '', /EADDRINUSE/);
  });

  it('close() ends listeners and proxied connections, leaving no handles behind', async () => {
    const b1 = await tcpBackend('b1');
    const u1 = await udpBackend('u1');
    const [s, su] = [await service('closing'), await service('closing-udp', 'UDP')];
    const { p } = proxy();
    await p.apply(new Map([...s.of([b1]), ...su.of([u1])]));
    const long = await conversation(s);
    await long.say('hi');
    assert.equal(await udpAsk(su, 'ping'), 'u1:ping');
    const ended = once(long.socket, 'close');
    await p.close();
    await ended;
    await assert.rejects(p.apply(s.of([b1])), /closed/);
    for (const c of cleanups.splice(0).reverse()) await c();
    await new Promise((r) => setTimeout(r, 20)); // closed handles leave in libuv's close phase
    const left = process.getActiveResourcesInfo().filter((r) => /TCP|UDP/.test(r));
    assert.deepEqual(left, []);
  });
});

describe('UserspaceProxy UDP', () => {
  it('relays a datagram to the endpoint and the reply back', async () => {
    const u1 = await udpBackend('u1');
    const s = await service('dns', 'UDP');
    const { p } = proxy();
    assert.equal((await p.apply(s.of([u1]))).opened, 1);
    const client = await udpClient();
    assert.equal(await udpAsk(s, 'q1', client), 'u1:q1');
    assert.equal(await udpAsk(s, 'q2', client), 'u1:q2');
    assert.equal(p.stats().udpSessions, 1);
  });

  it('round-robins client addresses over the endpoints and ends idle sessions', async () => {
    const backends = [await udpBackend('u1'), await udpBackend('u2'), await udpBackend('u3')];
    const s = await service('udp-rr', 'UDP');
    const { p } = proxy({ udpIdleMs: 100 });
    await p.apply(s.of(backends));
    const answers = await sequential(6, () => udpAsk(s, 'q'));
    assert.deepEqual(tally(answers), { u1: 2, u2: 2, u3: 2 });
    assert.equal(p.stats().udpSessions, 6);
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(p.stats().udpSessions, 0);
  });

  it('ends the sessions of a removed endpoint at once (UDP has no drain)', async () => {
    const [u1, u2] = [await udpBackend('u1'), await udpBackend('u2')];
    const s = await service('udp-rm', 'UDP');
    const { p } = proxy();
    await p.apply(s.of([u1, u2]));
    const client = await udpClient();
    assert.equal(await udpAsk(s, 'a', client), 'u1:a');
    await p.apply(s.of([u2]));
    assert.equal(p.stats().udpSessions, 0);
    assert.equal(await udpAsk(s, 'b', client), 'u2:b');
  });
});
