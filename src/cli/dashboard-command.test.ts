import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { acceptHosts } from './dashboard-command.js';
import { UsageError } from './flags.js';

const accepts = (res: readonly RegExp[], host: string) => res.some((re) => re.test(host));

describe('svcplane dashboard --accept-hosts', () => {
  it("by default, kubectl proxy's loopback names and the bind address's host", () => {
    const hosts = acceptHosts(undefined, '127.0.0.2');
    for (const h of ['localhost', '127.0.0.1', '[::1]', '127.0.0.2']) assert.ok(accepts(hosts, h), h);
    for (const h of ['evil.example', 'localhost.evil.example', '127.0.0.1.nip.io', '127x0x0x2', '::1'])
      assert.ok(!accepts(hosts, h), h);
  });

  it('an IPv6 bind address as a browser names it: in brackets, in its shortest form', () => {
    const hosts = acceptHosts('^nope$', '0:0:0:0:0:0:0:1');
    assert.ok(accepts(hosts, '[::1]'));
    assert.ok(!accepts(hosts, 'localhost'));
  });

  it('the flag replaces the default: comma-separated regular expressions', () => {
    const hosts = acceptHosts(String.raw`^dash\.example$,^10\.`, '127.0.0.1');
    for (const h of ['dash.example', '10.1.2.3', '127.0.0.1']) assert.ok(accepts(hosts, h), h);
    for (const h of ['localhost', '[::1]', 'dashxexample']) assert.ok(!accepts(hosts, h), h);
  });

  it('a bad regular expression is a usage error naming the flag', () => {
    assert.throws(
      () => acceptHosts('^ok$,(', '127.0.0.1'),
      (err: unknown) => err instanceof UsageError && /^--accept-hosts: "\(" /.test(err.message),
    );
  });
});
