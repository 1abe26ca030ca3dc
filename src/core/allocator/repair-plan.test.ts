import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalIP } from './cidr.js';
import { ipRange, type IPAllocator } from './ip-allocator.js';
import { parsePortRange, type PortAllocator } from './port-allocator.js';
import {
  collectServiceNodePorts,
  isServiceIPSet,
  NUM_REPAIRS_BEFORE_LEAK_CLEANUP,
  planClusterIPRepair,
  planNodePortRepair,
  type RepairProblem,
  type RepairService,
} from './repair-plan.js';

const svc = (
  ns: string,
  name: string,
  ips: string[] | string,
  extra: Partial<RepairService> = {},
): RepairService => {
  const list = typeof ips === 'string' ? (ips === '' ? [] : [ips]) : ips;
  return {
    namespace: ns,
    name,
    uid: `uid-${ns}-${name}`,
    clusterIP: list[0] ?? '',
    ...(list.length > 0 ? { clusterIPs: list } : {}),
    ...extra,
  };
};
const portSvc = (
  name: string,
  nodePorts: (number | [number, string])[],
  healthCheckNodePort?: number,
): RepairService => ({
  namespace: name,
  name,
  uid: `uid-${name}`,
  ports: nodePorts.map((p) =>
    typeof p === 'number' ? { nodePort: p, protocol: 'TCP' } : { nodePort: p[0], protocol: p[1] },
  ),
  ...(healthCheckNodePort === undefined ? {} : { healthCheckNodePort }),
});

/** Problems without the service uid, as [name, reason, message]. */
const brief = (ps: readonly RepairProblem[]): [string, string, string][] =>
  ps.map((p) => [`${p.service.namespace}/${p.service.name}`, p.reason, p.message]);

const ipsOf = (a: IPAllocator | undefined): string[] => {
  const out: string[] = [];
  a?.forEach((ip) => out.push(ip));
  return out;
};
const portsOf = (a: PortAllocator): number[] => {
  const out: number[] = [];
  a.forEach((p) => out.push(p));
  return out;
};
const v4 = ipRange('192.168.1.0/24');
const v6 = ipRange('2000::/108');

describe('isServiceIPSet', () => {
  it('is true only for a clusterIP that is neither "" nor "None"', () => {
    assert.equal(isServiceIPSet(svc('a', 'a', '10.0.0.1')), true);
    assert.equal(isServiceIPSet(svc('a', 'a', '')), false);
    assert.equal(isServiceIPSet(svc('a', 'a', 'None')), false);
    assert.equal(isServiceIPSet({ namespace: 'a', name: 'a', uid: 'u' }), false);
  });
});

