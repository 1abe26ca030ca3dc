import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { endpointSubsetsEqual, repackSubsets } from './repack.js';
import { addr, port, subset } from './testing/builders.js';
import type { EndpointAddress, EndpointPort, EndpointSubset } from './types.js';

const ips = (subsets: EndpointSubset[]): Array<[string[], string[], string[]]> =>
  subsets.map((s) => [
    (s.addresses ?? []).map((a) => a.ip),
    (s.notReadyAddresses ?? []).map((a) => a.ip),
    (s.ports ?? []).map((p) => `${p.name ?? ''}:${p.port}/${p.protocol ?? ''}`),
  ]);

describe('repackSubsets', () => {
  it('groups 3 pods × 2 ports into ONE subset with 3 addresses and 2 ports', () => {
    const input: EndpointSubset[] = [];
    for (const [i, ip] of ['1.2.3.4', '1.2.3.5', '1.2.3.6'].entries()) {
      for (const p of [port(8080, 'port0'), port(8088, 'port1')])
        input.push(subset([addr(ip, `pod${i}`)], [p]));
    }
    assert.deepEqual(repackSubsets(input), [
      subset(
        [addr('1.2.3.4', 'pod0'), addr('1.2.3.5', 'pod1'), addr('1.2.3.6', 'pod2')],
        [port(8080, 'port0'), port(8088, 'port1')],
      ),
    ]);
  });

  it('keeps ready and not-ready addresses of one port in one subset', () => {
    const input = [
      subset([addr('1.2.3.4', 'pod0')], [port(8080)]),
      subset([], [port(8080)], [addr('1.2.3.5', 'pod1')]),
    ];
    assert.deepEqual(repackSubsets(input), [
      subset([addr('1.2.3.4', 'pod0')], [port(8080)], [addr('1.2.3.5', 'pod1')]),
    ]);
  });

  it('not ready trumps ready for the same address and port, in either input order', () => {
    const ready = subset([addr('1.2.3.4', 'pod0')], [port(80)]);
    const notReady = subset([], [port(80)], [addr('1.2.3.4', 'pod0')]);
    const want = [subset([], [port(80)], [addr('1.2.3.4', 'pod0')])];
    assert.deepEqual(repackSubsets([ready, notReady]), want);
    assert.deepEqual(repackSubsets([notReady, ready]), want);
  });

  it('decides readiness per port: ready on one port, not ready on another → two subsets', () => {
    const input = [
      subset([addr('1.2.3.4', 'pod0')], [port(80)]),
      subset([], [port(90)], [addr('1.2.3.4', 'pod0')]),
    ];
    assert.deepEqual(ips(repackSubsets(input)), [
      [[], ['1.2.3.4'], [':90/TCP']],
      [['1.2.3.4'], [], [':80/TCP']],
    ]);
  });

  it('de-duplicates by (ip, targetRef.uid), keeping the first record seen', () => {
    const first = addr('1.2.3.4', 'pod0', 'default', { hostname: 'first' });
    const again = addr('1.2.3.4', 'pod0', 'default', { hostname: 'second' });
    const out = repackSubsets([subset([first], [port(80)]), subset([again], [port(80)])]);
    assert.deepEqual(out, [subset([first], [port(80)])]);
  });

  it('keeps one IP with different uids apart, no targetRef first, then by uid', () => {
    const out = repackSubsets([
      subset([addr('1.2.3.4', 'pod-b'), addr('1.2.3.4'), addr('1.2.3.4', 'pod-a')], [port(80)]),
    ]);
    assert.deepEqual(
      out[0]!.addresses!.map((a) => a.targetRef?.uid),
      [undefined, 'uid-pod-a', 'uid-pod-b'],
    );
  });

  it('sorts addresses by IP as raw strings: "10.0.0.1" < "10.0.0.10" < "10.0.0.2"', () => {
    const out = repackSubsets([
      subset(
        [addr('10.0.0.2'), addr('10.0.0.10'), addr('10.0.0.1')],
        [port(80)],
        [addr('9.0.0.1'), addr('10.9.9.9')],
      ),
    ]);
    assert.deepEqual(ips(out), [
      [['10.0.0.1', '10.0.0.10', '10.0.0.2'], ['10.9.9.9', '9.0.0.1'], [':80/TCP']],
    ]);
  });

  it('keeps a portless subset (headless without ports), with no ports field', () => {
    assert.deepEqual(repackSubsets([{ addresses: [addr('1.2.3.4', 'pod0')] }]), [
      { addresses: [addr('1.2.3.4', 'pod0')] },
    ]);
    assert.deepEqual(repackSubsets([{ addresses: [addr('1.2.3.4')], ports: [] }]), [
      { addresses: [addr('1.2.3.4')] },
    ]);
  });

  it('unites portless subsets, and folds them into a ported subset with the same addresses', () => {
    assert.deepEqual(ips(repackSubsets([subset([addr('1.1.1.1')]), subset([addr('1.1.1.2')])])), [
      [['1.1.1.1', '1.1.1.2'], [], []],
    ]);
    assert.deepEqual(ips(repackSubsets([subset([addr('1.1.1.1')]), subset([addr('1.1.1.1')], [port(80)])])), [
      [['1.1.1.1'], [], [':80/TCP']],
    ]);
  });

  it('drops ports that no address offers', () => {
    assert.deepEqual(repackSubsets([subset([], [port(80)])]), []);
  });

  it('puts ports and subsets in our canonical order (ports by name, port, protocol; subsets by addresses)', () => {
    const out = repackSubsets([
      subset([addr('1.1.1.2')], [port(53, 'dns', 'UDP'), port(53, 'dns', 'TCP'), port(80, 'a')]),
      subset([addr('1.1.1.1')], [port(9000, 'z'), port(443, 'b'), port(80, 'b')]),
      subset([], [port(1)], [addr('1.1.1.1')]),
    ]);
    assert.deepEqual(ips(out), [
      [[], ['1.1.1.1'], [':1/TCP']],
      [['1.1.1.1'], [], ['b:80/TCP', 'b:443/TCP', 'z:9000/TCP']],
      [['1.1.1.2'], [], ['a:80/TCP', 'dns:53/TCP', 'dns:53/UDP']],
    ]);
  });

  it('returns [] for absent, null or malformed input, and skips entries that are not objects', () => {
    assert.deepEqual(repackSubsets(undefined), []);
    assert.deepEqual(repackSubsets(null), []);
    assert.deepEqual(repackSubsets('nonsense' as never), []);
    assert.deepEqual(repackSubsets([null, 3, { addresses: [null, addr('1.1.1.1')] }] as never), [
      { addresses: [addr('1.1.1.1')] },
    ]);
  });

  it('does not modify its input, and its output shares no objects with it', () => {
    const input = [subset([addr('1.2.3.5', 'b'), addr('1.2.3.4', 'a')], [port(81), port(80)])];
    const before = structuredClone(input);
    const out = repackSubsets(input);
    assert.deepEqual(input, before);
    out[0]!.addresses![0]!.targetRef!.name = 'changed';
    out[0]!.ports![0]!.port = 1;
    assert.deepEqual(input, before);
  });
});

