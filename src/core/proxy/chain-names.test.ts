// Chain names: kube-proxy's shape (prefix + 16 base32 characters), stable, distinct, short enough.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  MAX_CHAIN_NAME,
  extChain,
  fwChain,
  hash16,
  isServiceChain,
  sepChain,
  svcChain,
  svlChain,
} from './chain-names.js';

const BASE32_16 = /^[A-Z2-7]{16}$/;
const keyArb = fc
  .tuple(
    fc.stringMatching(/^[a-z][a-z0-9-]{0,62}$/),
    fc.stringMatching(/^[a-z][a-z0-9-]{0,62}$/),
    fc.option(fc.stringMatching(/^[a-z][a-z0-9-]{0,14}$/), { nil: undefined }),
  )
  .map(([ns, name, port]) => (port === undefined ? `${ns}/${name}` : `${ns}/${name}:${port}`));
const protoArb = fc.constantFrom('TCP', 'UDP', 'SCTP');
const ipArb = fc.oneof(fc.ipV4(), fc.ipV6());
const portArb = fc.integer({ min: 1, max: 65535 });

describe('chain names', () => {
  it('are a kube-proxy prefix and 16 base32 characters, at most 28 characters long', () => {
    fc.assert(
      fc.property(keyArb, protoArb, ipArb, portArb, (key, proto, ip, port) => {
        for (const [prefix, name] of [
          ['KUBE-SVC-', svcChain(key, proto)],
          ['KUBE-SVL-', svlChain(key, proto)],
          ['KUBE-EXT-', extChain(key, proto)],
          ['KUBE-FW-', fwChain(key, proto)],
          ['KUBE-SEP-', sepChain(key, proto, ip, port)],
        ] as const) {
          assert.ok(name.startsWith(prefix), name);
          assert.match(name.slice(prefix.length), BASE32_16);
          assert.ok(name.length <= MAX_CHAIN_NAME, name);
          assert.ok(isServiceChain(name));
        }
      }),
      { numRuns: 300 },
    );
  });

  it("are the same for the same input (and the service port chains share one hash, as kube-proxy's do)", () => {
    assert.equal(svcChain('default/web:http', 'TCP'), svcChain('default/web:http', 'TCP'));
    assert.equal(sepChain('ns/a', 'UDP', '10.0.0.1', 53), sepChain('ns/a', 'UDP', '10.0.0.1', 53));
    const h = svcChain('default/web:http', 'TCP').slice('KUBE-SVC-'.length);
    assert.equal(svlChain('default/web:http', 'TCP'), `KUBE-SVL-${h}`);
    assert.equal(extChain('default/web:http', 'TCP'), `KUBE-EXT-${h}`);
    assert.equal(fwChain('default/web:http', 'TCP'), `KUBE-FW-${h}`);
  });

  it('are pinned: a change of hash renames every chain in every cluster, so it must be deliberate', () => {
    assert.equal(hash16(''), hash16(''));
    assert.match(hash16(''), BASE32_16);
    assert.equal(svcChain('default/web:http', 'TCP'), 'KUBE-SVC-7MAAGDYMWTBXKXW2');
    assert.equal(sepChain('default/web:http', 'TCP', '10.0.0.1', 8080), 'KUBE-SEP-P3QTWN4IBIDDYHW5');
  });

  it('differ for different service ports, protocols and endpoints', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(keyArb, protoArb), {
          minLength: 2,
          maxLength: 200,
          selector: (t) => t.join('|'),
        }),
        (ports) => {
          const names = new Set(ports.map(([k, p]) => svcChain(k, p)));
          assert.equal(names.size, ports.length);
        },
      ),
      { numRuns: 100 },
    );
    fc.assert(
      fc.property(
        keyArb,
        fc.uniqueArray(fc.tuple(protoArb, ipArb, portArb), {
          minLength: 2,
          maxLength: 200,
          selector: (t) => t.join('|'),
        }),
        (key, eps) => {
          const names = new Set(eps.map(([p, ip, port]) => sepChain(key, p, ip, port)));
          assert.equal(names.size, eps.length);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('do not collide across 100,000 endpoints of one cluster', () => {
    const names = new Set<string>();
    for (let s = 0; s < 10_000; s++)
      for (let e = 0; e < 10; e++)
        names.add(sepChain(`ns/svc-${s}:http`, 'TCP', `10.${s >> 8}.${s & 255}.${e}`, 8080));
    assert.equal(names.size, 100_000);
  });

  it('isServiceChain() is true only for per-service chains', () => {
    for (const c of ['KUBE-SVC-X', 'KUBE-SVL-X', 'KUBE-EXT-X', 'KUBE-FW-X', 'KUBE-SEP-X', 'KUBE-XLB-X'])
      assert.ok(isServiceChain(c), c);
    for (const c of ['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-MARK-MASQ', 'KUBE-FIREWALL', 'PREROUTING'])
      assert.ok(!isServiceChain(c), c);
  });
});