describe('planClusterIPRepair (TestRepair* as data)', () => {
  it('TestRepair: no services and nothing stored → nothing to record, free or report', () => {
    const plan = planClusterIPRepair([v4], [], [], new Map());
    assert.deepEqual(plan.record, []);
    assert.deepEqual(plan.free, []);
    assert.deepEqual(plan.problems, []);
    assert.equal(plan.leaks.size, 0);
    assert.equal(plan.abort, undefined);
    assert.equal(plan.rebuilt.get('IPv4')!.free(), 254);
  });

  it('TestRepairWithExisting: keeps .1 and .100 (Free 252), reports the out-of-range and the duplicate', () => {
    const services = [
      svc('one', 'one', '192.168.1.1'),
      svc('two', 'two', '192.168.1.100'),
      svc('three', 'three', '192.168.0.1'),
      svc('four', 'four', ''),
      svc('five', 'five', '192.168.1.1'),
      svc('six', 'six', 'None'),
    ];
    const plan = planClusterIPRepair([v4], [], services, new Map());
    const rebuilt = plan.rebuilt.get('IPv4')!;
    assert.deepEqual(ipsOf(rebuilt), ['192.168.1.1', '192.168.1.100']);
    assert.equal(rebuilt.free(), 252);
    assert.deepEqual(plan.record, ['192.168.1.1', '192.168.1.100']);
    assert.deepEqual(plan.free, []);
    assert.deepEqual(brief(plan.problems), [
      ['one/one', 'ClusterIPNotAllocated', 'Cluster IP [IPv4]:192.168.1.1 is not allocated; repairing'],
      ['two/two', 'ClusterIPNotAllocated', 'Cluster IP [IPv4]:192.168.1.100 is not allocated; repairing'],
      [
        'three/three',
        'ClusterIPOutOfRange',
        'Cluster IP [IPv4]:192.168.0.1 is not within the service CIDR 192.168.1.0/24; please recreate service',
      ],
      [
        'five/five',
        'ClusterIPAlreadyAllocated',
        'Cluster IP [IPv4]:192.168.1.1 was assigned to multiple services; please recreate service',
      ],
    ]);
    const byReason = new Map(plan.problems.map((p) => [p.reason, p]));
    assert.deepEqual(
      [...byReason.values()].map((p) => [p.action, p.metric]),
      [
        ['ClusterIPAllocation', 'repair'],
        ['ClusterIPAllocation', 'outOfRange'],
        ['ClusterIPAllocation', 'duplicate'],
      ],
    );
    assert.deepEqual(plan.problems[0]!.service, { namespace: 'one', name: 'one', uid: 'uid-one-one' });
  });

  it('an IP already recorded and in use is neither recorded again nor reported', () => {
    const plan = planClusterIPRepair([v4], ['192.168.1.1'], [svc('one', 'one', '192.168.1.1')], new Map());
    assert.deepEqual(plan.record, []);
    assert.deepEqual(plan.free, []);
    assert.deepEqual(plan.problems, []);
    assert.equal(plan.leaks.size, 0);
  });

  it('TestRepairWithExistingDualStack: v4 Free 251, v6 Free 65533, every problem reported per IP', () => {
    const services = [
      svc('x1', 'one-v4-v6', ['192.168.1.1', '2000::1']),
      svc('x2', 'one-v6-v4', ['2000::1', '192.168.1.100']),
      svc('x3', 'two-6', ['2000::2']),
      svc('x4', 'two-4', ['192.168.1.90']),
      svc('x5', 'out-v4', ['192.168.0.1']),
      svc('x6', 'out-v6', ['3000::1']),
      svc('x6', 'out-v4-v6', ['192.168.0.1', '3000::1']),
      svc('x6', 'out-v6-v4', ['3000::1', '192.168.0.1']),
      svc('x7', 'out-empty', ''),
      svc('x8', 'duplicate', ['192.168.1.1']),
      svc('x9', 'duplicate-v6', ['2000::2']),
      svc('x10', 'headless', 'None'),
    ];
    const plan = planClusterIPRepair([v4, v6], [], services, new Map());
    const r4 = plan.rebuilt.get('IPv4')!;
    const r6 = plan.rebuilt.get('IPv6')!;
    assert.deepEqual(ipsOf(r4), ['192.168.1.1', '192.168.1.90', '192.168.1.100']);
    assert.equal(r4.free(), 251);
    assert.deepEqual(ipsOf(r6), ['2000::1', '2000::2']);
    assert.equal(r6.free(), 65533);
    const out4 =
      'Cluster IP [IPv4]:192.168.0.1 is not within the service CIDR 192.168.1.0/24; please recreate service';
    const out6 =
      'Cluster IP [IPv6]:3000::1 is not within the service CIDR 2000::/108; please recreate service';
    assert.deepEqual(brief(plan.problems), [
      ['x1/one-v4-v6', 'ClusterIPNotAllocated', 'Cluster IP [IPv4]:192.168.1.1 is not allocated; repairing'],
      ['x1/one-v4-v6', 'ClusterIPNotAllocated', 'Cluster IP [IPv6]:2000::1 is not allocated; repairing'],
      [
        'x2/one-v6-v4',
        'ClusterIPAlreadyAllocated',
        'Cluster IP [IPv6]:2000::1 was assigned to multiple services; please recreate service',
      ],
      [
        'x2/one-v6-v4',
        'ClusterIPNotAllocated',
        'Cluster IP [IPv4]:192.168.1.100 is not allocated; repairing',
      ],
      ['x3/two-6', 'ClusterIPNotAllocated', 'Cluster IP [IPv6]:2000::2 is not allocated; repairing'],
      ['x4/two-4', 'ClusterIPNotAllocated', 'Cluster IP [IPv4]:192.168.1.90 is not allocated; repairing'],
      ['x5/out-v4', 'ClusterIPOutOfRange', out4],
      ['x6/out-v6', 'ClusterIPOutOfRange', out6],
      ['x6/out-v4-v6', 'ClusterIPOutOfRange', out4],
      ['x6/out-v4-v6', 'ClusterIPOutOfRange', out6],
      ['x6/out-v6-v4', 'ClusterIPOutOfRange', out6],
      ['x6/out-v6-v4', 'ClusterIPOutOfRange', out4],
      [
        'x8/duplicate',
        'ClusterIPAlreadyAllocated',
        'Cluster IP [IPv4]:192.168.1.1 was assigned to multiple services; please recreate service',
      ],
      [
        'x9/duplicate-v6',
        'ClusterIPAlreadyAllocated',
        'Cluster IP [IPv6]:2000::2 was assigned to multiple services; please recreate service',
      ],
    ]);
    assert.deepEqual(
      [...plan.record].sort(),
      ['192.168.1.1', '192.168.1.100', '192.168.1.90', '2000::1', '2000::2'].sort(),
    );
  });

  it('reports an unparsable IP and an IP of a family the cluster no longer has (ClusterIPNotValid)', () => {
    const plan = planClusterIPRepair(
      [v4],
      [],
      [svc('a', 'bad', ['bogus']), svc('b', 'v6', ['2000::1']), svc('c', 'both', ['192.168.1.5', '2000::5'])],
      new Map(),
    );
    assert.deepEqual(brief(plan.problems), [
      ['a/bad', 'ClusterIPNotValid', 'Cluster IP bogus is not a valid IP; please recreate service'],
      [
        'b/v6',
        'ClusterIPNotValid',
        'Cluster IP 2000::1(IPv6) is of ip family that is no longer configured on cluster; please recreate service',
      ],
      ['c/both', 'ClusterIPNotAllocated', 'Cluster IP [IPv4]:192.168.1.5 is not allocated; repairing'],
      [
        'c/both',
        'ClusterIPNotValid',
        'Cluster IP 2000::5(IPv6) is of ip family that is no longer configured on cluster; please recreate service',
      ],
    ]);
    assert.deepEqual(
      plan.problems.map((p) => [p.action, p.metric]),
      [
        ['ClusterIPValidation', 'invalid'],
        ['ClusterIPValidation', 'invalid'],
        ['ClusterIPAllocation', 'repair'],
        ['ClusterIPValidation', 'invalid'],
      ],
    );
    assert.deepEqual(plan.record, ['192.168.1.5']);
  });

  it('reads clusterIP when an old object has no clusterIPs', () => {
    const plan = planClusterIPRepair(
      [v4],
      [],
      [{ namespace: 'a', name: 'a', uid: 'u', clusterIP: '192.168.1.9' }],
      new Map(),
    );
    assert.deepEqual(plan.record, ['192.168.1.9']);
  });

  it('matches stored and used addresses by value, whatever their spelling', () => {
    const plan = planClusterIPRepair([v6], ['2000::1'], [svc('a', 'a', ['2000:0:0::0001'])], new Map());
    assert.deepEqual(plan.record, []);
    assert.deepEqual(plan.free, []);
    assert.equal(plan.leaks.size, 0);
    assert.deepEqual(ipsOf(plan.rebuilt.get('IPv6')), ['2000::1']);
  });

  it('TestRepairLeak: a leaked IP is kept after passes 1 and 2 and freed on pass 3', () => {
    assert.equal(NUM_REPAIRS_BEFORE_LEAK_CLEANUP, 3);
    const stored = ['192.168.1.10'];
    const p1 = planClusterIPRepair([v4], stored, [], new Map());
    assert.deepEqual(ipsOf(p1.rebuilt.get('IPv4')), ['192.168.1.10']);
    assert.deepEqual(p1.free, []);
    assert.deepEqual([...p1.leaks], [['192.168.1.10', 1]]);
    assert.deepEqual(p1.logs, ['the cluster IP 192.168.1.10 may have leaked: flagging for later clean up']);
    const p2 = planClusterIPRepair([v4], stored, [], p1.leaks);
    assert.deepEqual(ipsOf(p2.rebuilt.get('IPv4')), ['192.168.1.10']);
    assert.deepEqual(p2.free, []);
    assert.deepEqual([...p2.leaks], [['192.168.1.10', 0]]);
    assert.deepEqual(p2.logs, []);
    const p3 = planClusterIPRepair([v4], stored, [], p2.leaks);
    assert.deepEqual(ipsOf(p3.rebuilt.get('IPv4')), []);
    assert.deepEqual(p3.free, ['192.168.1.10']);
    assert.equal(p3.leaks.size, 0);
    assert.deepEqual(p3.logs, ['the cluster IP 192.168.1.10 appears to have leaked: cleaning up']);
    assert.deepEqual(p3.record, []);
    assert.deepEqual(p3.problems, []);
  });

  it('TestRepairLeakDualStack: 192.168.1.10 and 2000::1 kept after 2 passes, gone after the 3rd', () => {
    const stored = ['192.168.1.10', '2000::1'];
    let leaks = new Map<string, number>();
    for (let pass = 1; pass <= 3; pass++) {
      const p = planClusterIPRepair([v4, v6], stored, [], leaks);
      const held = [...ipsOf(p.rebuilt.get('IPv4')), ...ipsOf(p.rebuilt.get('IPv6'))];
      if (pass < 3) {
        assert.deepEqual(held, stored, `pass ${pass}`);
        assert.deepEqual(p.free, []);
      } else {
        assert.deepEqual(held, []);
        assert.deepEqual([...p.free].sort(), [...stored].sort());
      }
      leaks = p.leaks;
    }
  });

  it('a leak that becomes used in between loses its counter, and gets three fresh passes when unused again', () => {
    const ip = '192.168.1.10';
    const user = [svc('a', 'a', ip)];
    const p1 = planClusterIPRepair([v4], [ip], [], new Map());
    assert.equal(p1.leaks.get(ip), 1);
    const p2 = planClusterIPRepair([v4], [ip], user, p1.leaks);
    assert.equal(p2.leaks.has(ip), false);
    assert.deepEqual(p2.free, []);
    assert.deepEqual(p2.problems, []);
    const p3 = planClusterIPRepair([v4], [ip], [], p2.leaks);
    assert.equal(p3.leaks.get(ip), 1);
    assert.deepEqual(p3.logs, [`the cluster IP ${ip} may have leaked: flagging for later clean up`]);
    const p4 = planClusterIPRepair([v4], [ip], [], p3.leaks);
    assert.equal(p4.leaks.get(ip), 0);
    assert.deepEqual(p4.free, []);
    const p5 = planClusterIPRepair([v4], [ip], [], p4.leaks);
    assert.deepEqual(p5.free, [ip]);
  });

  it('a value freed as a leak that leaks again later is counted from the start again (documented deviation)', () => {
    const ip = '192.168.1.10';
    let leaks = new Map<string, number>();
    for (let pass = 0; pass < 3; pass++) leaks = planClusterIPRepair([v4], [ip], [], leaks).leaks;
    assert.equal(leaks.has(ip), false);
    const again = planClusterIPRepair([v4], [ip], [], leaks);
    assert.deepEqual(again.free, []);
    assert.equal(again.leaks.get(ip), 1);
  });

  it('a stored address outside every configured range is freed at once', () => {
    const plan = planClusterIPRepair([v4], ['10.0.0.5', '2000::7'], [], new Map());
    assert.deepEqual(plan.free, ['10.0.0.5', '2000::7']);
    assert.equal(plan.leaks.size, 0);
    assert.equal(plan.logs.length, 4);
    assert.ok(
      plan.logs[1]!.startsWith('the cluster IP 10.0.0.5 may have leaked, but can not be allocated: '),
      plan.logs[1],
    );
    assert.ok(
      plan.logs[3]!.startsWith('the cluster IP 2000::7 may have leaked, but can not be allocated: '),
      plan.logs[3],
    );
  });
});