// ---- properties ------------------------------------------------------------------------------------

// Records with one (ip, uid) identity agree in every field, as they do when built from pods; the first
// record seen would otherwise win and the order of the input would show through.
const arbAddress: fc.Arbitrary<EndpointAddress> = fc
  .tuple(
    fc.constantFrom('10.0.0.1', '10.0.0.2', '10.0.0.10', '2000::1'),
    fc.constantFrom('a', 'b', undefined),
  )
  .map(([ip, uid]) =>
    uid === undefined
      ? { ip }
      : { ip, nodeName: `node-${uid}`, targetRef: { kind: 'Pod', namespace: 'ns', name: `pod-${uid}`, uid } },
  );
const PORTS: EndpointPort[] = [
  port(80, 'http'),
  port(80, 'http', 'UDP'),
  port(443, 'https'),
  port(53, 'dns', 'UDP'),
];
const arbSubset: fc.Arbitrary<EndpointSubset> = fc
  .record({
    addresses: fc.array(arbAddress, { maxLength: 4 }),
    notReadyAddresses: fc.array(arbAddress, { maxLength: 3 }),
    ports: fc.subarray(PORTS),
  })
  .map((s) => ({
    ...(s.addresses.length > 0 ? { addresses: s.addresses } : {}),
    ...(s.notReadyAddresses.length > 0 ? { notReadyAddresses: s.notReadyAddresses } : {}),
    ...(s.ports.length > 0 ? { ports: s.ports } : {}),
  }));
const arbSubsets = fc.array(arbSubset, { maxLength: 6 });

