import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { renderFull } from '../proxy/iptables.js';
import { ep, portState, stateOf } from '../proxy/testing/builders.js';
import { iptablesNodeRules, nftNodeRules, nftReferences } from './node-rules.js';

// `nft -j list table ip svcplane` items, in nft 1.0.6's shapes, for: 10.96.0.10:80 served by two
// endpoints, 10.96.0.20:80 with no endpoint anywhere (reject), 10.96.0.30:80 with none for this node (drop).
const SVC = 'service-OGPE2SOP-default/web/tcp/http';
const EP1 = 'endpoint-22RBNDS5-default/web/tcp/http__10.244.1.1/8080';
const EP2 = 'endpoint-AYT5BWUO-default/web/tcp/http__10.244.2.1/8080';
const key = (ip: string, port: number) => ({ concat: [ip, 'tcp', port] });
const map = (name: string, elem: unknown[]) => ({
  map: {
    family: 'ip',
    name,
    table: 'svcplane',
    type: ['ipv4_addr', 'inet_proto', 'inet_service'],
    map: 'verdict',
    elem,
  },
});
const rule = (chain: string, expr: unknown[]) => ({ rule: { family: 'ip', table: 'svcplane', chain, expr } });
const endpointRules = (chain: string, ip: string) => [
  rule(chain, [
    { match: { op: '==', left: { payload: { protocol: 'ip', field: 'saddr' } }, right: ip } },
    { jump: { target: 'mark-for-masquerade' } },
  ]),
  rule(chain, [
    { match: { op: '==', left: { meta: { key: 'l4proto' } }, right: 'tcp' } },
    { dnat: { addr: ip, port: 8080 } },
  ]),
];
const NFT: unknown[] = [
  { metainfo: { version: '1.0.6', json_schema_version: 1 } },
  { table: { family: 'ip', name: 'svcplane' } },
  map('no-endpoint-services', [
    [key('10.96.0.20', 80), { goto: { target: 'reject-chain' } }],
    [key('10.96.0.30', 80), { drop: null }],
  ]),
  map('service-ips', [[key('10.96.0.10', 80), { goto: { target: SVC } }]]),
  rule('mark-for-masquerade', [{ mangle: { key: { meta: { key: 'mark' } }, value: 16384 } }]),
  ...endpointRules(EP1, '10.244.1.1'),
  ...endpointRules(EP2, '10.244.2.1'),
  rule(SVC, [
    {
      vmap: {
        key: { numgen: { mode: 'random', mod: 2, offset: 0 } },
        data: {
          set: [
            [0, { goto: { target: EP1 } }],
            [1, { goto: { target: EP2 } }],
          ],
        },
      },
    },
  ]),
];

describe('nftNodeRules', () => {
  it('follows service-ips to the Service chain and its endpoint chains to their DNAT targets', () => {
    assert.deepEqual(nftNodeRules(NFT, '10.96.0.10', 80), {
      kind: 'dnat',
      chain: SVC,
      targets: ['10.244.1.1:8080', '10.244.2.1:8080'],
    });
  });

  it('reads no-endpoint-services: reject-chain is a refusal, drop a drop; an unknown destination is none', () => {
    const table: Array<[string, number, string]> = [
      ['10.96.0.20', 80, 'reject'],
      ['10.96.0.30', 80, 'drop'],
      ['10.96.0.10', 81, 'none'],
      ['10.96.0.99', 80, 'none'],
    ];
    for (const [ip, port, kind] of table)
      assert.deepEqual(nftNodeRules(NFT, ip, port), { kind }, `${ip}:${port}`);
  });

  it('reads a DNAT through an endpoint map: the slots of the chain range only', () => {
    const items = [
      map('service-ips', [[key('10.96.0.10', 80), { goto: { target: SVC } }]]),
      {
        map: {
          family: 'ip',
          name: 'endpoints-1',
          table: 'svcplane',
          type: 'integer',
          map: 'ipv4_addr . inet_service',
          elem: [
            [16, { concat: ['10.244.1.1', 8080] }],
            [17, { concat: ['10.244.2.1', 8080] }],
            [18, { concat: ['10.244.9.9', 8080] }],
          ],
        },
      },
      rule(SVC, [
        { match: { op: '==', left: { meta: { key: 'l4proto' } }, right: 'tcp' } },
        {
          dnat: {
            family: 'ip',
            addr: { map: { key: { numgen: { mode: 'random', mod: 2, offset: 16 } }, data: '@endpoints-1' } },
          },
        },
      ]),
    ];
    assert.deepEqual(nftNodeRules(items, '10.96.0.10', 80), {
      kind: 'dnat',
      chain: SVC,
      targets: ['10.244.1.1:8080', '10.244.2.1:8080'],
    });
  });

  it('a Service chain without endpoint chains DNATs nowhere', () => {
    const items = [map('service-ips', [[key('10.96.0.10', 80), { goto: { target: SVC } }]])];
    assert.deepEqual(nftNodeRules(items, '10.96.0.10', 80), { kind: 'dnat', chain: SVC, targets: [] });
  });
});