describe('collectServiceNodePorts (TestCollectServiceNodePorts)', () => {
  const table: { ports: [number, string][]; hc?: number; want: number[] }[] = [
    {
      ports: [
        [111, 'TCP'],
        [112, 'UDP'],
        [113, 'UDP'],
      ],
      want: [111, 112, 113],
    },
    {
      ports: [
        [111, 'TCP'],
        [111, 'TCP'],
        [112, 'UDP'],
      ],
      want: [111, 111, 112],
    },
    {
      ports: [
        [111, 'UDP'],
        [111, 'UDP'],
        [112, 'TCP'],
      ],
      want: [111, 111, 112],
    },
    {
      ports: [
        [111, 'TCP'],
        [112, 'TCP'],
        [111, 'UDP'],
      ],
      want: [111, 112],
    },
    {
      ports: [
        [111, 'TCP'],
        [112, 'UDP'],
      ],
      hc: 113,
      want: [111, 112, 113],
    },
    {
      ports: [
        [111, 'UDP'],
        [112, 'TCP'],
      ],
      hc: 111,
      want: [111, 112],
    },
    {
      ports: [
        [111, 'UDP'],
        [112, 'TCP'],
      ],
      hc: 112,
      want: [111, 112, 112],
    },
  ];
  for (const tc of table) {
    const label =
      tc.ports.map(([p, proto]) => `${p}/${proto}`).join(',') + (tc.hc === undefined ? '' : ` hc ${tc.hc}`);
    it(`${label} → [${tc.want.join(',')}]`, () => {
      const got = collectServiceNodePorts(portSvc('s', tc.ports, tc.hc));
      assert.deepEqual(
        [...got].sort((a, b) => a - b),
        tc.want,
      );
    });
  }

  it('ignores nodePort 0 and a healthCheckNodePort of 0, and reads a missing protocol as TCP', () => {
    assert.deepEqual(collectServiceNodePorts({ ports: [{}, { nodePort: 0 }], healthCheckNodePort: 0 }), []);
    assert.deepEqual(
      collectServiceNodePorts({ ports: [{ nodePort: 111 }, { nodePort: 111, protocol: 'TCP' }] }),
      [111, 111],
    );
    assert.deepEqual(collectServiceNodePorts({}), []);
  });
});

