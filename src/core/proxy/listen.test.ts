import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  listenAddress,
  listenerEndpoints,
  listenerId,
  listenPort,
  plannedListeners,
  sourceFilter,
  type Listener,
} from './listen.js';
import { portState, stateOf } from './testing/builders.js';
import type { ServicePortState } from './types.js';

/** A service port with no cluster IP unless given (the builders' default is 10.96.0.10). */
const servicePort = ({ key, ...o }: Partial<ServicePortState> & { key: string }): ServicePortState =>
  portState(key, { clusterIPs: [], ...o });

describe('listenAddress', () => {
  const table: Array<[string, string | undefined, string | undefined]> = [
    ['10.96.3.7', '127.1.0.0/16', '127.1.3.7'],
    ['10.96.3.7', '127.1.0.0/24', '127.1.0.7'],
    ['10.111.3.7', '127.0.0.0/8', '127.111.3.7'],
    ['10.96.3.7', '127.1.2.3/16', '127.1.3.7'], // host bits in the CIDR text are ignored, as ParseCIDR does
    ['10.96.3.7', '127.1.0.0/32', '127.1.0.0'],
    ['10.96.3.7', undefined, '10.96.3.7'],
    ['fd00::10', undefined, 'fd00::10'],
    ['fd00::10', '127.1.0.0/16', undefined],
    ['10.96.3.7', 'fd00:1::/64', undefined],
    ['fd00::1:10', 'fd00:77::/112', 'fd00:77::10'],
    ['not-an-ip', '127.1.0.0/16', undefined],
    ['10.96.3.7', '127.1.0.0/99', undefined],
    ['10.96.3.7', 'garbage', undefined],
  ];
  for (const [ip, cidr, want] of table) {
    it(`maps ${ip} with ${cidr ?? 'no CIDR'} to ${want ?? 'nothing'}`, () => {
      assert.equal(listenAddress(ip, cidr), want);
    });
  }
});

