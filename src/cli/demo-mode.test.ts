import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { demoPlan, type DemoLayout, type DemoPlan, type DemoProxyMode } from './demo-mode.js';
import { UsageError } from './flags.js';

type Layout = 'auto' | DemoLayout;

describe('demoPlan', () => {
  it('picks the layout and proxy mode each combination of flags asks for', () => {
    const table: Array<[root: boolean, layout: Layout, proxy: DemoProxyMode | undefined, want: DemoPlan]> = [
      // No --proxy-mode: a kernel mode (decided by probing) in namespaces as root, userspace otherwise.
      [true, 'auto', undefined, { layout: 'netns', proxy: 'kernel' }],
      [true, 'netns', undefined, { layout: 'netns', proxy: 'kernel' }],
      [true, 'userspace', undefined, { layout: 'userspace', proxy: 'userspace' }],
      [false, 'auto', undefined, { layout: 'userspace', proxy: 'userspace' }],
      [false, 'userspace', undefined, { layout: 'userspace', proxy: 'userspace' }],
      // A kernel mode asked for runs in namespaces.
      [true, 'auto', 'nftables', { layout: 'netns', proxy: 'nftables' }],
      [true, 'netns', 'iptables', { layout: 'netns', proxy: 'iptables' }],
      [true, 'auto', 'iptables', { layout: 'netns', proxy: 'iptables' }],
      // Userspace proxies run on loopback, root or not.
      [true, 'auto', 'userspace', { layout: 'userspace', proxy: 'userspace' }],
      [false, 'auto', 'userspace', { layout: 'userspace', proxy: 'userspace' }],
      [false, 'userspace', 'userspace', { layout: 'userspace', proxy: 'userspace' }],
    ];
    for (const [root, layout, proxy, want] of table)
      assert.deepEqual(
        demoPlan(root, layout, proxy),
        want,
        `root=${root} --mode ${layout} --proxy-mode ${proxy}`,
      );
  });

  it('refuses what cannot run, saying why', () => {
    const table: Array<[root: boolean, layout: Layout, proxy: DemoProxyMode | undefined, message: RegExp]> = [
      [
        false,
        'auto',
        'nftables',
        /^--proxy-mode nftables needs root .* without root the proxies run in userspace mode$/,
      ],
      [false, 'auto', 'iptables', /^--proxy-mode iptables needs root/],
      [false, 'netns', 'nftables', /^--proxy-mode nftables needs root/],
      [
        true,
        'userspace',
        'nftables',
        /^--mode userspace runs the proxies in userspace mode: it takes no --proxy-mode nftables$/,
      ],
      [true, 'userspace', 'iptables', /--proxy-mode iptables$/],
      [true, 'netns', 'userspace', /^--mode netns runs the proxies in iptables or nftables mode/],
      [false, 'netns', undefined, /^--mode netns needs root/],
    ];
    for (const [root, layout, proxy, message] of table)
      assert.throws(
        () => demoPlan(root, layout, proxy),
        (e: unknown) => e instanceof UsageError && message.test(e.message),
        `root=${root} --mode ${layout} --proxy-mode ${proxy}`,
      );
  });
});