describe('planNodePortRepair (TestRepair* as data, range 100-200)', () => {
  const range = parsePortRange('100-200');

  it('TestRepair: no services and nothing stored → nothing to do', () => {
    const plan = planNodePortRepair(range, [], [], new Map());
    assert.deepEqual([plan.record, plan.free, plan.problems, plan.logs], [[], [], [], []]);
    assert.equal(plan.rebuilt.free(), 101);
    assert.equal(plan.rebuilt.spec, '100-200');
  });

  it('TestRepairWithExisting: has 111, 122, 133, 144; Free 97; out-of-range and duplicate reported', () => {
    const services = [
      portSvc('one', [111]),
      portSvc('two', [122, 133]),
      portSvc('three', [201]),
      { ...portSvc('four', []), ports: [{}] },
      portSvc('five', [111]),
      portSvc('six', [], 144),
    ];
    const plan = planNodePortRepair(range, [], services, new Map());
    assert.deepEqual(portsOf(plan.rebuilt), [111, 122, 133, 144]);
    assert.equal(plan.rebuilt.free(), 97);
    assert.deepEqual(plan.record, [111, 122, 133, 144]);
    assert.deepEqual(brief(plan.problems), [
      ['one/one', 'PortNotAllocated', 'Port 111 is not allocated; repairing'],
      ['two/two', 'PortNotAllocated', 'Port 122 is not allocated; repairing'],
      ['two/two', 'PortNotAllocated', 'Port 133 is not allocated; repairing'],
      [
        'three/three',
        'PortOutOfRange',
        'Port 201 is not within the port range 100-200; please recreate service',
      ],
      [
        'five/five',
        'PortAlreadyAllocated',
        'Port 111 was assigned to multiple services; please recreate service',
      ],
      ['six/six', 'PortNotAllocated', 'Port 144 is not allocated; repairing'],
    ]);
    assert.deepEqual(
      plan.problems.map((p) => [p.action, p.metric]),
      [
        ['PortAllocation', 'repair'],
        ['PortAllocation', 'repair'],
        ['PortAllocation', 'repair'],
        ['PortAllocation', 'outOfRange'],
        ['PortAllocation', 'duplicate'],
        ['PortAllocation', 'repair'],
      ],
    );
  });

  it('a nodePort listed twice for one protocol in one Service is a duplicate; across protocols it is one port', () => {
    const plan = planNodePortRepair(
      range,
      [150, 160],
      [
        portSvc('dup', [150, 150]),
        portSvc('dns', [
          [160, 'TCP'],
          [160, 'UDP'],
        ]),
      ],
      new Map(),
    );
    assert.deepEqual(brief(plan.problems), [
      [
        'dup/dup',
        'PortAlreadyAllocated',
        'Port 150 was assigned to multiple services; please recreate service',
      ],
    ]);
    assert.deepEqual(portsOf(plan.rebuilt), [150, 160]);
  });

  it('TestRepairLeak: port 111 is kept after passes 1 and 2 and freed on pass 3', () => {
    let leaks = new Map<number, number>();
    const p1 = planNodePortRepair(range, [111], [], leaks);
    assert.deepEqual(portsOf(p1.rebuilt), [111]);
    assert.deepEqual(p1.logs, ['the node port 111 may have leaked: flagging for later clean up']);
    assert.deepEqual([...p1.leaks], [[111, 1]]);
    leaks = p1.leaks;
    const p2 = planNodePortRepair(range, [111], [], leaks);
    assert.deepEqual(portsOf(p2.rebuilt), [111]);
    assert.deepEqual(p2.free, []);
    assert.deepEqual([...p2.leaks], [[111, 0]]);
    const p3 = planNodePortRepair(range, [111], [], p2.leaks);
    assert.deepEqual(portsOf(p3.rebuilt), []);
    assert.deepEqual(p3.free, [111]);
    assert.deepEqual(p3.logs, ['the node port 111 appears to have leaked: cleaning up']);
  });

  it('a stored port outside the range is freed at once ("may have leaked, but can not be allocated")', () => {
    const plan = planNodePortRepair(range, [300], [], new Map());
    assert.deepEqual(plan.free, [300]);
    assert.equal(plan.leaks.size, 0);
    assert.ok(
      plan.logs.some((l) => l.startsWith('the node port 300 may have leaked, but can not be allocated: ')),
    );
  });
});