describe('plannedListeners', () => {
  it('plans a cluster listener per mapped cluster IP, node-port listeners and external listeners', () => {
    const state = stateOf(
      servicePort({
        key: 'default/web:http',
        clusterIPs: ['10.96.3.7', 'fd00::7'],
        port: 80,
        nodePort: 30080,
        externalIPs: ['192.0.2.10'],
        loadBalancerIPs: ['192.0.2.10', '198.51.100.1'],
      }),
    );
    const { listeners, conflicts } = plannedListeners(state, {
      cidr: '127.1.0.0/16',
      nodePortAddresses: ['127.0.0.1', '127.0.0.2', 'bogus'],
    });
    assert.deepEqual(conflicts, []);
    assert.deepEqual(
      listeners.map((l) => `${l.kind} ${listenerId(l)}`),
      [
        'cluster TCP/127.1.3.7:80',
        'nodePort TCP/127.0.0.1:30080',
        'nodePort TCP/127.0.0.2:30080',
        'external TCP/192.0.2.10:80',
        'external TCP/198.51.100.1:80',
      ],
    );
  });

  it('adds --userspace-port-offset to cluster and external ports, not to node ports, and drops ports past 65535', () => {
    const state = stateOf(
      servicePort({
        key: 'default/web:http',
        clusterIPs: ['10.96.3.7'],
        port: 80,
        nodePort: 30080,
        externalIPs: ['192.0.2.10'],
      }),
      servicePort({ key: 'default/high', clusterIPs: ['10.96.3.8'], port: 60000 }),
    );
    const { listeners, conflicts } = plannedListeners(state, {
      cidr: '127.1.0.0/16',
      nodePortAddresses: ['127.0.0.1'],
      portOffset: 10000,
    });
    assert.deepEqual(conflicts, []);
    assert.deepEqual(
      listeners.map((l) => `${l.kind} ${listenerId(l)}`),
      ['cluster TCP/127.1.3.7:10080', 'nodePort TCP/127.0.0.1:30080', 'external TCP/192.0.2.10:10080'],
    );
    assert.equal(listenPort(80, 10000), 10080);
    assert.equal(listenPort(65535, 1), undefined);
    assert.equal(listenPort(80), 80);
  });

  it('listens on the cluster IPs themselves, both families, without a CIDR', () => {
    const state = stateOf(servicePort({ key: 'a/b', clusterIPs: ['10.0.0.1', 'fd00::1'], protocol: 'UDP' }));
    const { listeners } = plannedListeners(state, { nodePortAddresses: [] });
    assert.deepEqual(listeners.map(listenerId), ['UDP/10.0.0.1:80', 'UDP/[fd00::1]:80']);
  });

  it('gives a shared address:port/protocol to the first key and reports the other', () => {
    const state = stateOf(
      servicePort({ key: 'ns/zeta', clusterIPs: ['10.96.3.7'] }),
      servicePort({ key: 'ns/alpha', clusterIPs: ['10.100.3.7'] }), // same host bits under /16
      servicePort({ key: 'ns/udp', clusterIPs: ['10.101.3.7'], protocol: 'UDP' }), // other protocol: no clash
    );
    const { listeners, conflicts } = plannedListeners(state, { cidr: '127.1.0.0/16', nodePortAddresses: [] });
    assert.deepEqual(
      listeners.map((l) => [l.key, listenerId(l)]),
      [
        ['ns/alpha', 'TCP/127.1.3.7:80'],
        ['ns/udp', 'UDP/127.1.3.7:80'],
      ],
    );
    assert.equal(conflicts.length, 1);
    assert.equal(conflicts[0]?.listener.key, 'ns/zeta');
    assert.equal(conflicts[0]?.with, 'ns/alpha');
  });

  it("gives a load-balancer IP's listener the Service's source ranges of its family; an external IP none", () => {
    const state = stateOf(
      servicePort({
        key: 'default/web:http',
        port: 80,
        externalIPs: ['192.0.2.10'],
        loadBalancerIPs: ['192.0.2.10', '198.51.100.1', '2001:db8::5'],
        loadBalancerSourceRanges: ['203.0.113.0/24', '2001:db8:1::/48'],
        sourceRangesHoldNode: [4],
      }),
    );
    const { listeners } = plannedListeners(state, { nodePortAddresses: [] });
    assert.deepEqual(
      listeners.map((l) => [listenerId(l), l.sourceRanges]),
      [
        ['TCP/192.0.2.10:80', undefined],
        ['TCP/198.51.100.1:80', ['203.0.113.0/24', '192.0.2.10/32', '198.51.100.1/32']],
        ['TCP/[2001:db8::5]:80', ['2001:db8:1::/48']],
      ],
    );
    const open = plannedListeners(
      stateOf(
        servicePort({
          key: 'default/web:http',
          loadBalancerIPs: ['2001:db8::5'],
          loadBalancerSourceRanges: ['10.0.0.0/8'],
        }),
      ),
      { nodePortAddresses: [] },
    ).listeners;
    assert.equal(
      open[0]?.sourceRanges,
      undefined,
      'ranges of the other family only: open, as in iptables mode',
    );
  });

  it('lets a client through a firewalled listener only from its ranges', () => {
    const l: Listener = {
      key: 'k',
      kind: 'external',
      protocol: 'TCP',
      address: '198.51.100.1',
      port: 80,
      sourceRanges: ['203.0.113.0/24', '2001:db8:1::/48'],
    };
    const allow = sourceFilter(l);
    const table: Array<[string | undefined, boolean]> = [
      ['203.0.113.7', true],
      ['::ffff:203.0.113.7', true],
      ['203.0.114.1', false],
      ['2001:db8:1:2::1', true],
      ['2001:db8:2::1', false],
      ['garbage', false],
      [undefined, false],
    ];
    for (const [address, want] of table) assert.equal(allow(address), want, String(address));
    const { sourceRanges: _r, ...open } = l;
    assert.equal(sourceFilter(open)('192.0.2.1'), true);
  });

  it('plans no node-port listeners when the service port has no node port', () => {
    const state = stateOf(servicePort({ key: 'a/b', clusterIPs: ['10.0.0.1'] }));
    const { listeners } = plannedListeners(state, { cidr: '127.9.0.0/16', nodePortAddresses: ['127.0.0.1'] });
    assert.deepEqual(
      listeners.map((l) => l.kind),
      ['cluster'],
    );
  });

  it('never plans two listeners on one socket, and every cluster IP is planned or reported once', () => {
    const ip4 = fc.constantFrom('10.96.0.1', '10.97.0.1', '10.96.0.2', '10.96.1.1', 'fd00::1', 'bad');
    const sp = fc.record({
      name: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
      protocol: fc.constantFrom('TCP' as const, 'UDP' as const),
      port: fc.constantFrom(53, 80),
      clusterIPs: fc.uniqueArray(ip4, { maxLength: 2 }),
      nodePort: fc.option(fc.constantFrom(30000, 30001), { nil: undefined }),
      externalIPs: fc.array(fc.constantFrom('192.0.2.1', '127.1.0.1', '127.1.1.1'), { maxLength: 2 }),
    });
    const input = fc.record({
      sps: fc.uniqueArray(sp, { maxLength: 8, selector: (s) => `${s.name}:${s.port}:${s.protocol}` }),
      cidr: fc.constantFrom('127.1.0.0/16', '127.1.0.0/24', undefined),
      nodePortAddresses: fc.subarray(['127.0.0.1', '127.1.0.1']),
    });
    fc.assert(
      fc.property(input, ({ sps, cidr, nodePortAddresses }) => {
        const state = stateOf(
          ...sps.map(({ name, port, protocol, nodePort, ...rest }) =>
            servicePort({
              key: `ns/${name}:${port}-${protocol}`,
              port,
              protocol,
              ...(nodePort === undefined ? {} : { nodePort }),
              ...rest,
            }),
          ),
        );
        const opts = cidr === undefined ? { nodePortAddresses } : { cidr, nodePortAddresses };
        const { listeners, conflicts } = plannedListeners(state, opts);
        const ids = listeners.map(listenerId);
        assert.equal(new Set(ids).size, ids.length, 'two listeners share a socket');
        const byId = new Map<string, Listener>(listeners.map((l) => [listenerId(l), l]));
        for (const c of conflicts) {
          const holder = byId.get(listenerId(c.listener));
          assert.equal(holder?.key, c.with, 'a conflict names the holder of the socket');
          assert.ok(c.with <= c.listener.key, 'the first key by order wins');
        }
        for (const s of state.values()) {
          for (const ip of s.clusterIPs) {
            const address = listenAddress(ip, cidr);
            if (address === undefined) continue;
            const same = (l: Listener): boolean =>
              l.key === s.key && l.kind === 'cluster' && l.address === address && l.port === s.port;
            const planned = listeners.filter(same).length;
            const reported = conflicts.filter((c) => same(c.listener)).length;
            // Two cluster IPs of one service mapping to one address share the listener (counted once).
            assert.equal(planned + reported, 1, `${s.key} ${ip}: planned ${planned}, reported ${reported}`);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('listenerEndpoints', () => {
  const ep = (ip: string, ready: boolean) => ({ ip, port: 8080, local: false, ready });
  const sp = servicePort({
    key: 'a/b',
    internal: [ep('10.1.0.1', true), ep('10.1.0.2', false)],
    external: [ep('10.1.0.3', false)],
  });

  it('gives cluster listeners the internal endpoints and the others the external ones', () => {
    assert.deepEqual(listenerEndpoints(sp, 'cluster'), [ep('10.1.0.1', true)]);
    assert.deepEqual(listenerEndpoints(sp, 'nodePort'), [ep('10.1.0.3', false)]);
    assert.deepEqual(listenerEndpoints(sp, 'external'), [ep('10.1.0.3', false)]);
  });

  it('falls back to serving-terminating endpoints only when none is ready', () => {
    const terminating = servicePort({ key: 'a/b', internal: [ep('10.1.0.2', false)] });
    assert.deepEqual(listenerEndpoints(terminating, 'cluster'), [ep('10.1.0.2', false)]);
    assert.deepEqual(listenerEndpoints(servicePort({ key: 'a/b' }), 'cluster'), []);
  });
});
