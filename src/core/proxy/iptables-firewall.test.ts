// loadBalancerSourceRanges (KUBE-FW- and KUBE-PROXY-FIREWALL) and health check node ports, as kube-proxy
// lays them out (pkg/proxy/iptables/proxier.go, by behaviour).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extChain, fwChain, svcChain } from './chain-names.js';
import { renderFull, type RenderOptions } from './iptables.js';
import { ep, portState, stateOf } from './testing/builders.js';
import { declared, rulesOf, tables } from './testing/restore-text.js';
import type { ServicePortState } from './types.js';

const WEB = 'default/web:http';
const SVC = svcChain(WEB, 'TCP');
const EXT = extChain(WEB, 'TCP');
const FW = fwChain(WEB, 'TCP');
const V4: RenderOptions = { family: 4 };

/** A LoadBalancer Service port: node port 30080, LB IP 5.6.7.8, one endpoint on both sides unless `o` says. */
const render = (o: Partial<ServicePortState>, ro: RenderOptions = V4) =>
  tables(
    renderFull(
      stateOf(
        portState(WEB, {
          nodePort: 30080,
          loadBalancerIPs: ['5.6.7.8'],
          internal: o.internal ?? [ep('10.0.0.1')],
          external: o.external ?? o.internal ?? [ep('10.0.0.1')],
          ...o,
        }),
      ),
      { nat: [], filter: [] },
      ro,
    ).text,
  );

describe('loadBalancerSourceRanges', () => {
  it('sends load-balancer traffic through KUBE-FW-, which passes the ranges on and leaves the rest to be dropped', () => {
    const { nat, filter } = render({ loadBalancerSourceRanges: ['203.0.113.0/25', '192.168.0.0/16'] });
    assert.deepEqual(rulesOf(nat, 'KUBE-SERVICES').slice(0, 2), [
      `-A KUBE-SERVICES -m comment --comment "${WEB} cluster IP" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j ${SVC}`,
      `-A KUBE-SERVICES -m comment --comment "${WEB} loadbalancer IP" -d 5.6.7.8/32 -p tcp -m tcp --dport 80 -j ${FW}`,
    ]);
    assert.deepEqual(rulesOf(nat, FW), [
      `-A ${FW} -m comment --comment "${WEB} loadbalancer IP" -s 203.0.113.0/25 -j ${EXT}`,
      `-A ${FW} -m comment --comment "${WEB} loadbalancer IP" -s 192.168.0.0/16 -j ${EXT}`,
      `-A ${FW} -m comment --comment "other traffic to ${WEB} will be dropped by KUBE-PROXY-FIREWALL"`,
    ]);
    assert.ok(declared(nat).includes(FW));
    assert.deepEqual(rulesOf(filter, 'KUBE-PROXY-FIREWALL'), [
      `-A KUBE-PROXY-FIREWALL -m comment --comment "${WEB} traffic not accepted by ${FW}" -d 5.6.7.8/32 -p tcp -m tcp --dport 80 -j DROP`,
    ]);
    // Node ports are not subject to the ranges (kube-proxy cannot change that either).
    assert.deepEqual(rulesOf(nat, 'KUBE-NODEPORTS'), [
      `-A KUBE-NODEPORTS -m comment --comment "${WEB}" -p tcp -m tcp --dport 30080 -j ${EXT}`,
    ]);
  });

  it('also passes traffic from the load-balancer IPs when a range holds the node (a VIP looping back)', () => {
    const { nat } = render({ loadBalancerSourceRanges: ['10.1.0.0/16'], sourceRangesHoldNode: [4] });
    assert.deepEqual(rulesOf(nat, FW), [
      `-A ${FW} -m comment --comment "${WEB} loadbalancer IP" -s 10.1.0.0/16 -j ${EXT}`,
      `-A ${FW} -m comment --comment "${WEB} loadbalancer IP" -s 5.6.7.8/32 -j ${EXT}`,
      `-A ${FW} -m comment --comment "other traffic to ${WEB} will be dropped by KUBE-PROXY-FIREWALL"`,
    ]);
  });

  it('needs endpoints, load-balancer IPs and ranges of the family: without any of them, no firewall', () => {
    const cases: Array<[string, Partial<ServicePortState>, RenderOptions]> = [
      ['no ranges', {}, V4],
      ['no endpoints', { loadBalancerSourceRanges: ['10.1.0.0/16'], internal: [] }, V4],
      ['no load-balancer IP', { loadBalancerSourceRanges: ['10.1.0.0/16'], loadBalancerIPs: [] }, V4],
      [
        'ranges of the other family only',
        {
          clusterIPs: ['fd00::10'],
          loadBalancerIPs: ['2001:db8::5'],
          internal: [ep('fd00:1::1')],
          loadBalancerSourceRanges: ['10.1.0.0/16'],
        },
        { family: 6 },
      ],
    ];
    for (const [what, o, ro] of cases) {
      const { nat, filter } = render(o, ro);
      assert.ok(!declared(nat).includes(FW), `${what}: no ${FW}`);
      assert.deepEqual(rulesOf(filter, 'KUBE-PROXY-FIREWALL'), [], what);
    }
    // Without endpoints the load-balancer IP is refused as before.
    const { filter } = render({ loadBalancerSourceRanges: ['10.1.0.0/16'], internal: [] });
    assert.ok(
      rulesOf(filter, 'KUBE-EXTERNAL-SERVICES').some(
        (l) => l.includes('-d 5.6.7.8/32') && l.endsWith('-j REJECT'),
      ),
    );
  });

  it('writes IPv6 ranges in the IPv6 render', () => {
    const { nat, filter } = render(
      {
        clusterIPs: ['fd00::10'],
        loadBalancerIPs: ['2001:db8::5'],
        internal: [ep('fd00:1::1')],
        loadBalancerSourceRanges: ['10.1.0.0/16', '2001:db8:1::/48'],
      },
      { family: 6 },
    );
    assert.deepEqual(rulesOf(nat, FW).slice(0, 1), [
      `-A ${FW} -m comment --comment "${WEB} loadbalancer IP" -s 2001:db8:1::/48 -j ${EXT}`,
    ]);
    assert.equal(rulesOf(filter, 'KUBE-PROXY-FIREWALL')[0]?.includes('-d 2001:db8::5/128'), true);
  });
});

describe('health check node ports', () => {
  it('are accepted in the filter table, with or without endpoints', () => {
    for (const internal of [[ep('10.0.0.1')], []]) {
      const { filter } = render({ healthCheckNodePort: 32000, externalLocal: true, internal, external: [] });
      assert.deepEqual(rulesOf(filter, 'KUBE-NODEPORTS'), [
        `-A KUBE-NODEPORTS -m comment --comment "${WEB} health check node port" -p tcp -m tcp --dport 32000 -j ACCEPT`,
      ]);
    }
    assert.deepEqual(rulesOf(render({}).filter, 'KUBE-NODEPORTS'), []);
  });
});