// ---- properties -------------------------------------------------------------------------------

const V4_POOL = [
  '10.0.0.1',
  '10.0.0.2',
  '10.0.0.7',
  '10.0.0.14',
  '10.0.0.0',
  '10.0.0.15',
  '10.0.1.1',
  '::ffff:10.0.0.3',
];
const V6_POOL = ['fd00::1', 'fd00::2', 'fd00:0::9', 'fd00::f', 'fd00::10', 'fe80::1'];
const IP_POOL = [...V4_POOL, ...V6_POOL, 'bogus'];
const IN_RANGE = [
  '10.0.0.1',
  '10.0.0.2',
  '10.0.0.5',
  '10.0.0.7',
  '10.0.0.14',
  'fd00::1',
  'fd00::2',
  'fd00::9',
  'fd00::e',
];

const ipServiceArb = fc.array(
  fc.oneof(
    fc.constant<string[] | string>(''),
    fc.constant<string[] | string>('None'),
    fc.constantFrom(...IP_POOL).map((ip) => [ip]),
    fc.tuple(fc.constantFrom(...V4_POOL), fc.constantFrom(...V6_POOL)).map(([a, b]) => [a, b]),
    fc.tuple(fc.constantFrom(...V6_POOL), fc.constantFrom(...V4_POOL)).map(([a, b]) => [a, b]),
  ),
  { maxLength: 12 },
);

