// The iptables rules of a node: kube-proxy's layout, as iptables-restore input, in a full sync.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extChain, sepChain, svcChain, svlChain } from './chain-names.js';
import { renderFull, type RenderOptions } from './iptables.js';
import { ep, portState, stateOf } from './testing/builders.js';
import { declared, deletedIn, descending, rulesOf, tables } from './testing/restore-text.js';
import type { ProxyState } from './types.js';

const V4: RenderOptions = { family: 4 };
const NONE = { nat: [], filter: [] };
const WEB = 'default/web:http';
const SVC = svcChain(WEB, 'TCP');
const EXT = extChain(WEB, 'TCP');
const SVL = svlChain(WEB, 'TCP');
const sep = (ip: string, port = 8080, key = WEB, proto = 'TCP') => sepChain(key, proto, ip, port);

const full = (state: ProxyState, o: RenderOptions = V4) => renderFull(state, NONE, o);
describe('renderFull()', () => {
  it('writes a ClusterIP Service with 3 endpoints exactly as kube-proxy lays it out', () => {
    const state = stateOf(portState(WEB, { internal: [ep('10.0.0.1'), ep('10.0.0.2'), ep('10.0.0.3')] }));
    const plan = renderFull(state, NONE, { family: 4, clusterCIDR: '10.244.0.0/16' });
    const [s1, s2, s3] = [sep('10.0.0.1'), sep('10.0.0.2'), sep('10.0.0.3')];
    const expected = [
      '*nat',
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-NODEPORTS - [0:0]',
      ':KUBE-POSTROUTING - [0:0]',
      ':KUBE-MARK-MASQ - [0:0]',
      // Per-service chains in descending name order (iptables-nft restores that order in linear time).
      `:${SVC} - [0:0]`,
      `:${s3} - [0:0]`,
      `:${s1} - [0:0]`,
      `:${s2} - [0:0]`,
      `-A KUBE-SERVICES -m comment --comment "default/web:http cluster IP" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j ${SVC}`,
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
      '-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN',
      '-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000',
      '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE',
      '-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000',
      `-A ${SVC} -m comment --comment "default/web:http cluster IP" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ`,
      `-A ${SVC} -m comment --comment "default/web:http -> 10.0.0.1:8080" -m statistic --mode random --probability 0.3333333333 -j ${s1}`,
      `-A ${SVC} -m comment --comment "default/web:http -> 10.0.0.2:8080" -m statistic --mode random --probability 0.5000000000 -j ${s2}`,
      `-A ${SVC} -m comment --comment "default/web:http -> 10.0.0.3:8080" -j ${s3}`,
      `-A ${s1} -m comment --comment "default/web:http" -s 10.0.0.1/32 -j KUBE-MARK-MASQ`,
      `-A ${s1} -m comment --comment "default/web:http" -m tcp -p tcp -j DNAT --to-destination 10.0.0.1:8080`,
      `-A ${s2} -m comment --comment "default/web:http" -s 10.0.0.2/32 -j KUBE-MARK-MASQ`,
      `-A ${s2} -m comment --comment "default/web:http" -m tcp -p tcp -j DNAT --to-destination 10.0.0.2:8080`,
      `-A ${s3} -m comment --comment "default/web:http" -s 10.0.0.3/32 -j KUBE-MARK-MASQ`,
      `-A ${s3} -m comment --comment "default/web:http" -m tcp -p tcp -j DNAT --to-destination 10.0.0.3:8080`,
      'COMMIT',
      '*filter',
      ':KUBE-SERVICES - [0:0]',
      ':KUBE-EXTERNAL-SERVICES - [0:0]',
      ':KUBE-FORWARD - [0:0]',
      ':KUBE-NODEPORTS - [0:0]',
      ':KUBE-PROXY-FIREWALL - [0:0]',
      '-A KUBE-FORWARD -m conntrack --ctstate INVALID -j DROP',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding rules" -m mark --mark 0x4000/0x4000 -j ACCEPT',
      '-A KUBE-FORWARD -m comment --comment "kubernetes forwarding conntrack rule" -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT',
      'COMMIT',
      '',
    ].join('\n');
    assert.equal(plan.text, expected);
    assert.deepEqual(plan.applied, new Map([[WEB, [SVC, s1, s2, s3]]]));
    assert.deepEqual([plan.written, plan.rules, plan.deleted], [1, 19, 0]);
  });

  it('masquerades all cluster IP traffic with masqueradeAll, and none without a cluster CIDR', () => {
    const state = stateOf(portState(WEB, { internal: [ep('10.0.0.1')] }));
    const masq = (o: RenderOptions) =>
      rulesOf(tables(full(state, o).text).nat, SVC).filter((l) => l.endsWith('-j KUBE-MARK-MASQ'));
    assert.deepEqual(masq({ family: 4, masqueradeAll: true, clusterCIDR: '10.244.0.0/16' }), [
      `-A ${SVC} -m comment --comment "default/web:http cluster IP" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j KUBE-MARK-MASQ`,
    ]);
    assert.deepEqual(masq(V4), []);
    assert.deepEqual(
      masq({ family: 4, clusterCIDR: 'fd00::/64' }),
      [],
      'a CIDR of the other family is ignored',
    );
  });

  it('sends a returning ClientIP client to its endpoint before load balancing, and records it in the endpoint chain', () => {
    const state = stateOf(
      portState(WEB, { affinityTimeoutSeconds: 60, internal: [ep('10.0.0.1'), ep('10.0.0.2')] }),
    );
    const { nat } = tables(full(state).text);
    const [s1, s2] = [sep('10.0.0.1'), sep('10.0.0.2')];
    assert.deepEqual(rulesOf(nat, SVC), [
      `-A ${SVC} -m comment --comment "default/web:http -> 10.0.0.1:8080" -m recent --name ${s1} --mask 255.255.255.255 --rcheck --seconds 60 --reap -j ${s1}`,
      `-A ${SVC} -m comment --comment "default/web:http -> 10.0.0.2:8080" -m recent --name ${s2} --mask 255.255.255.255 --rcheck --seconds 60 --reap -j ${s2}`,
      `-A ${SVC} -m comment --comment "default/web:http -> 10.0.0.1:8080" -m statistic --mode random --probability 0.5000000000 -j ${s1}`,
      `-A ${SVC} -m comment --comment "default/web:http -> 10.0.0.2:8080" -j ${s2}`,
    ]);
    assert.deepEqual(rulesOf(nat, s1), [
      `-A ${s1} -m comment --comment "default/web:http" -s 10.0.0.1/32 -j KUBE-MARK-MASQ`,
      `-A ${s1} -m comment --comment "default/web:http" -m recent --name ${s1} --set -m tcp -p tcp -j DNAT --to-destination 10.0.0.1:8080`,
    ]);
  });

  it('routes a node port through KUBE-EXT (masquerade, then the cluster chain), with the node-ports jump last in KUBE-SERVICES', () => {
    const eps = [ep('10.0.0.1'), ep('10.0.0.2')];
    const state = stateOf(
      portState(WEB, {
        nodePort: 30080,
        externalIPs: ['192.0.2.1'],
        loadBalancerIPs: ['198.51.100.1'],
        internal: eps,
        external: eps,
      }),
    );
    const { nat, filter } = tables(full(state).text);
    assert.deepEqual(rulesOf(nat, 'KUBE-SERVICES'), [
      `-A KUBE-SERVICES -m comment --comment "default/web:http cluster IP" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j ${SVC}`,
      `-A KUBE-SERVICES -m comment --comment "default/web:http external IP" -d 192.0.2.1/32 -p tcp -m tcp --dport 80 -j ${EXT}`,
      `-A KUBE-SERVICES -m comment --comment "default/web:http loadbalancer IP" -d 198.51.100.1/32 -p tcp -m tcp --dport 80 -j ${EXT}`,
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS',
    ]);
    assert.deepEqual(rulesOf(nat, 'KUBE-NODEPORTS'), [
      `-A KUBE-NODEPORTS -m comment --comment "default/web:http" -p tcp -m tcp --dport 30080 -j ${EXT}`,
    ]);
    assert.deepEqual(rulesOf(nat, EXT), [
      `-A ${EXT} -m comment --comment "masquerade traffic for default/web:http external destinations" -j KUBE-MARK-MASQ`,
      `-A ${EXT} -j ${SVC}`,
    ]);
    assert.ok(!declared(nat).includes(SVL), 'the same endpoints need no second policy chain');
    assert.deepEqual(rulesOf(filter, 'KUBE-EXTERNAL-SERVICES'), []);
  });

  it('answers node ports only on nodePortAddresses of the family when they are given', () => {
    const state = stateOf(
      portState(WEB, { nodePort: 30080, internal: [ep('10.0.0.1')], external: [ep('10.0.0.1')] }),
    );
    const { nat } = tables(
      full(state, { family: 4, nodePortAddresses: ['192.168.1.0/24', 'fd00::/64', '10.1.0.5/32'] }).text,
    );
    assert.deepEqual(rulesOf(nat, 'KUBE-SERVICES').slice(1), [
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 192.168.1.0/24 -j KUBE-NODEPORTS',
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -d 10.1.0.5/32 -j KUBE-NODEPORTS',
    ]);
  });

  it('rejects in the filter table, and writes nothing in nat, for a Service port with no endpoints', () => {
    const state = stateOf(
      portState(WEB, { nodePort: 30080, externalIPs: ['192.0.2.1'], loadBalancerIPs: ['198.51.100.1'] }),
    );
    const plan = full(state);
    const { nat, filter } = tables(plan.text);
    assert.deepEqual(rulesOf(filter, 'KUBE-SERVICES'), [
      '-A KUBE-SERVICES -m comment --comment "default/web:http has no endpoints" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j REJECT',
    ]);
    assert.deepEqual(rulesOf(filter, 'KUBE-EXTERNAL-SERVICES'), [
      '-A KUBE-EXTERNAL-SERVICES -m comment --comment "default/web:http has no endpoints" -d 192.0.2.1/32 -p tcp -m tcp --dport 80 -j REJECT',
      '-A KUBE-EXTERNAL-SERVICES -m comment --comment "default/web:http has no endpoints" -d 198.51.100.1/32 -p tcp -m tcp --dport 80 -j REJECT',
      '-A KUBE-EXTERNAL-SERVICES -m comment --comment "default/web:http has no endpoints" -m addrtype --dst-type LOCAL -p tcp -m tcp --dport 30080 -j REJECT',
    ]);
    assert.ok(!nat.some((l) => l.includes('default/web')));
    assert.deepEqual(declared(nat), [
      'KUBE-SERVICES',
      'KUBE-NODEPORTS',
      'KUBE-POSTROUTING',
      'KUBE-MARK-MASQ',
    ]);
    assert.deepEqual(plan.applied.get(WEB), []);
  });

  it('keeps the client address with externalTrafficPolicy Local: KUBE-EXT short-circuits pods and the node, then KUBE-SVL', () => {
    const state = stateOf(
      portState(WEB, {
        nodePort: 30080,
        externalLocal: true,
        internal: [ep('10.0.0.1'), ep('10.0.0.2', 8080, true)],
        external: [ep('10.0.0.2', 8080, true)],
      }),
    );
    const { nat } = tables(full(state, { family: 4, clusterCIDR: '10.0.0.0/16' }).text);
    const s2 = sep('10.0.0.2');
    assert.deepEqual(rulesOf(nat, EXT), [
      `-A ${EXT} -m comment --comment "pod traffic for default/web:http external destinations" -s 10.0.0.0/16 -j ${SVC}`,
      `-A ${EXT} -m comment --comment "masquerade LOCAL traffic for default/web:http external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
      `-A ${EXT} -m comment --comment "route LOCAL traffic for default/web:http external destinations" -m addrtype --src-type LOCAL -j ${SVC}`,
      `-A ${EXT} -j ${SVL}`,
    ]);
    assert.deepEqual(rulesOf(nat, SVL), [
      `-A ${SVL} -m comment --comment "default/web:http -> 10.0.0.2:8080" -j ${s2}`,
    ]);
    assert.deepEqual(declared(nat).slice(4), descending([SVC, SVL, EXT, sep('10.0.0.1'), s2]));
  });

  it('drops external traffic when only the internal side has endpoints (Local policy, none on this node)', () => {
    const state = stateOf(
      portState(WEB, { nodePort: 30080, externalLocal: true, internal: [ep('10.0.0.1')], external: [] }),
    );
    const { nat, filter } = tables(full(state).text);
    assert.deepEqual(rulesOf(filter, 'KUBE-EXTERNAL-SERVICES'), [
      '-A KUBE-EXTERNAL-SERVICES -m comment --comment "default/web:http has no local endpoints" -m addrtype --dst-type LOCAL -p tcp -m tcp --dport 30080 -j DROP',
    ]);
    // Pods and the node itself still reach the Service through the node port.
    assert.equal(rulesOf(nat, 'KUBE-NODEPORTS').length, 1);
    assert.deepEqual(rulesOf(nat, EXT), [
      `-A ${EXT} -m comment --comment "masquerade LOCAL traffic for default/web:http external destinations" -m addrtype --src-type LOCAL -j KUBE-MARK-MASQ`,
      `-A ${EXT} -m comment --comment "route LOCAL traffic for default/web:http external destinations" -m addrtype --src-type LOCAL -j ${SVC}`,
    ]);
  });

  it('drops cluster-IP traffic with a Local policy and endpoints only elsewhere; rejects it with none anywhere', () => {
    const local = (hasEndpoints: boolean) =>
      tables(full(stateOf(portState(WEB, { internalLocal: true, hasEndpoints }))).text);
    assert.deepEqual(rulesOf(local(true).filter, 'KUBE-SERVICES'), [
      '-A KUBE-SERVICES -m comment --comment "default/web:http has no local endpoints" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j DROP',
    ]);
    assert.deepEqual(rulesOf(local(false).filter, 'KUBE-SERVICES'), [
      '-A KUBE-SERVICES -m comment --comment "default/web:http has no endpoints" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j REJECT',
    ]);
  });

  it('handles each side alone: external endpoints only, and internal ones differing from external ones', () => {
    const onlyExternal = stateOf(portState(WEB, { nodePort: 30080, external: [ep('10.0.0.1')] }));
    const a = tables(full(onlyExternal).text);
    assert.deepEqual(rulesOf(a.filter, 'KUBE-SERVICES'), [
      '-A KUBE-SERVICES -m comment --comment "default/web:http has no local endpoints" -d 10.96.0.10/32 -p tcp -m tcp --dport 80 -j DROP',
    ]);
    assert.deepEqual(rulesOf(a.nat, EXT), [
      `-A ${EXT} -m comment --comment "masquerade traffic for default/web:http external destinations" -j KUBE-MARK-MASQ`,
      `-A ${EXT} -j ${SVL}`,
    ]);
    assert.ok(!declared(a.nat).includes(SVC));

    const differing = stateOf(
      portState(WEB, {
        nodePort: 30080,
        internal: [ep('10.0.0.1')],
        external: [ep('10.0.0.1'), ep('10.0.0.2')],
      }),
    );
    const b = tables(full(differing).text);
    assert.deepEqual(rulesOf(b.nat, SVL).length, 2);
    assert.deepEqual(rulesOf(b.nat, SVC).length, 1);
    assert.deepEqual(declared(b.nat).slice(4), descending([SVC, SVL, EXT, sep('10.0.0.1'), sep('10.0.0.2')]));
  });

  it('uses udp and sctp matches for UDP and SCTP ports', () => {
    const dns = portState('kube-system/dns:dns', {
      protocol: 'UDP',
      port: 53,
      internal: [ep('10.0.0.9', 53)],
    });
    const sctp = portState('default/s', {
      protocol: 'SCTP',
      port: 9,
      clusterIPs: ['10.96.0.9'],
      internal: [ep('10.0.0.8', 9)],
    });
    const { nat } = tables(full(stateOf(dns, sctp)).text);
    assert.ok(
      nat.includes(
        `-A KUBE-SERVICES -m comment --comment "kube-system/dns:dns cluster IP" -d 10.96.0.10/32 -p udp -m udp --dport 53 -j ${svcChain('kube-system/dns:dns', 'UDP')}`,
      ),
    );
    const dnsSep = sep('10.0.0.9', 53, 'kube-system/dns:dns', 'UDP');
    assert.ok(
      nat.includes(
        `-A ${dnsSep} -m comment --comment "kube-system/dns:dns" -m udp -p udp -j DNAT --to-destination 10.0.0.9:53`,
      ),
    );
    assert.ok(nat.some((l) => l.includes('-p sctp -m sctp --dport 9 ')));
  });

  it('renders one family: IPv6 cluster IPs and endpoints with /128 and [ip]:port, IPv4 ones left out', () => {
    const state = stateOf(
      portState(WEB, {
        clusterIPs: ['10.96.0.10', 'fd00::10'],
        affinityTimeoutSeconds: 10,
        internal: [ep('10.0.0.1'), ep('fd01::1')],
      }),
      portState('default/v4only', { clusterIPs: ['10.96.0.11'], internal: [ep('10.0.0.2')] }),
    );
    const plan = full(state, { family: 6 });
    const { nat } = tables(plan.text);
    const s6 = sep('fd01::1');
    assert.deepEqual(rulesOf(nat, 'KUBE-SERVICES'), [
      `-A KUBE-SERVICES -m comment --comment "default/web:http cluster IP" -d fd00::10/128 -p tcp -m tcp --dport 80 -j ${SVC}`,
      '-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL ! -d ::1/128 -j KUBE-NODEPORTS',
    ]);
    assert.deepEqual(rulesOf(nat, SVC), [
      `-A ${SVC} -m comment --comment "default/web:http -> [fd01::1]:8080" -m recent --name ${s6} --mask ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff --rcheck --seconds 10 --reap -j ${s6}`,
      `-A ${SVC} -m comment --comment "default/web:http -> [fd01::1]:8080" -j ${s6}`,
    ]);
    assert.ok(
      nat.includes(`-A ${s6} -m comment --comment "default/web:http" -s fd01::1/128 -j KUBE-MARK-MASQ`),
    );
    assert.ok(!plan.text.includes('10.0.0.'));
    assert.deepEqual(plan.applied.get('default/v4only'), []);
  });

  it("writes probabilities as Go's %0.10f does, rounding an exact tie to even", () => {
    const eps = Array.from({ length: 2048 }, (_, i) => ep(`10.${(i >> 8) + 1}.${i & 255}.1`));
    const { nat } = tables(full(stateOf(portState(WEB, { internal: eps }))).text);
    const probabilities = rulesOf(nat, SVC).map((l) => /--probability (\S+)/.exec(l)?.[1]);
    assert.equal(probabilities[0], '0.0004882812'); // 1/2048 = 0.00048828125
    assert.equal(probabilities[1], '0.0004885198'); // 1/2047
    assert.equal(probabilities[2046], '0.5000000000');
    assert.equal(probabilities[2047], undefined);
  });

  it('orders Service ports by key, whatever the order of the state', () => {
    const a = portState('a/x', { clusterIPs: ['10.96.0.1'], internal: [ep('10.0.0.1')] });
    const b = portState('b/x', { clusterIPs: ['10.96.0.2'], internal: [ep('10.0.0.2')] });
    assert.equal(full(stateOf(b, a)).text, full(stateOf(a, b)).text);
  });

  it('flushes and deletes stale per-service chains in nat, and leaves other chains alone', () => {
    const state = stateOf(portState(WEB, { internal: [ep('10.0.0.1')] }));
    const existing = {
      nat: [
        'PREROUTING',
        'KUBE-SERVICES',
        SVC,
        sep('10.0.0.1'),
        sep('10.0.0.9'),
        'KUBE-SVC-OLD',
        'KUBE-XLB-OLD',
        'KUBE-MARK-DROP',
        'CNI-X',
      ],
      filter: ['INPUT', 'KUBE-FIREWALL', 'KUBE-SVC-ODD'],
    };
    const plan = renderFull(state, existing, V4);
    const { nat, filter } = tables(plan.text);
    assert.deepEqual(deletedIn(nat), [sep('10.0.0.9'), 'KUBE-SVC-OLD', 'KUBE-XLB-OLD']);
    for (const c of deletedIn(nat))
      assert.ok(declared(nat).includes(c), `${c} is flushed before it is deleted`);
    assert.deepEqual(deletedIn(filter), []);
    assert.equal(plan.deleted, 3);
  });
});
