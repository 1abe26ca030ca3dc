// `svcplane proxy` in-process: the usage errors it raises before it touches the node's rules. Each case
// also carries a later usage error, so that a check that went missing fails the test on the message and
// never reaches iptables or nft. The errors that need the data plane (nft not usable, --cleanup with the
// userspace mode) run as a process in a network namespace: test/e2e/proxy-nftables.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UsageError } from './flags.js';
import { proxyCommand } from './proxy-command.js';

const refused = (args: string[], message: string): Promise<void> =>
  assert.rejects(
    proxyCommand(args, () => {}),
    (err: unknown) => {
      assert.ok(err instanceof UsageError, String(err));
      assert.equal(err.message, message);
      return true;
    },
  );

/** Not an IP address: a usage error after the mode's own checks and before any backend is built. */
const LATER = ['--metrics-bind-address', 'localhost:10249'];

describe('svcplane proxy usage errors', () => {
  it('requires --hostname-override in the nftables mode', () =>
    refused(['--proxy-mode', 'nftables', ...LATER], '--hostname-override is required'));

  it('refuses an unknown --proxy-mode', () =>
    refused(
      ['--proxy-mode', 'ipvs'],
      'invalid value "ipvs" for --proxy-mode: want one of iptables, nftables, userspace',
    ));

  it('refuses a --cluster-cidr that is not a CIDR', () =>
    refused(
      ['--proxy-mode', 'nftables', '--cluster-cidr', '10.244.0.0'],
      '--cluster-cidr: "10.244.0.0" is not a CIDR',
    ));

  it('refuses the userspace flags in the nftables mode', () =>
    refused(
      [
        '--proxy-mode',
        'nftables',
        '--hostname-override',
        'x',
        '--userspace-cidr',
        '10.0.0.0/8',
        '--nodeport-addresses',
        'x',
      ],
      '--userspace-cidr and --userspace-port-offset are for --proxy-mode userspace',
    ));

  it('refuses the nftables and iptables flags in the userspace mode', () =>
    refused(
      [
        '--proxy-mode',
        'userspace',
        '--hostname-override',
        'x',
        '--masquerade-all',
        '--userspace-port-offset',
        '70000',
      ],
      '--cluster-cidr and --masquerade-all are for --proxy-mode iptables or nftables',
    ));
});
