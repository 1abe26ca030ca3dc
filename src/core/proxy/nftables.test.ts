// The nftables proxy mode's table: kube-proxy nftables mode's layout (KEP-3866) for each Service shape.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RenderOptions } from './iptables.js';
import {
  NFT_TABLE,
  nftModel,
  nftTable,
  renderNftFull,
  renderNftPartial,
  renderNftResync,
  type NftModel,
} from './nftables.js';
import { ep, portState, stateOf } from './testing/builders.js';
import { resolveSlots } from './testing/nft-slots.js';
import type { ProxyState } from './types.js';

const V4: RenderOptions = { family: 4 };
const WEB = 'default/web:http';

/** The one per-service chain (its name holds `ns/name`) whose name starts with `prefix` and ends with `suffix`. */
function chainNamed(m: NftModel, prefix: string, suffix = ''): string {
  const names = [...m.chains.keys()].filter(
    (c) => c.includes('/') && c.startsWith(prefix) && c.endsWith(suffix),
  );
  assert.equal(names.length, 1, `one chain ${prefix}…${suffix} in ${[...m.chains.keys()].join(', ')}`);
  return names[0]!;
}
/** A chain's rules, a balancing rule's endpoint range written out as the endpoints it picks from. */
/** The table alone of a model with what its ports own. */
const tableOf = ({ family, table, chains, sets }: NftModel): NftModel => ({ family, table, chains, sets });

const rules = (m: NftModel, chain: string): readonly string[] | undefined =>
  m.chains.get(chain)?.rules.map((r) => resolveSlots(r, (map, key) => m.sets.get(map)?.elements.get(key)));
/** DNAT to one of `endpoints` (address . port), picked at random. */
const dnat = (p: string, ...endpoints: string[]): string =>
  `meta l4proto ${p} dnat ${endpoints[0]!.includes(':') ? 'ip6' : 'ip'} to numgen random mod ${endpoints.length} map { ${endpoints.map((e, i) => `${i} : ${e}`).join(', ')} }`;
const elements = (m: NftModel, set: string): [string, string][] => [...(m.sets.get(set)?.elements ?? [])];
/** The chains a Service port owns (every chain but the fixed ones). */
const perService = (m: NftModel): string[] => [...m.chains.keys()].filter((c) => c.includes('/')).sort();

const model = (state: ProxyState, o: RenderOptions = V4) => nftModel(state, o);

