import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ipFamily,
  isDualStackIPs,
  isIPv4,
  isIPv6,
  isValidCIDR,
  isValidIP,
  parseCIDR,
  parseIP,
  validateNonSpecialIP,
} from './ip.js';
import { FieldPath, fieldErrorString } from '../field-errors.js';

describe('strict IP parsing (Go netip rules)', () => {
  it('accepts well-formed IPv4 and IPv6', () => {
    for (const ok of [
      '0.0.0.0',
      '10.96.0.1',
      '255.255.255.255',
      '::',
      '::1',
      '2001:db8::ffff',
      'fe80::1',
      '2001:0db8:0000:0000:0000:0000:0000:0001',
      '1:2:3:4:5:6:7:8',
      '1::8',
      '::ffff:10.0.0.1',
      '64:ff9b::192.0.2.33',
      'ABCD::EF01',
    ]) {
      assert.ok(isValidIP(ok), ok);
    }
  });

  it('refuses leading zeros, short forms, zones and garbage', () => {
    for (const bad of [
      '',
      '10.0.0.01',
      '010.0.0.1',
      '1.2.3',
      '1.2.3.4.5',
      '256.0.0.1',
      '1.2.3.-1',
      ' 1.2.3.4',
      '1.2.3.4 ',
      '0x0a.0.0.1',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7::8',
      '1::2::3',
      ':1:2',
      '1:2:',
      'fe80::1%eth0',
      '12345::',
      '::1.2.3.04',
      '1:2:3:4:5:6:7:1.2.3.4',
      'abc',
      '10.0.0.0/8',
    ]) {
      assert.ok(!isValidIP(bad), bad);
    }
  });

  it('decodes bytes', () => {
    assert.deepEqual([...parseIP('10.96.0.1')!.bytes], [10, 96, 0, 1]);
    assert.deepEqual(
      [...parseIP('2001:db8::1')!.bytes],
      [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
    );
    assert.deepEqual([...parseIP('::ffff:1.2.3.4')!.bytes.slice(10)], [0xff, 0xff, 1, 2, 3, 4]);
  });

  it('families follow net.IP.To4 (an IPv4-mapped address counts as IPv4)', () => {
    assert.equal(ipFamily('10.0.0.1'), 'IPv4');
    assert.equal(ipFamily('2001:db8::1'), 'IPv6');
    assert.equal(ipFamily('::ffff:10.0.0.1'), 'IPv4');
    assert.equal(ipFamily('nope'), undefined);
    assert.ok(isIPv4('1.2.3.4') && !isIPv4('::1') && isIPv6('::1') && !isIPv6('1.2.3.4'));
    assert.ok(isDualStackIPs(['10.0.0.1', '2001:db8::1']));
    assert.ok(!isDualStackIPs(['10.0.0.1', '10.0.0.2']));
  });

  it('parses CIDRs strictly', () => {
    assert.deepEqual(
      { prefix: parseCIDR('10.96.0.0/12')?.prefix, family: parseCIDR('10.96.0.0/12')?.family },
      { prefix: 12, family: 'IPv4' },
    );
    assert.equal(parseCIDR('2001:db8::/64')?.family, 'IPv6');
    for (const ok of ['0.0.0.0/0', '10.0.0.1/32', '::/0', 'fd00::/128']) assert.ok(isValidCIDR(ok), ok);
    for (const bad of [
      '10.0.0.0',
      '10.0.0.0/33',
      '10.0.0.0/08',
      '::/129',
      '10.0.0.0/',
      '/8',
      '10.0.0.0/8/8',
      '10.0.0.0/-1',
    ]) {
      assert.ok(!isValidCIDR(bad), bad);
    }
  });

  it('names special addresses with upstream texts', () => {
    const p = FieldPath.root('spec', 'externalIPs').index(0);
    const msgs = (ip: string): string[] => validateNonSpecialIP(p, ip).map(fieldErrorString);
    assert.deepEqual(msgs('0.0.0.0'), [
      'spec.externalIPs[0]: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)',
    ]);
    assert.deepEqual(msgs('::1'), [
      'spec.externalIPs[0]: Invalid value: "::1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
    ]);
    assert.deepEqual(msgs('169.254.1.1'), [
      'spec.externalIPs[0]: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
    ]);
    assert.deepEqual(msgs('ff02::1'), [
      'spec.externalIPs[0]: Invalid value: "ff02::1": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
    ]);
    assert.deepEqual(msgs('224.0.0.251'), [
      'spec.externalIPs[0]: Invalid value: "224.0.0.251": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)',
    ]);
    assert.deepEqual(msgs('::ffff:127.0.0.1'), [
      'spec.externalIPs[0]: Invalid value: "::ffff:127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
    ]);
    assert.deepEqual(msgs('8.8.8.8'), []);
  });
});
