// loadBalancerSourceRanges in userspace mode, with real sockets on loopback: a load-balancer IP's
// listener serves only clients from the ranges (TCP: others are reset; UDP: their datagrams are dropped),
// while the cluster IP and external IPs stay open, as in iptables mode.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import {
  ask,
  isFree,
  proxy,
  runCleanups,
  service,
  tcpBackend,
  udpAsk,
  udpBackend,
  udpClient,
  type Svc,
} from './testing/userspace-harness.js';

afterEach(runCleanups);

/** A loopback address under 127.77.160.0/24 whose copy of `s.port` is free, for a load-balancer IP. */
async function lbAddress(s: Svc): Promise<string> {
  for (let i = 1; i < 255; i++) if (await isFree(`127.77.160.${i}`, s.port)) return `127.77.160.${i}`;
  throw new Error(`no 127.77.160.x address has port ${s.port} free`);
}

describe('UserspaceProxy load-balancer source ranges', () => {
  it('accepts a TCP client from a range and resets one from elsewhere; the cluster IP stays open', async () => {
    const b = await tcpBackend('a');
    const s = await service('fw');
    const lbIP = await lbAddress(s);
    const { p } = proxy();
    await p.apply(s.of([b], { loadBalancerIPs: [lbIP], loadBalancerSourceRanges: ['127.77.170.0/24'] }));
    const lb = { ...s, address: lbIP };
    assert.equal(await ask(lb, 'x', '127.77.170.9'), 'a:x');
    await assert.rejects(ask(lb, 'x', '127.77.171.9'), /ECONNRESET/);
    assert.equal(await ask(s, 'x', '127.77.171.9'), 'a:x');
    // The ranges change: the open listener follows at once.
    await p.apply(s.of([b], { loadBalancerIPs: [lbIP], loadBalancerSourceRanges: ['127.77.171.0/24'] }));
    assert.equal(await ask(lb, 'x', '127.77.171.9'), 'a:x');
    await assert.rejects(ask(lb, 'x', '127.77.170.9'), /ECONNRESET/);
    // No ranges: everyone.
    await p.apply(s.of([b], { loadBalancerIPs: [lbIP] }));
    assert.equal(await ask(lb, 'x', '127.77.170.9'), 'a:x');
  });

  it('drops the datagrams of a UDP client outside the ranges', async () => {
    const b = await udpBackend('u');
    const s = await service('fwudp', 'UDP');
    const lbIP = await lbAddress(s);
    const { p } = proxy();
    const client = await udpClient(); // bound on 127.77.100.9
    await p.apply(s.of([b], { loadBalancerIPs: [lbIP], loadBalancerSourceRanges: ['127.77.100.0/24'] }));
    assert.equal(await udpAsk({ ...s, address: lbIP }, 'hi', client), 'u:hi');
    await p.apply(s.of([b], { loadBalancerIPs: [lbIP], loadBalancerSourceRanges: ['127.77.101.0/24'] }));
    await assert.rejects(udpAsk({ ...s, address: lbIP }, 'again', client), /no UDP reply/);
  });
});