describe('nftModel()', () => {
  it('lays out a ClusterIP Service with 3 endpoints: a service-ips element, one chain DNATing with numgen', () => {
    const m = model(stateOf(portState(WEB, { internal: [ep('10.0.0.1'), ep('10.0.0.2'), ep('10.0.0.3')] })), {
      family: 4,
      clusterCIDR: '10.244.0.0/16',
    });
    const svc = chainNamed(m, 'service-', '-default/web/tcp/http');
    assert.match(svc, /^service-[A-Z2-7]{8}-default\/web\/tcp\/http$/);
    assert.deepEqual(elements(m, 'service-ips'), [['10.96.0.10 . tcp . 80', `goto ${svc}`]]);
    // One rule picks one of the 3 slots of the chain's range in an endpoint map.
    assert.deepEqual(m.chains.get(svc)?.rules, [
      'ip daddr 10.96.0.10 ip saddr != 10.244.0.0/16 jump mark-for-masquerade',
      'meta l4proto tcp dnat ip to numgen random mod 3 offset 0 map @endpoints-tcp-0',
    ]);
    assert.deepEqual(elements(m, 'endpoints-tcp-0'), [
      ['0', '10.0.0.1 . 8080'],
      ['1', '10.0.0.2 . 8080'],
      ['2', '10.0.0.3 . 8080'],
    ]);
    assert.deepEqual(
      m.sets.get('endpoints-udp-63')?.spec,
      'typeof numgen random mod 1 : ip daddr . udp dport ;',
    );
    assert.deepEqual(perService(m), [svc], 'no chain per endpoint without affinity');
    // Hairpin: an endpoint sent to itself is masqueraded in postrouting.
    assert.deepEqual(elements(m, 'hairpin-endpoints'), [
      ['10.0.0.1 . 10.0.0.1', ''],
      ['10.0.0.2 . 10.0.0.2', ''],
      ['10.0.0.3 . 10.0.0.3', ''],
    ]);
    assert.deepEqual(elements(m, 'no-endpoint-services'), []);
    assert.deepEqual(m.chains.get('nat-prerouting'), {
      hook: 'type nat hook prerouting priority -100 ;',
      rules: ['jump services'],
    });
    assert.deepEqual(rules(m, 'services'), [
      'ip daddr . meta l4proto . th dport vmap @service-ips',
      'fib daddr type local ip daddr != 127.0.0.0/8 meta l4proto . th dport vmap @service-nodeports',
    ]);
    assert.deepEqual(rules(m, 'masquerading'), [
      'ct status dnat ip saddr . ip daddr @hairpin-endpoints masquerade fully-random',
      'meta mark & 0x00004000 == 0 return',
      'meta mark set meta mark ^ 0x00004000',
      'masquerade fully-random',
    ]);
  });

  it('masquerades all cluster IP traffic with masqueradeAll, and none without a cluster CIDR', () => {
    const state = stateOf(portState(WEB, { internal: [ep('10.0.0.1')] }));
    const all = model(state, { family: 4, masqueradeAll: true });
    assert.equal(rules(all, chainNamed(all, 'service-'))![0], 'jump mark-for-masquerade');
    const none = model(state);
    assert.equal(rules(none, chainNamed(none, 'service-'))!.length, 1);
  });

  it('sends a returning ClientIP client to its endpoint, and records clients in a timed dynamic set', () => {
    const m = model(
      stateOf(portState(WEB, { affinityTimeoutSeconds: 60, internal: [ep('10.0.0.1'), ep('10.0.0.2')] })),
    );
    const svc = chainNamed(m, 'service-');
    const [e1, e2] = ['10.0.0.1', '10.0.0.2'].map((ip) => chainNamed(m, 'endpoint-', `__${ip}/8080`));
    const [a1, a2] = ['10.0.0.1', '10.0.0.2'].map((ip) =>
      [...m.sets.keys()].find((s) => s.startsWith('affinity-') && s.endsWith(`__${ip}/8080`)),
    );
    assert.deepEqual(m.sets.get(a1!), {
      map: false,
      spec: 'type ipv4_addr ; flags dynamic,timeout ; timeout 60s ;',
      elements: new Map(),
    });
    assert.deepEqual(rules(m, svc), [
      `ip saddr @${a1} goto ${e1}`,
      `ip saddr @${a2} goto ${e2}`,
      `numgen random mod 2 == 0 goto ${e1}`,
      `goto ${e2}`,
    ]);
    assert.deepEqual(rules(m, e2!), [`update @${a2} { ip saddr }`, 'meta l4proto tcp dnat to 10.0.0.2:8080']);
    // Another timeout is another set: nft cannot change a set's timeout in place.
    const m2 = model(stateOf(portState(WEB, { affinityTimeoutSeconds: 10800, internal: [ep('10.0.0.1')] })));
    assert.ok(![...m2.sets.keys()].includes(a1!));
  });

  it('routes a node port and an external IP through the external chain: masquerade, then the cluster chain', () => {
    const eps = [ep('10.0.0.1')];
    const m = model(
      stateOf(portState(WEB, { nodePort: 30080, externalIPs: ['192.0.2.1'], internal: eps, external: eps })),
    );
    const [svc, ext] = [chainNamed(m, 'service-'), chainNamed(m, 'external-')];
    assert.deepEqual(elements(m, 'service-nodeports'), [['tcp . 30080', `goto ${ext}`]]);
    assert.deepEqual(elements(m, 'service-ips'), [
      ['10.96.0.10 . tcp . 80', `goto ${svc}`],
      ['192.0.2.1 . tcp . 80', `goto ${ext}`],
    ]);
    assert.deepEqual(rules(m, ext), ['jump mark-for-masquerade', `goto ${svc}`]);
  });

  it('answers node ports only on nodePortAddresses of the family when they are given', () => {
    const m = model(stateOf(), { family: 4, nodePortAddresses: ['192.168.0.0/16', 'fd00::/64'] });
    assert.deepEqual(elements(m, 'nodeport-ips'), [['192.168.0.0/16', '']]);
    assert.equal(m.sets.get('nodeport-ips')?.spec, 'type ipv4_addr ; flags interval ;');
    // Addresses only of the other family: no node ports in this one.
    const none = model(stateOf(), { family: 6, nodePortAddresses: ['192.168.0.0/16'] });
    assert.deepEqual(elements(none, 'nodeport-ips'), []);
    assert.equal(
      rules(none, 'services')![1],
      'ip6 daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports',
    );
    assert.deepEqual(
      rules(m, 'services')![1],
      'ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports',
    );
    assert.equal(
      rules(m, 'nodeport-endpoints-check')![0],
      'ip daddr @nodeport-ips meta l4proto . th dport vmap @no-endpoint-nodeports',
    );
  });

  it('rejects a Service port with no endpoints on every destination, and writes no chain for it', () => {
    const m = model(
      stateOf(
        portState(WEB, { nodePort: 30080, externalIPs: ['192.0.2.1'], loadBalancerIPs: ['198.51.100.1'] }),
      ),
    );
    assert.deepEqual(perService(m), []);
    assert.deepEqual(elements(m, 'no-endpoint-services'), [
      ['10.96.0.10 . tcp . 80', 'goto reject-chain'],
      ['192.0.2.1 . tcp . 80', 'goto reject-chain'],
      ['198.51.100.1 . tcp . 80', 'goto reject-chain'],
    ]);
    assert.deepEqual(elements(m, 'no-endpoint-nodeports'), [['tcp . 30080', 'goto reject-chain']]);
    assert.deepEqual([elements(m, 'service-ips'), elements(m, 'service-nodeports')], [[], []]);
    assert.deepEqual(rules(m, 'reject-chain'), ['reject']);
    assert.deepEqual(m.chains.get('filter-input'), {
      hook: 'type filter hook input priority -10 ;',
      rules: [
        'ct state new jump nodeport-endpoints-check',
        'ct state new jump service-endpoints-check',
        'tcp dport @health-check-nodeports accept',
      ],
    });
  });

  it('keeps the client address with externalTrafficPolicy Local: pods and the node short-circuit, then the local chain', () => {
    const local = ep('10.0.0.1', 8080, true);
    const m = model(
      stateOf(
        portState(WEB, {
          nodePort: 30080,
          externalLocal: true,
          healthCheckNodePort: 32000,
          internal: [local, ep('10.0.1.1')],
          external: [local],
        }),
      ),
      { family: 4, clusterCIDR: '10.0.0.0/16' },
    );
    const [svc, lcl, ext] = [chainNamed(m, 'service-'), chainNamed(m, 'local-'), chainNamed(m, 'external-')];
    assert.deepEqual(rules(m, ext), [
      `ip saddr 10.0.0.0/16 goto ${svc}`,
      'fib saddr type local jump mark-for-masquerade',
      `fib saddr type local goto ${svc}`,
      `goto ${lcl}`,
    ]);
    assert.deepEqual(rules(m, lcl), [dnat('tcp', '10.0.0.1 . 8080')]);
    assert.deepEqual(elements(m, 'health-check-nodeports'), [['32000', '']]);
  });

  it('drops external traffic under a Local policy with no local endpoint, and cluster-IP traffic too with internalTrafficPolicy Local', () => {
    const m = model(
      stateOf(
        portState(WEB, {
          nodePort: 30080,
          externalIPs: ['192.0.2.1'],
          externalLocal: true,
          internal: [ep('10.0.1.1')],
          external: [],
        }),
      ),
    );
    const svc = chainNamed(m, 'service-');
    const ext = chainNamed(m, 'external-');
    // Local traffic from the node still reaches the Service through the cluster chain.
    assert.deepEqual(rules(m, ext), [
      'fib saddr type local jump mark-for-masquerade',
      `fib saddr type local goto ${svc}`,
    ]);
    assert.deepEqual(elements(m, 'no-endpoint-services'), [['192.0.2.1 . tcp . 80', 'drop']]);
    assert.deepEqual(elements(m, 'no-endpoint-nodeports'), [['tcp . 30080', 'drop']]);
    // internalTrafficPolicy Local, endpoints only elsewhere: drop; none anywhere: reject.
    const elsewhere = model(stateOf(portState(WEB, { internalLocal: true, hasEndpoints: true })));
    assert.deepEqual(elements(elsewhere, 'no-endpoint-services'), [['10.96.0.10 . tcp . 80', 'drop']]);
    const nowhere = model(stateOf(portState(WEB, { internalLocal: true, hasEndpoints: false })));
    assert.deepEqual(elements(nowhere, 'no-endpoint-services'), [
      ['10.96.0.10 . tcp . 80', 'goto reject-chain'],
    ]);
  });

  it('filters load-balancer traffic by source range before DNAT, allowing the node when a range holds it', () => {
    const eps = [ep('10.0.0.1')];
    const s = portState(WEB, {
      loadBalancerIPs: ['198.51.100.1', '2001:db8::2'],
      loadBalancerSourceRanges: ['203.0.113.0/24', '2001:db8:1::/48'],
      internal: eps,
      external: eps,
    });
    const m = model(stateOf(s));
    const [ext, fw] = [chainNamed(m, 'external-'), chainNamed(m, 'firewall-')];
    assert.deepEqual(elements(m, 'firewall-ips'), [['198.51.100.1 . tcp . 80', `goto ${fw}`]]);
    assert.deepEqual(rules(m, fw), ['ip saddr != { 203.0.113.0/24 } drop']);
    assert.ok(
      elements(m, 'service-ips').some(([k, v]) => k === '198.51.100.1 . tcp . 80' && v === `goto ${ext}`),
    );
    assert.deepEqual(rules(m, 'filter-prerouting'), ['ct state new jump firewall-check']);
    const held = model(stateOf({ ...s, sourceRangesHoldNode: [4] }));
    assert.deepEqual(rules(held, chainNamed(held, 'firewall-')), [
      'ip saddr != { 203.0.113.0/24, 198.51.100.1 } drop',
    ]);
    // Without source ranges the load-balancer IP is open to all: no firewall.
    const open = model(stateOf({ ...s, loadBalancerSourceRanges: [] }));
    assert.deepEqual(
      [perService(open).filter((c) => c.startsWith('firewall-')), elements(open, 'firewall-ips')],
      [[], []],
    );
  });

  it('uses the port protocol in the map keys and DNAT: udp and sctp', () => {
    for (const [protocol, p] of [
      ['UDP', 'udp'],
      ['SCTP', 'sctp'],
    ] as const) {
      const m = model(
        stateOf(portState('kube-system/dns:dns', { protocol, port: 53, internal: [ep('10.0.0.1', 53)] })),
      );
      assert.deepEqual(elements(m, 'service-ips')[0]![0], `10.96.0.10 . ${p} . 53`);
      const svc = chainNamed(m, 'service-', `-kube-system/dns/${p}/dns`);
      assert.deepEqual(rules(m, svc), [dnat(p, '10.0.0.1 . 53')]);
    }
  });

  it('renders one family per table: IPv6 in ip6 svcplane with [ip]:port, single-stack Services only in theirs', () => {
    const dual = portState(WEB, {
      clusterIPs: ['10.96.0.10', 'fd00:96::10'],
      internal: [ep('10.0.0.1'), ep('fd00::1')],
    });
    const v4only = portState('default/old', { clusterIPs: ['10.96.0.11'], internal: [ep('10.0.0.2')] });
    const state = stateOf(dual, v4only);
    const m6 = model(state, { family: 6, clusterCIDR: 'fd00::/64' });
    assert.deepEqual([m6.family, m6.table], ['ip6', NFT_TABLE]);
    assert.deepEqual(rules(m6, chainNamed(m6, 'service-')), [
      'ip6 daddr fd00:96::10 ip6 saddr != fd00::/64 jump mark-for-masquerade',
      dnat('tcp', 'fd00::1 . 8080'),
    ]);
    assert.deepEqual(elements(m6, 'hairpin-endpoints'), [['fd00::1 . fd00::1', '']]);
    assert.equal(m6.sets.get('hairpin-endpoints')?.spec, 'type ipv6_addr . ipv6_addr ;');
    // With affinity, endpoint chains are named with the address's colons as dots.
    const sticky = model(stateOf({ ...dual, affinityTimeoutSeconds: 60 }), { family: 6 });
    assert.deepEqual(
      rules(sticky, chainNamed(sticky, 'endpoint-', '__fd00..1/8080'))?.[1],
      'meta l4proto tcp dnat to [fd00::1]:8080',
    );
    assert.deepEqual(elements(m6, 'service-ips'), [
      ['fd00:96::10 . tcp . 80', `goto ${chainNamed(m6, 'service-')}`],
    ]);
    assert.equal(m6.sets.get('service-ips')?.spec, 'type ipv6_addr . inet_proto . inet_service : verdict ;');
    assert.equal(
      rules(m6, 'services')![1],
      'fib daddr type local ip6 daddr != ::1 meta l4proto . th dport vmap @service-nodeports',
    );
    const m4 = model(state);
    assert.deepEqual(m4.family, 'ip');
    assert.equal(elements(m4, 'service-ips').length, 2);
    assert.ok(!perService(m4).some((c) => c.includes('fd00')));
  });

  it('sends traffic to serving-terminating endpoints when the state falls back to them', () => {
    const m = model(stateOf(portState(WEB, { internal: [ep('10.0.0.1', 8080, false, false)] })));
    assert.deepEqual(rules(m, chainNamed(m, 'service-')), [dnat('tcp', '10.0.0.1 . 8080')]);
    assert.deepEqual(elements(m, 'no-endpoint-services'), []);
  });
});

