import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { evictionDecision, tolerates } from './eviction.js';
import { TAINT_NOT_READY, TAINT_UNREACHABLE, type Taint, type Toleration } from './types.js';

const unreachable: Taint = { key: TAINT_UNREACHABLE, effect: 'NoExecute' };
const notReady: Taint = { key: TAINT_NOT_READY, effect: 'NoExecute' };
/** What DefaultTolerationSeconds admission adds to every pod. */
const defaults: Toleration[] = [
  { key: TAINT_NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
  { key: TAINT_UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
];

describe('tolerates', () => {
  const cases: [string, Toleration, Taint, boolean][] = [
    ['Exists on the key', { key: 'k', operator: 'Exists' }, { key: 'k', effect: 'NoExecute' }, true],
    ['empty key with Exists tolerates all', { operator: 'Exists' }, { key: 'x', effect: 'NoSchedule' }, true],
    [
      'Equal matches the value',
      { key: 'k', value: 'v' },
      { key: 'k', value: 'v', effect: 'NoExecute' },
      true,
    ],
    [
      'Equal with a different value',
      { key: 'k', value: 'v' },
      { key: 'k', value: 'w', effect: 'NoExecute' },
      false,
    ],
    [
      'wrong effect',
      { key: 'k', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'k', effect: 'NoExecute' },
      false,
    ],
    ['other key', { key: 'j', operator: 'Exists' }, { key: 'k', effect: 'NoExecute' }, false],
  ];
  for (const [name, t, taint, want] of cases) it(name, () => assert.equal(tolerates(t, taint), want));
});

describe('evictionDecision', () => {
  it('no NoExecute taint: keep', () => {
    assert.deepEqual(evictionDecision([], [{ key: 'k', effect: 'NoSchedule' }], 0, 0), { kind: 'keep' });
  });
  it('an untolerated NoExecute taint: evict now', () => {
    assert.deepEqual(evictionDecision([], [unreachable], 0, 0), { kind: 'evict' });
  });
  it('admission defaults: evicted 300 s after the taint was first seen', () => {
    assert.deepEqual(evictionDecision(defaults, [unreachable], 1000, 2000), {
      kind: 'evictAt',
      atMs: 301_000,
    });
    assert.deepEqual(evictionDecision(defaults, [unreachable], 1000, 301_000), { kind: 'evict' });
  });
  it('the smallest tolerationSeconds among the tolerations used wins', () => {
    const ts: Toleration[] = [
      { key: TAINT_NOT_READY, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 30 },
      { key: TAINT_UNREACHABLE, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ];
    assert.deepEqual(evictionDecision(ts, [unreachable, notReady], 0, 0), { kind: 'evictAt', atMs: 30_000 });
  });
  it('a toleration without tolerationSeconds tolerates forever', () => {
    assert.deepEqual(evictionDecision([{ operator: 'Exists' }], [unreachable], 0, 1e12), { kind: 'keep' });
  });
  it('tolerationSeconds ≤ 0 evicts at once', () => {
    const ts: Toleration[] = [{ key: TAINT_UNREACHABLE, operator: 'Exists', tolerationSeconds: 0 }];
    assert.deepEqual(evictionDecision(ts, [unreachable], 0, 0), { kind: 'evict' });
  });
});
