import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  appendRevisionHistory,
  buildNewReplicaSet,
  equalIgnoreHash,
  findNewReplicaSet,
  formatTime,
  maxSurgeOf,
  maxUnavailableOf,
  newReplicaSetAnnotations,
  podTemplateHash,
  resolveFenceposts,
  safeEncode,
  scaledValue,
  type ReplicaSet,
} from './deployment-util.js';
import { deployment } from './testing/deployment-world.js';

describe('resolveFenceposts()', () => {
  const table: [number | string, number | string, number, number, number][] = [
    ['25%', '25%', 3, 1, 0],
    ['25%', '25%', 10, 3, 2],
    ['25%', '25%', 1, 1, 0],
    ['25%', '25%', 4, 1, 1],
    [0, 0, 5, 0, 1],
    ['0%', '0%', 5, 0, 1],
    [2, 1, 5, 2, 1],
    ['50%', '50%', 3, 2, 1],
    ['100%', '0%', 0, 0, 1],
  ];
  for (const [s, u, n, surge, unavailable] of table) {
    it(`resolves maxSurge ${s} / maxUnavailable ${u} against ${n} replicas to ${surge} / ${unavailable}`, () => {
      assert.deepEqual(resolveFenceposts(s, u, n), { surge, unavailable });
    });
  }

  it('rejects a string that is not a percentage', () => {
    assert.throws(() => scaledValue('3', 10, true), /invalid value/);
  });
});

describe('maxSurgeOf() / maxUnavailableOf()', () => {
  it('are 0 for Recreate', () => {
    const d = deployment({ strategy: 'Recreate', replicas: 4 });
    assert.equal(maxSurgeOf(d), 0);
    assert.equal(maxUnavailableOf(d), 0);
  });
  it('maxUnavailable is 0 with 0 replicas and never more than replicas', () => {
    assert.equal(maxUnavailableOf(deployment({ replicas: 0 })), 0);
    assert.equal(maxUnavailableOf(deployment({ replicas: 2, maxUnavailable: 5 })), 2);
  });
});

describe('podTemplateHash()', () => {
  it('maps decimal digits through the safe alphabet (1234567890 → 56789bcdf4)', () => {
    assert.equal(safeEncode('1234567890'), '56789bcdf4');
  });

  it('uses only [4-9bcdf], 1 to 10 characters, for any template and collision count', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.option(fc.nat({ max: 2 ** 32 - 1 }), { nil: undefined }), (spec, c) => {
        const h = podTemplateHash({ spec: { x: spec } }, c);
        assert.match(h, /^[4-9bcdf]{1,10}$/);
      }),
    );
  });

  it('is deterministic and ignores key order', () => {
    const a = podTemplateHash({ metadata: { labels: { a: '1', b: '2' } }, spec: { x: 1, y: 2 } });
    const b = podTemplateHash({ spec: { y: 2, x: 1 }, metadata: { labels: { b: '2', a: '1' } } });
    assert.equal(a, b);
  });

  it('changes with the collision count', () => {
    const t = { spec: { containers: [{ name: 'c', image: 'nginx' }] } };
    const seen = new Set([
      podTemplateHash(t),
      podTemplateHash(t, 0),
      podTemplateHash(t, 1),
      podTemplateHash(t, 2),
    ]);
    assert.equal(seen.size, 4);
  });
});

describe('buildNewReplicaSet()', () => {
  it('names, labels and selects by hash, is controlled by the Deployment and carries the annotations', () => {
    const d = deployment({
      replicas: 3,
      annotations: {
        'kubernetes.io/change-cause': 'v1',
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
      },
    });
    const rs = buildNewReplicaSet(d, 1, 1);
    const hash = podTemplateHash(d.spec.template);
    assert.equal(rs.metadata.name, `web-${hash}`);
    assert.deepEqual(rs.metadata.labels, { app: 'web', 'pod-template-hash': hash });
    assert.deepEqual(rs.spec.selector, { matchLabels: { app: 'web', 'pod-template-hash': hash } });
    assert.deepEqual(rs.spec.template?.metadata?.labels, { app: 'web', 'pod-template-hash': hash });
    assert.deepEqual(rs.metadata.ownerReferences, [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'web',
        uid: 'uid-web',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.deepEqual(rs.metadata.annotations, {
      'kubernetes.io/change-cause': 'v1',
      'deployment.kubernetes.io/revision': '1',
      'deployment.kubernetes.io/desired-replicas': '3',
      'deployment.kubernetes.io/max-replicas': '4',
    });
    assert.equal(rs.spec.replicas, 1);
    assert.equal(rs.spec.minReadySeconds, 0);
    assert.ok(equalIgnoreHash(rs.spec.template, d.spec.template));
  });
});

describe('findNewReplicaSet()', () => {
  it('picks the oldest RS whose template equals ignoring the hash label', () => {
    const d = deployment();
    const a = buildNewReplicaSet(d, 1, 1);
    a.metadata.name = 'b-newer';
    a.metadata.creationTimestamp = formatTime(2000);
    const b: ReplicaSet = structuredClone(a);
    b.metadata.name = 'a-older';
    b.metadata.creationTimestamp = formatTime(1000);
    const other = buildNewReplicaSet(deployment({ image: 'x' }), 1, 1);
    assert.equal(findNewReplicaSet(d, [a, other, b])?.metadata.name, 'a-older');
    assert.equal(findNewReplicaSet(d, [other]), undefined);
  });
});

describe('revision annotations', () => {
  it('raise the revision and record the old one in revision-history (rollback)', () => {
    const d = deployment();
    const r = newReplicaSetAnnotations(d, { 'deployment.kubernetes.io/revision': '1' }, 3, true);
    assert.equal(r.changed, true);
    assert.equal(r.annotations['deployment.kubernetes.io/revision'], '3');
    assert.equal(r.annotations['deployment.kubernetes.io/revision-history'], '1');
    const again = newReplicaSetAnnotations(d, { ...r.annotations }, 5, true);
    assert.equal(again.annotations['deployment.kubernetes.io/revision-history'], '1,3');
  });

  it('never lower the revision', () => {
    const r = newReplicaSetAnnotations(deployment(), { 'deployment.kubernetes.io/revision': '7' }, 3, true);
    assert.equal(r.changed, false);
    assert.equal(r.annotations['deployment.kubernetes.io/revision'], '7');
  });

  it('keep revision-history within the limit by dropping the oldest entries', () => {
    assert.equal(appendRevisionHistory('1,2,3', '4', 6), '2,3,4');
    assert.equal(appendRevisionHistory('', '4', 7), '4');
    assert.equal(appendRevisionHistory(undefined, '9'), '9');
  });

  it('copy Deployment annotations except the skip list', () => {
    const d = deployment({
      annotations: {
        a: '1',
        'deployment.kubernetes.io/revision': '9',
        'deprecated.deployment.rollback.to': '2',
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
      },
    });
    const r = newReplicaSetAnnotations(d, { 'deployment.kubernetes.io/revision': '2', b: 'x' }, 2, true);
    assert.deepEqual(r.annotations, { 'deployment.kubernetes.io/revision': '2', a: '1', b: 'x' });
  });
});