describe('renderNftFull() and renderNftPartial()', () => {
  const a = portState('ns/a', { clusterIPs: ['10.96.0.1'], internal: [ep('10.0.0.1'), ep('10.0.0.2')] });
  const b = portState('ns/b', { clusterIPs: ['10.96.0.2'], internal: [ep('10.0.1.1')] });

  it('writes the whole table in one transaction that replaces the table', () => {
    const plan = renderNftFull(stateOf(a), V4);
    const lines = plan.text.split('\n');
    assert.deepEqual(lines.slice(0, 3), [
      'add table ip svcplane',
      'delete table ip svcplane',
      'add table ip svcplane',
    ]);
    assert.ok(lines.includes('add chain ip svcplane nat-output { type nat hook output priority -100 ; }'));
    assert.ok(
      lines.includes(
        `add element ip svcplane service-ips { 10.96.0.1 . tcp . 80 : goto ${chainNamed(nftTable(plan.model), 'service-')} }`,
      ),
    );
    assert.equal(plan.text.at(-1), '\n');
    assert.deepEqual(nftTable(plan.model), tableOf(nftModel(stateOf(a), V4)));
  });

  it('writes a large table in pieces of whole lines, a piece of Service ports at a time', () => {
    const ports = Array.from({ length: 1200 }, (_, i) =>
      portState(`ns/s${i}`, {
        clusterIPs: [`10.96.${i >> 8}.${i & 255}`],
        internal: [ep(`10.1.${i >> 8}.${i & 255}`)],
      }),
    );
    const state = stateOf(...ports);
    for (const plan of [
      renderNftFull(state, V4),
      renderNftResync(renderNftFull(state, V4).model, state, V4),
    ]) {
      // The fixed part with the first ports' chains, the rest of the ports' chains, their endpoint map
      // elements a piece of ports at a time, then the shared maps' elements.
      const pieces = [...plan.pieces];
      assert.equal(pieces.length, 7);
      const firstElement = pieces.findIndex((p) => p.includes('add element'));
      assert.ok(
        !pieces.slice(firstElement).some((p) => p.includes('add rule')),
        'every rule before any element',
      );
      assert.ok(pieces.every((p) => p.endsWith('\n')));
      assert.equal(pieces.join(''), plan.text);
    }
  });

  it('writes the shared sets a piece at a time too, however many elements they have', () => {
    // 1,200 ports of 10 endpoints each: 12,000 hairpin pairs, besides 1,200 cluster IPs.
    const ports = Array.from({ length: 1200 }, (_, i) =>
      portState(`ns/s${i}`, {
        clusterIPs: [`10.96.${i >> 8}.${i & 255}`],
        internal: Array.from({ length: 10 }, (_, j) => ep(`10.${j + 1}.${i >> 8}.${i & 255}`)),
      }),
    );
    const state = stateOf(...ports);
    const plan = renderNftFull(state, V4);
    const pieces = [...plan.pieces];
    const elementsIn = (piece: string): number =>
      piece
        .split('\n')
        .filter((l) => l.startsWith('add element'))
        .reduce((n, l) => n + l.split(', ').length, 0);
    // 5,000 a piece, cut between two commands (of 500 elements).
    assert.ok(
      pieces.every((p) => elementsIn(p) < 5500),
      `elements per piece: ${pieces.map(elementsIn).join(' ')}`,
    );
    assert.equal(
      pieces.reduce((n, p) => n + elementsIn(p), 0),
      plan.changes.elements,
    );
    assert.equal(pieces.join(''), plan.text);
    assert.deepEqual(nftTable(plan.model), tableOf(nftModel(state, V4)));
  });

  it('renders a whole-table plan as it is read, from the state as it was when the plan was made', () => {
    const state = new Map(stateOf(a, b));
    const plan = renderNftFull(state, V4);
    const text = plan.text;
    state.delete('ns/b');
    assert.equal([...plan.pieces].join(''), text);
    assert.deepEqual([...plan.model.ports.keys()], ['ns/a', 'ns/b']);
    assert.match(text, /10\.96\.0\.2 \. tcp \. 80 : goto service-/);
  });

  it('keeps a hairpin pair two Services share until the last of them goes, in either family', () => {
    for (const [o, ips, pair] of [
      [V4, ['10.96.0.1', '10.96.0.2'], '10.0.0.7 . 10.0.0.7'],
      [V4, ['10.96.0.1', '10.96.0.2'], '192.168.200.7 . 192.168.200.7'],
      [{ family: 6 }, ['fd00:96::1', 'fd00:96::2'], 'fd00::7 . fd00::7'],
    ] as const) {
      const ip = pair.split(' ')[0]!;
      const x = portState('ns/x', { clusterIPs: [ips[0]], internal: [ep(ip)] });
      const y = portState('ns/y', { clusterIPs: [ips[1]], internal: [ep(ip, 9090)] });
      const full = renderNftFull(stateOf(x, y), o);
      assert.equal(full.text.split(pair).length - 1, 1, 'the pair written once');
      // y goes: x still holds the pair.
      const one = renderNftPartial(full.model, stateOf(x), o, new Set(['ns/y']));
      assert.ok(!one.text.includes(pair), one.text);
      assert.deepEqual(nftTable(one.model), tableOf(nftModel(stateOf(x), o)));
      // x goes too: the pair is deleted.
      const none = renderNftPartial(one.model, stateOf(), o, new Set(['ns/x']));
      assert.ok(
        none.text.includes(
          `delete element ${o.family === 6 ? 'ip6' : 'ip'} svcplane hairpin-endpoints { ${pair} }`,
        ),
      );
      assert.deepEqual(nftTable(none.model), tableOf(nftModel(stateOf(), o)));
    }
  });

  it("writes only what changed: an added Service port's chain and elements, an endpoint gone, a Service removed", () => {
    const before = renderNftFull(stateOf(a), V4).model;
    const a2 = { ...a, internal: [ep('10.0.0.1')] };
    const plan = renderNftPartial(before, stateOf(a2, b), V4, new Set(['ns/a']));
    const m = plan.model;
    const svcA = chainNamed(nftTable(m), 'service-', 'ns/a/tcp/p80');
    const svcB = chainNamed(nftTable(m), 'service-', 'ns/b/tcp/p80');
    const t = 'ip svcplane';
    // a keeps its range (slots 0…15 of endpoints-tcp-0); b gets the next one (16…31, endpoints-tcp-1).
    assert.equal(
      plan.text,
      [
        `add chain ${t} ${svcB}`,
        `flush chain ${t} ${svcA}`,
        `add rule ${t} ${svcA} meta l4proto tcp dnat ip to numgen random mod 1 offset 0 map @endpoints-tcp-0`,
        `add rule ${t} ${svcB} meta l4proto tcp dnat ip to numgen random mod 1 offset 16 map @endpoints-tcp-1`,
        `delete element ${t} endpoints-tcp-0 { 1 }`,
        `delete element ${t} hairpin-endpoints { 10.0.0.2 . 10.0.0.2 }`,
        `add element ${t} endpoints-tcp-1 { 16 : 10.0.1.1 . 8080 }`,
        `add element ${t} hairpin-endpoints { 10.0.1.1 . 10.0.1.1 }`,
        `add element ${t} service-ips { 10.96.0.2 . tcp . 80 : goto ${svcB} }`,
        '',
      ].join('\n'),
    );
    assert.deepEqual(plan.changes, { chainsWritten: 2, chainsDeleted: 0, elements: 5 });
    const removed = renderNftPartial(m, stateOf(a2), V4, new Set());
    assert.equal(
      removed.text,
      [
        `delete element ${t} endpoints-tcp-1 { 16 }`,
        `delete element ${t} hairpin-endpoints { 10.0.1.1 . 10.0.1.1 }`,
        `delete element ${t} service-ips { 10.96.0.2 . tcp . 80 }`,
        `flush chain ${t} ${svcB}`,
        `delete chain ${t} ${svcB}`,
        '',
      ].join('\n'),
    );
    // b's range is free again: the next new chain of that size takes it.
    const c = portState('ns/c', { clusterIPs: ['10.96.0.3'], internal: [ep('10.0.2.1')] });
    const added = renderNftPartial(removed.model, stateOf(a2, c), V4, new Set());
    assert.match(added.text, /dnat ip to numgen random mod 1 offset 16 map @endpoints-tcp-1\n/);
  });

  it('changes only map elements when an endpoint is replaced, and only the chain rule when their number changes', () => {
    const three = [ep('10.0.0.1'), ep('10.0.0.2'), ep('10.0.0.3')];
    const before = renderNftFull(stateOf({ ...a, internal: three }), V4).model;
    const t = 'ip svcplane';
    const replaced = renderNftPartial(
      before,
      stateOf({ ...a, internal: [three[0]!, ep('10.0.0.25'), three[2]!] }),
      V4,
      new Set(['ns/a']),
    );
    assert.equal(
      replaced.text,
      [
        `delete element ${t} endpoints-tcp-0 { 1 }`,
        `delete element ${t} hairpin-endpoints { 10.0.0.2 . 10.0.0.2 }`,
        `add element ${t} endpoints-tcp-0 { 1 : 10.0.0.25 . 8080 }`,
        `add element ${t} hairpin-endpoints { 10.0.0.25 . 10.0.0.25 }`,
        '',
      ].join('\n'),
    );
    // A readiness flip: one endpoint fewer, the same range.
    const svcA = chainNamed(nftTable(before), 'service-', 'ns/a/tcp/p80');
    const fewer = renderNftPartial(
      replaced.model,
      stateOf({ ...a, internal: [three[0]!, three[2]!] }),
      V4,
      new Set(['ns/a']),
    );
    assert.equal(
      fewer.text,
      [
        `flush chain ${t} ${svcA}`,
        `add rule ${t} ${svcA} meta l4proto tcp dnat ip to numgen random mod 2 offset 0 map @endpoints-tcp-0`,
        `delete element ${t} endpoints-tcp-0 { 1 }`,
        `delete element ${t} endpoints-tcp-0 { 2 }`,
        `delete element ${t} hairpin-endpoints { 10.0.0.25 . 10.0.0.25 }`,
        `add element ${t} endpoints-tcp-0 { 1 : 10.0.0.3 . 8080 }`,
        '',
      ].join('\n'),
    );
    // More endpoints than the range holds: a larger range, aligned to its size, in the next free place.
    const many = Array.from({ length: 17 }, (_, i) => ep(`10.0.1.${i + 1}`));
    const grown = renderNftPartial(fewer.model, stateOf({ ...a, internal: many }), V4, new Set(['ns/a']));
    assert.deepEqual(nftTable(grown.model).chains.get(svcA)?.rules, [
      'meta l4proto tcp dnat ip to numgen random mod 17 offset 32 map @endpoints-tcp-2',
    ]);
    assert.deepEqual(grown.model.slots.ranges.get(svcA), { base: 32, size: 32 });
    assert.deepEqual(grown.model.slots.free.get(16), [0]);
  });

  it('replaces an element whose verdict changed: deleted, then added', () => {
    const before = renderNftFull(stateOf(a), V4).model;
    const plan = renderNftPartial(before, stateOf({ ...a, internal: [] }), V4, new Set(['ns/a']));
    const lines = plan.text.split('\n');
    assert.deepEqual(lines.slice(4, 6), [
      'delete element ip svcplane service-ips { 10.96.0.1 . tcp . 80 }',
      'add element ip svcplane no-endpoint-services { 10.96.0.1 . tcp . 80 : goto reject-chain }',
    ]);
  });

  it('writes the whole table when the previous one is of another family', () => {
    const before = renderNftFull(stateOf(a), V4).model;
    const plan = renderNftPartial(before, stateOf(), { family: 6 });
    assert.ok(plan.text.startsWith('add table ip6 svcplane\ndelete table ip6 svcplane\n'));
  });

  it('resyncs in place: every chain and filled map flushed and refilled, affinity sets kept, what went deleted', () => {
    const sticky = { ...a, affinityTimeoutSeconds: 60 };
    const before = renderNftFull(stateOf(sticky, b), V4).model;
    const plan = renderNftResync(before, stateOf(sticky), V4);
    const lines = plan.text.split('\n');
    const t = 'ip svcplane';
    const affinity = [...nftTable(plan.model).sets.keys()].filter((n) => n.startsWith('affinity-'));
    const svcB = chainNamed(nftTable(before), 'service-', 'ns/b/tcp/p80');
    assert.equal(affinity.length, 2);
    assert.equal(lines[0], `add table ${t}`);
    assert.ok(!lines.some((l) => l.startsWith('delete table')));
    for (const set of affinity) {
      assert.ok(
        lines.includes(`add set ${t} ${set} { type ipv4_addr ; flags dynamic,timeout ; timeout 60s ; }`),
      );
      assert.ok(!lines.includes(`flush set ${t} ${set}`), `${set} keeps the clients the kernel remembered`);
    }
    for (const map of ['service-ips', 'no-endpoint-services', 'service-nodeports'])
      assert.ok(lines.includes(`flush map ${t} ${map}`));
    for (const chain of nftTable(plan.model).chains.keys())
      assert.ok(lines.includes(`flush chain ${t} ${chain}`), chain);
    // b's chains went: created first (another writer may have deleted them already), emptied, deleted last.
    const at = (l: string): number => lines.indexOf(l);
    assert.ok(at(`add chain ${t} ${svcB}`) < at(`flush chain ${t} ${svcB}`));
    assert.ok(at(`flush chain ${t} ${svcB}`) < at(`delete chain ${t} ${svcB}`));
    assert.ok(lines.slice(at(`delete chain ${t} ${svcB}`)).every((l) => l === '' || l.startsWith('delete ')));
    assert.ok(!plan.text.includes(svcB.replace('service-', 'add rule ip svcplane service-')));
    assert.deepEqual(nftTable(plan.model), tableOf(nftModel(stateOf(sticky), V4)));
    assert.equal(plan.changes.chainsDeleted, 1);
  });
});