describe('repair plan properties', () => {
  it('planClusterIPRepair is idempotent: after applying a plan, re-planning records nothing and reports the same per-service problems', () => {
    const singleStack = [ipRange('10.0.0.0/28')];
    const dualStack = [ipRange('10.0.0.0/28'), ipRange('fd00::/124')];
    fc.assert(
      fc.property(
        fc.boolean(),
        ipServiceArb,
        fc.uniqueArray(fc.constantFrom(...IN_RANGE, '10.9.9.9')),
        fc.array(fc.tuple(fc.constantFrom(...IN_RANGE), fc.integer({ min: 0, max: 2 }))),
        (dual, ipLists, stored, prev) => {
          const ranges = dual ? dualStack : singleStack;
          const services = ipLists.map((ips, i) => svc('ns', `s${i}`, ips));
          const previous = new Map(prev);
          const p1 = planClusterIPRepair(ranges, stored, services, previous);
          assert.equal(p1.abort, undefined);
          const applied = new Set(stored);
          for (const ip of p1.record) applied.add(ip);
          for (const ip of p1.free) applied.delete(ip);
          const rebuilt = ranges.flatMap((r) => ipsOf(p1.rebuilt.get(r.family)));
          assert.deepEqual(
            new Set(rebuilt),
            applied,
            'the rebuilt allocation is what the store holds after the plan',
          );

          const used = new Set<string>();
          for (const s of services) {
            for (const ip of s.clusterIPs ?? []) {
              const c = canonicalIP(ip);
              if (c !== undefined && ranges.some((r) => p1.rebuilt.get(r.family)!.contains(c))) used.add(c);
            }
          }
          for (const ip of used) assert.ok(applied.has(ip), `${ip} in use but not recorded`);
          for (const ip of p1.free) assert.ok(!used.has(ip), `${ip} in use but freed`);

          const p2 = planClusterIPRepair(ranges, [...applied], services, p1.leaks);
          assert.deepEqual(p2.record, []);
          for (const ip of p2.free) assert.ok(!used.has(ip), `${ip} in use but freed`);
          assert.deepEqual(
            p2.problems,
            p1.problems.filter((p) => p.reason !== 'ClusterIPNotAllocated'),
          );
          for (const [ip, n] of p2.leaks) assert.equal(p1.leaks.get(ip), n + 1);
        },
      ),
      { seed: 333, numRuns: 500 },
    );
  });

  it('planNodePortRepair is idempotent: after applying a plan, re-planning records nothing and reports the same per-service problems', () => {
    const range = parsePortRange('100-130');
    const portArb = fc.tuple(
      fc.constantFrom(100, 101, 105, 116, 117, 130, 99, 131, 200, 0),
      fc.constantFrom('TCP', 'UDP'),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.array(portArb, { maxLength: 4 }), fc.option(fc.constantFrom(101, 110, 140)))),
        fc.uniqueArray(fc.constantFrom(100, 101, 110, 117, 125, 130, 150)),
        fc.array(fc.tuple(fc.constantFrom(100, 110, 125), fc.integer({ min: 0, max: 2 }))),
        (specs, stored, prev) => {
          const services = specs.map(([ports, hc], i) => portSvc(`s${i}`, ports, hc ?? undefined));
          const p1 = planNodePortRepair(range, stored, services, new Map(prev));
          assert.equal(p1.abort, undefined);
          const applied = new Set<number>(stored);
          for (const p of p1.record) applied.add(p);
          for (const p of p1.free) applied.delete(p);
          assert.deepEqual(new Set(portsOf(p1.rebuilt)), applied);
          const used = new Set(
            services.flatMap((s) => collectServiceNodePorts(s)).filter((p) => p >= 100 && p <= 130),
          );
          for (const p of used) assert.ok(applied.has(p), `${p} in use but not recorded`);
          for (const p of p1.free) assert.ok(!used.has(p), `${p} in use but freed`);

          const p2 = planNodePortRepair(range, [...applied], services, p1.leaks);
          assert.deepEqual(p2.record, []);
          for (const p of p2.free) assert.ok(!used.has(p), `${p} in use but freed`);
          assert.deepEqual(
            p2.problems,
            p1.problems.filter((p) => p.reason !== 'PortNotAllocated'),
          );
        },
      ),
      { seed: 444, numRuns: 500 },
    );
  });

  /** One repair flavour, reduced to what the leak property needs. */
  interface Flavour<V> {
    name: string;
    value: V;
    user: RepairService;
    plan: (
      stored: Iterable<V>,
      services: RepairService[],
      leaks: ReadonlyMap<V, number>,
    ) => {
      record: V[];
      free: V[];
      leaks: Map<V, number>;
    };
  }
  const flavours: [Flavour<string>, Flavour<number>] = [
    {
      name: 'cluster IP',
      value: '192.168.1.10',
      user: svc('ns', 'user', '192.168.1.10'),
      plan: (stored, services, leaks) => planClusterIPRepair([v4], stored, services, leaks),
    },
    {
      name: 'node port',
      value: 150,
      user: portSvc('user', [150]),
      plan: (stored, services, leaks) =>
        planNodePortRepair(parsePortRange('100-200'), stored, services, leaks),
    },
  ];
  const leakLifecycle = <V>(f: Flavour<V>): void => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        (usedPerPass, startStored) => {
          const v = f.value;
          let stored = new Set<V>(startStored ? [v] : []);
          let leaks = new Map<V, number>();
          let counter: number | undefined; // the model's remaining passes
          for (const used of usedPerPass) {
            const plan = f.plan(stored, used ? [f.user] : [], leaks);
            const wasStored = stored.has(v);
            stored = new Set(stored);
            for (const x of plan.record) stored.add(x);
            for (const x of plan.free) stored.delete(x);
            if (used) {
              counter = undefined;
              assert.equal(plan.record.includes(v), !wasStored);
              assert.ok(stored.has(v));
              assert.equal(plan.leaks.has(v), false);
            } else if (wasStored) {
              const c = counter ?? NUM_REPAIRS_BEFORE_LEAK_CLEANUP - 1;
              if (c > 0) {
                counter = c - 1;
                assert.equal(plan.leaks.get(v), counter);
                assert.ok(stored.has(v), 'kept while counting down');
              } else {
                counter = undefined;
                assert.deepEqual(plan.free, [v]);
                assert.ok(!stored.has(v));
              }
            } else {
              assert.equal(plan.leaks.has(v), false);
              assert.deepEqual(plan.free, []);
            }
            leaks = plan.leaks;
          }
        },
      ),
      { seed: 3, numRuns: 300 },
    );
  };
  it('a leaked cluster IP survives two passes and is freed on the third; a pass that sees it used resets its counter', () =>
    leakLifecycle(flavours[0]));
  it('a leaked node port survives two passes and is freed on the third; a pass that sees it used resets its counter', () =>
    leakLifecycle(flavours[1]));
});