describe('nftReferences', () => {
  it('names the chains a chain jumps or goes to, and the maps its DNATs look up', () => {
    assert.deepEqual(nftReferences(NFT, SVC), { chains: [EP1, EP2], maps: [] });
    assert.deepEqual(nftReferences(NFT, EP1), { chains: ['mark-for-masquerade'], maps: [] });
    const viaMap = rule('service-x', [
      {
        dnat: {
          family: 'ip',
          addr: {
            map: { key: { numgen: { mode: 'random', mod: 2, offset: 16 } }, data: '@endpoints-tcp-1' },
          },
        },
      },
    ]);
    assert.deepEqual(nftReferences([viaMap], 'service-x'), { chains: [], maps: ['endpoints-tcp-1'] });
    assert.deepEqual(nftReferences(NFT, 'no-such-chain'), { chains: [], maps: [] });
  });
});

describe('iptablesNodeRules', () => {
  // The iptables mode's own rules for the same three cases, split into the nat and filter tables.
  const state = stateOf(
    portState('default/web:http', { internal: [ep('10.244.1.1'), ep('10.244.2.1')] }),
    portState('default/none:http', { clusterIPs: ['10.96.0.20'] }),
  );
  const text = renderFull(state, { nat: [], filter: [] }, { family: 4 }).text;
  const [nat = '', filter = ''] = text.split('*filter');

  it('follows KUBE-SERVICES to KUBE-SVC and its KUBE-SEP chains to their DNAT targets', () => {
    const r = iptablesNodeRules(nat, filter, '10.96.0.10', 80);
    assert.equal(r.kind, 'dnat');
    assert.match(r.kind === 'dnat' ? r.chain : '', /^KUBE-SVC-/);
    assert.deepEqual(r.kind === 'dnat' ? r.targets : [], ['10.244.1.1:8080', '10.244.2.1:8080']);
  });

  it("reads filter KUBE-SERVICES' REJECT and DROP, in iptables-save's option order", () => {
    assert.deepEqual(iptablesNodeRules(nat, filter, '10.96.0.20', 80), { kind: 'reject' });
    const saved = [
      '*filter',
      '-A KUBE-SERVICES -d 10.96.0.30/32 -p tcp -m comment --comment "default/x:http has no local endpoints -j X" -m tcp --dport 80 -j DROP',
      '-A KUBE-SERVICES -d 10.96.0.40/32 -p tcp -m comment --comment "default/y:http has no endpoints" -m tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable',
    ].join('\n');
    assert.deepEqual(iptablesNodeRules('', saved, '10.96.0.30', 80), { kind: 'drop' });
    assert.deepEqual(iptablesNodeRules('', saved, '10.96.0.40', 80), { kind: 'reject' });
    assert.deepEqual(iptablesNodeRules('', saved, '10.96.0.40', 443), { kind: 'none' });
    assert.deepEqual(iptablesNodeRules(nat, filter, '10.96.0.10', 81), { kind: 'none' });
  });
});