/** Fisher-Yates with a seeded generator (mulberry32), so that a failure shrinks and replays. */
function shuffle<T>(xs: readonly T[], seed: number): T[] {
  let s = seed >>> 0;
  const next = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const idOf = (a: EndpointAddress): string => JSON.stringify([a.ip, a.targetRef?.uid ?? '']);
const portId = (p: EndpointPort): string => `${p.name}:${p.port}/${p.protocol}`;

describe('repackSubsets properties', () => {
  it('is idempotent', () => {
    fc.assert(
      fc.property(arbSubsets, (subsets) => {
        const once = repackSubsets(subsets);
        assert.deepEqual(repackSubsets(once), once);
      }),
    );
  });

  it('does not depend on the order of subsets, addresses or ports in its input', () => {
    fc.assert(
      fc.property(arbSubsets, fc.integer(), (subsets, seed) => {
        const shuffled = shuffle(subsets, seed).map((s, i) => ({
          ...(s.addresses ? { addresses: shuffle(s.addresses, seed + i) } : {}),
          ...(s.notReadyAddresses ? { notReadyAddresses: shuffle(s.notReadyAddresses, seed - i) } : {}),
          ...(s.ports ? { ports: shuffle(s.ports, seed ^ i) } : {}),
        }));
        assert.deepEqual(repackSubsets(shuffled), repackSubsets(subsets));
      }),
    );
  });

  it('publishes every input (ip, uid) exactly once per port, not ready if any input says so', () => {
    fc.assert(
      fc.property(arbSubsets, (subsets) => {
        // Expected: (ip, uid, port) → ready, for ported subsets; the identities of portless subsets.
        const want = new Map<string, boolean>();
        const portless = new Set<string>();
        for (const s of subsets) {
          const entries: Array<[EndpointAddress, boolean]> = [
            ...(s.addresses ?? []).map((a): [EndpointAddress, boolean] => [a, true]),
            ...(s.notReadyAddresses ?? []).map((a): [EndpointAddress, boolean] => [a, false]),
          ];
          for (const [a, ready] of entries) {
            if (s.ports === undefined) portless.add(idOf(a));
            for (const p of s.ports ?? []) {
              const k = `${idOf(a)} ${portId(p)}`;
              want.set(k, (want.get(k) ?? true) && ready);
            }
          }
        }
        const got = new Map<string, boolean>();
        const seen = new Set<string>();
        for (const s of repackSubsets(subsets)) {
          const inSubset = new Set<string>();
          const entries: Array<[EndpointAddress, boolean]> = [
            ...(s.addresses ?? []).map((a): [EndpointAddress, boolean] => [a, true]),
            ...(s.notReadyAddresses ?? []).map((a): [EndpointAddress, boolean] => [a, false]),
          ];
          for (const [a, ready] of entries) {
            assert.ok(!inSubset.has(idOf(a)), `${idOf(a)} twice in one subset`);
            inSubset.add(idOf(a));
            seen.add(idOf(a));
            if (s.ports === undefined) assert.ok(portless.has(idOf(a)), `${idOf(a)} became portless`);
            for (const p of s.ports ?? []) {
              const k = `${idOf(a)} ${portId(p)}`;
              assert.ok(!got.has(k), `${k} published twice`);
              got.set(k, ready);
            }
          }
        }
        assert.deepEqual(got, want);
        for (const id of portless) assert.ok(seen.has(id), `portless ${id} lost`);
      }),
    );
  });
});

describe('endpointSubsetsEqual', () => {
  const a1 = addr('1.2.3.4', 'pod0');
  const a2 = addr('1.2.3.5', 'pod1');
  const base = [subset([a1, a2], [port(80, 'http'), port(53, 'dns', 'UDP')]), subset([], [port(90)], [a1])];
  const rows: Array<
    [string, EndpointSubset[] | null | undefined, EndpointSubset[] | null | undefined, boolean]
  > = [
    ['absent and []', undefined, [], true],
    ['null and []', null, [], true],
    ['identical subsets', base, structuredClone(base), true],
    ['subsets in another order', base, [base[1]!, base[0]!], true],
    [
      'ports in another order',
      base,
      [subset([a1, a2], [port(53, 'dns', 'UDP'), port(80, 'http')]), base[1]!],
      true,
    ],
    [
      'targetRef.resourceVersion differs',
      base,
      [
        subset(
          [{ ...a1, targetRef: { ...a1.targetRef, resourceVersion: '7' } }, a2],
          [port(80, 'http'), port(53, 'dns', 'UDP')],
        ),
        base[1]!,
      ],
      true,
    ],
    ['empty hostname vs none', [subset([{ ...a1, hostname: '' }])], [subset([a1])], true],
    ['no protocol vs TCP', [subset([a1], [{ port: 80 }])], [subset([a1], [port(80)])], true],
    ['addresses in another order', base, [subset([a2, a1], base[0]!.ports), base[1]!], false],
    ['one more subset', base, [...base, subset([a2], [port(1)])], false],
    ['another IP', [subset([a1], [port(80)])], [subset([a2], [port(80)])], false],
    ['ready vs not ready', [subset([a1], [port(80)])], [subset([], [port(80)], [a1])], false],
    ['another port number', [subset([a1], [port(80)])], [subset([a1], [port(81)])], false],
    [
      'another appProtocol',
      [subset([a1], [port(80)])],
      [subset([a1], [{ ...port(80), appProtocol: 'h2c' }])],
      false,
    ],
    ['another nodeName', [subset([a1])], [subset([{ ...a1, nodeName: 'n1' }])], false],
    ['another hostname', [subset([a1])], [subset([{ ...a1, hostname: 'h' }])], false],
    [
      'another targetRef name',
      [subset([a1])],
      [subset([{ ...a1, targetRef: { ...a1.targetRef, name: 'x' } }])],
      false,
    ],
    ['a targetRef vs none', [subset([a1])], [subset([{ ip: a1.ip, nodeName: '' }])], false],
    ['[] vs one empty subset', [], [{}], false],
  ];
  for (const [what, a, b, want] of rows) {
    it(`${want ? 'equal' : 'different'}: ${what}`, () => {
      assert.equal(endpointSubsetsEqual(a, b), want);
      assert.equal(endpointSubsetsEqual(b, a), want);
    });
  }
});
