import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conntrackArgs, conntrackDeletes } from './conntrack.js';
import { ep as builderEp, portState, stateOf } from './testing/builders.js';
import type { ProxyEndpoint, ServicePortState } from './types.js';

const ep = (ip: string): ProxyEndpoint => builderEp(ip, 53);
/** A UDP DNS-like service port on 10.96.0.10:53. */
const sp = ({ key, ...o }: Partial<ServicePortState> & { key: string }): ServicePortState =>
  portState(key, { protocol: 'UDP', port: 53, ...o });
const map = stateOf;

describe('conntrackDeletes', () => {
  it('deletes the UDP flows NATed to a removed endpoint, per cluster IP, external IP and node port', () => {
    const before = map(
      sp({
        key: 'default/dns',
        internal: [ep('10.244.0.5'), ep('10.244.1.5')],
        external: [ep('10.244.0.5'), ep('10.244.1.5')],
        externalIPs: ['192.0.2.1'],
        nodePort: 30053,
      }),
    );
    const after = map(
      sp({
        key: 'default/dns',
        internal: [ep('10.244.1.5')],
        external: [ep('10.244.1.5')],
        externalIPs: ['192.0.2.1'],
        nodePort: 30053,
      }),
    );
    assert.deepEqual(conntrackDeletes(before, after, ['default/dns'], 4), [
      { origDst: '10.96.0.10', dstNat: '10.244.0.5' },
      { origDst: '192.0.2.1', dstNat: '10.244.0.5' },
      { origPortDst: 30053, dstNat: '10.244.0.5' },
    ]);
  });

  it('clears the flows to a UDP service port that goes from no endpoints to some', () => {
    const before = map(sp({ key: 'default/dns' }));
    const after = map(sp({ key: 'default/dns', internal: [ep('10.244.1.5')] }));
    assert.deepEqual(conntrackDeletes(before, after, ['default/dns'], 4), [{ origDst: '10.96.0.10' }]);
    assert.deepEqual(
      conntrackDeletes(new Map(), after, ['default/dns'], 4),
      [{ origDst: '10.96.0.10' }],
      'a new Service',
    );
  });

  it('deletes everything NATed by a removed UDP service port; nothing for TCP, unchanged keys or the other family', () => {
    const before = map(
      sp({ key: 'default/dns', internal: [ep('10.244.0.5')], clusterIPs: ['10.96.0.10', 'fd00::10'] }),
      sp({ key: 'default/web', protocol: 'TCP', internal: [ep('10.244.0.6')] }),
      sp({ key: 'default/other', internal: [ep('10.244.0.7')] }),
    );
    const after = map(sp({ key: 'default/web', protocol: 'TCP' }), sp({ key: 'default/other' }));
    assert.deepEqual(conntrackDeletes(before, after, ['default/dns', 'default/web'], 4), [
      { origDst: '10.96.0.10', dstNat: '10.244.0.5' },
    ]);
    assert.deepEqual(conntrackDeletes(before, after, ['default/dns', 'default/web'], 6), []);
  });

  it('renders conntrack arguments', () => {
    assert.deepEqual(conntrackArgs({ origDst: '10.96.0.10', dstNat: '10.244.0.5' }, 4), [
      '-D',
      '-f',
      'ipv4',
      '-p',
      'udp',
      '--orig-dst',
      '10.96.0.10',
      '--dst-nat',
      '10.244.0.5',
    ]);
    assert.deepEqual(conntrackArgs({ origPortDst: 30053 }, 6), [
      '-D',
      '-f',
      'ipv6',
      '-p',
      'udp',
      '--dport',
      '30053',
    ]);
  });
});
