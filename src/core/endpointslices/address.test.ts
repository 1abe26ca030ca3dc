import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addressTypesForService, canonicalIP, endpointAddresses } from './address.js';
import { parseMilliValue } from './quantity.js';
import { pod, service } from './testing/builders.js';

describe('addressTypesForService', () => {
  const rows: Array<[string, Parameters<typeof service>[0], string[]]> = [
    ['ipFamilies [IPv4]', { ipFamilies: ['IPv4'] }, ['IPv4']],
    ['ipFamilies [IPv6]', { ipFamilies: ['IPv6'] }, ['IPv6']],
    ['ipFamilies [IPv6, IPv4] (listed IPv4 first)', { ipFamilies: ['IPv6', 'IPv4'] }, ['IPv4', 'IPv6']],
    ['ipFamilies win over the cluster IP', { ipFamilies: ['IPv6'], clusterIP: '10.0.0.1' }, ['IPv6']],
    ['no ipFamilies, IPv4 cluster IP', { clusterIP: '10.0.0.1' }, ['IPv4']],
    ['no ipFamilies, IPv6 cluster IP', { clusterIP: 'fd00::1' }, ['IPv6']],
    ['no ipFamilies, unparseable cluster IP counts as IPv4', { clusterIP: 'bogus' }, ['IPv4']],
    ['no ipFamilies, headless', { clusterIP: 'None' }, ['IPv4', 'IPv6']],
    ['no ipFamilies, no cluster IP', { clusterIP: '' }, ['IPv4', 'IPv6']],
    ['unknown families only fall back', { ipFamilies: ['IPv5'], clusterIP: 'fd00::1' }, ['IPv6']],
  ];
  for (const [name, o, want] of rows) {
    it(`${name} → ${want.join(',')}`, () => assert.deepEqual(addressTypesForService(service(o)), want));
  }
});

describe('canonicalIP', () => {
  const rows: Array<[string, string | undefined, string | undefined]> = [
    ['10.0.0.1', 'IPv4', '10.0.0.1'],
    ['2001:DB8::1', 'IPv6', '2001:db8::1'],
    ['2001:db8:0:0:0:0:0:1', 'IPv6', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', 'IPv6', '2001:db8::1:0:0:1'],
    ['2001:0:0:1:0:0:0:1', 'IPv6', '2001:0:0:1::1'],
    ['2001:db8:1:1:1:1:0:1', 'IPv6', '2001:db8:1:1:1:1:0:1'],
    ['0:0:0:0:0:0:0:0', 'IPv6', '::'],
    ['fd00:0:0:0:0:0:0:0', 'IPv6', 'fd00::'],
    ['0:0:0:0:0:0:0:1', 'IPv6', '::1'],
    ['::ffff:10.1.2.3', 'IPv4', '10.1.2.3'],
    ['010.0.0.1', undefined, undefined],
    ['not-an-ip', undefined, undefined],
  ];
  for (const [text, family, ip] of rows) {
    it(`${text} → ${family ?? 'invalid'} ${ip ?? ''}`, () =>
      assert.deepEqual(canonicalIP(text), family === undefined ? undefined : { family, ip }));
  }
});

describe('endpointAddresses', () => {
  it('takes every pod IP of the address type, in order', () => {
    const p = pod({ ip: ['10.0.0.1', 'fd00::1', '10.0.0.2'] });
    assert.deepEqual(endpointAddresses(p, 'IPv4'), ['10.0.0.1', '10.0.0.2']);
    assert.deepEqual(endpointAddresses(p, 'IPv6'), ['fd00::1']);
  });

  it('falls back to status.podIP and skips entries that are not IPs', () => {
    assert.deepEqual(endpointAddresses(pod({ ip: '10.0.0.1', podIPOnly: true }), 'IPv4'), ['10.0.0.1']);
    assert.deepEqual(endpointAddresses(pod({ ip: ['junk', '10.0.0.1'] }), 'IPv4'), ['10.0.0.1']);
    assert.deepEqual(endpointAddresses(pod({ ip: '' }), 'IPv4'), []);
  });
});

describe('parseMilliValue (Quantity.MilliValue)', () => {
  const rows: Array<[string, bigint | undefined]> = [
    ['1', 1000n],
    ['4', 4000n],
    ['3500m', 3500n],
    ['1.5', 1500n],
    ['0.1', 100n],
    ['.5', 500n],
    ['2k', 2000000n],
    ['1Ki', 1024000n],
    ['5e3', 5000000n],
    ['5E-3', 5n],
    ['1E', 1000000000000000000000n],
    ['100u', 1n],
    ['1n', 1n],
    ['0', 0n],
    ['-1', -1000n],
    ['+2', 2000n],
    ['', undefined],
    ['m', undefined],
    ['1x', undefined],
    ['1.2.3', undefined],
    ['1 ', undefined],
  ];
  for (const [text, want] of rows) {
    it(`${JSON.stringify(text)} → ${want ?? 'invalid'}`, () => assert.equal(parseMilliValue(text), want));
  }
});
