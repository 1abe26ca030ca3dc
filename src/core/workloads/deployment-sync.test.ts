import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { conditionOf, PROGRESSING, stuckRequeueAfterMs } from './deployment-status.js';
import { planDeploymentSync } from './deployment-sync.js';
import { proportion } from './proportional-scaling.js';
import {
  formatTime,
  maxSurgeOf,
  maxUnavailableOf,
  podTemplateHash,
  revisionOf,
  type Deployment,
  type ReplicaSet,
} from './deployment-util.js';
import { deployment, World } from './testing/deployment-world.js';

const specs = (w: World): Record<string, number> =>
  Object.fromEntries(w.replicaSets().map((rs) => [rs.metadata.name!, rs.spec.replicas ?? 1]));

const newImage = (image: string) => (d: Deployment) => {
  d.spec.template!.spec = { containers: [{ name: 'c', image }] };
};

/** A World whose Deployment has rolled out completely at image nginx:1. */
function settled(o: Parameters<typeof deployment>[0] = {}): World {
  const w = new World(deployment(o));
  w.settle();
  return w;
}

describe('planDeploymentSync(): first sync', () => {
  it('creates <name>-<hash> at full size with revision 1, an event, and NewReplicaSetCreated', () => {
    const d = deployment({ replicas: 3 });
    const plan = planDeploymentSync({ deployment: d, replicaSets: [], nowMs: 5000 });
    const hash = podTemplateHash(d.spec.template);
    assert.equal(plan.writes.length, 1);
    const w = plan.writes[0]!;
    assert.equal(w.op, 'create');
    assert.equal(w.replicaSet.metadata.name, `web-${hash}`);
    assert.equal(w.replicaSet.spec.replicas, 3);
    assert.deepEqual(
      w.events.map((e) => e.message),
      [`Scaled up replica set web-${hash} from 0 to 3`],
    );
    assert.equal(plan.deployment?.metadata.annotations?.['deployment.kubernetes.io/revision'], '1');
    const progressing = conditionOf(plan.deployment?.status, 'Progressing');
    assert.equal(progressing?.reason, 'NewReplicaSetCreated');
    assert.equal(progressing?.message, `Created new replica set "web-${hash}"`);
    assert.equal(conditionOf(plan.deployment?.status, 'Available')?.reason, 'MinimumReplicasUnavailable');
  });

  it('settles with Available and Progressing NewReplicaSetAvailable, in that order', () => {
    const w = settled({ replicas: 3 });
    const st = w.d.status!;
    assert.deepEqual(
      st.conditions?.map((c) => [c.type, c.status, c.reason, c.message]),
      [
        ['Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'],
        [
          'Progressing',
          'True',
          'NewReplicaSetAvailable',
          `ReplicaSet "${w.replicaSets()[0]!.metadata.name}" has successfully progressed.`,
        ],
      ],
    );
    assert.equal(st.replicas, 3);
    assert.equal(st.updatedReplicas, 3);
    assert.equal(st.availableReplicas, 3);
    assert.equal(st.readyReplicas, 3);
    assert.equal(st.unavailableReplicas, undefined); // 0 is omitted, as Go's omitempty does
    assert.equal(st.observedGeneration, 1);
  });

  it('writes nothing once settled', () => {
    const w = settled();
    const plan = w.sync();
    assert.deepEqual(plan.writes, []);
    assert.equal(plan.deployment, undefined);
    assert.equal(plan.requeueAfterMs, undefined);
  });

  it('warns SelectingAll for an empty selector and only observes the generation', () => {
    const d = deployment();
    d.spec.selector = {};
    d.metadata.generation = 4;
    const plan = planDeploymentSync({ deployment: d, replicaSets: [], nowMs: 0 });
    assert.deepEqual(plan.writes, []);
    assert.deepEqual(plan.events, [
      {
        type: 'Warning',
        reason: 'SelectingAll',
        message: 'This deployment is selecting all pods. A non-empty selector is required.',
      },
    ]);
    assert.equal(plan.deployment?.status?.observedGeneration, 4);
  });
});

describe('planDeploymentSync(): rolling update', () => {
  it('follows the worked example: replicas 3, surge 1, unavailable 0', () => {
    const w = settled({ replicas: 3 });
    const [old] = w.replicaSets();
    const oldName = old!.metadata.name!;
    w.edit(newImage('nginx:2'));
    w.sync();
    const newName = w.replicaSets().find((rs) => rs.metadata.name !== oldName)!.metadata.name!;
    assert.deepEqual(specs(w), { [oldName]: 3, [newName]: 1 });
    assert.equal(w.d.metadata.annotations?.['deployment.kubernetes.io/revision'], '2');
    // nothing moves until the new pod is available
    w.sync();
    assert.deepEqual(specs(w), { [oldName]: 3, [newName]: 1 });
    const steps: Record<string, number>[] = [];
    for (let i = 0; i < 10 && !(specs(w)[oldName] === 0 && specs(w)[newName] === 3); i++) {
      w.allAvailable();
      w.sync();
      steps.push(specs(w));
    }
    assert.deepEqual(steps, [
      { [oldName]: 2, [newName]: 1 },
      { [oldName]: 2, [newName]: 2 },
      { [oldName]: 1, [newName]: 2 },
      { [oldName]: 1, [newName]: 3 },
      { [oldName]: 0, [newName]: 3 },
    ]);
    assert.ok(w.events.includes(`Scaled down replica set ${oldName} from 3 to 2`));
    assert.ok(w.events.includes(`Scaled up replica set ${newName} from 1 to 2`));
    w.settle();
    assert.equal(conditionOf(w.d.status, 'Progressing')?.reason, 'NewReplicaSetAvailable');
  });

  it('reports ReplicaSetUpdated while progressing, refreshing lastUpdateTime and keeping lastTransitionTime', () => {
    const w = settled({ replicas: 2 });
    const before = conditionOf(w.d.status, PROGRESSING)!;
    w.edit(newImage('nginx:2'));
    w.sync();
    w.allAvailable();
    w.sync();
    const c = conditionOf(w.d.status, PROGRESSING)!;
    assert.equal(c.reason, 'ReplicaSetUpdated');
    assert.match(c.message!, /^ReplicaSet "web-[4-9bcdf]+" is progressing\.$/);
    assert.equal(c.lastTransitionTime, before.lastTransitionTime);
    assert.equal(c.lastUpdateTime, formatTime(w.nowMs));
  });

  it('times out with ProgressDeadlineExceeded when nothing progresses, and asks to be requeued before', () => {
    const w = settled({ replicas: 2, progressDeadlineSeconds: 30 });
    w.edit(newImage('nginx:2'));
    const plan = w.sync();
    assert.ok(
      plan.requeueAfterMs !== undefined && plan.requeueAfterMs > 29_000 && plan.requeueAfterMs <= 31_000,
    );
    w.sync(); // the new RS's pod appears (not available): that much is progress
    w.nowMs += 40_000;
    w.sync();
    const c = conditionOf(w.d.status, PROGRESSING)!;
    assert.deepEqual([c.status, c.reason], ['False', 'ProgressDeadlineExceeded']);
    assert.match(c.message!, /^ReplicaSet "web-[4-9bcdf]+" has timed out progressing\.$/);
    assert.equal(stuckRequeueAfterMs(w.d, w.d.status!, w.nowMs), undefined);
    // a template change after the timeout keeps the reason until the new rollout completes
    w.settle();
    assert.equal(conditionOf(w.d.status, PROGRESSING)?.reason, 'NewReplicaSetAvailable');
  });

  it('removes Progressing when progressDeadlineSeconds is unset', () => {
    const w = settled({ progressDeadlineSeconds: null });
    assert.equal(conditionOf(w.d.status, PROGRESSING), undefined);
  });

  it('rolls back to an old template: the old RS becomes new with a higher revision and revision-history', () => {
    const w = settled({ replicas: 2 });
    const first = w.replicaSets()[0]!.metadata.name!;
    w.edit(newImage('nginx:2'));
    w.settle();
    w.edit(newImage('nginx:1'));
    w.settle();
    const rs = w.rss.get(first)!;
    assert.equal(rs.spec.replicas, 2);
    assert.equal(revisionOf(rs), 3);
    assert.equal(rs.metadata.annotations?.['deployment.kubernetes.io/revision-history'], '1');
    assert.equal(w.d.metadata.annotations?.['deployment.kubernetes.io/revision'], '3');
    assert.equal(w.replicaSets().length, 2);
  });

  it('deletes old RSes beyond revisionHistoryLimit, lowest revision first', () => {
    const w = settled({ replicas: 1, revisionHistoryLimit: 1 });
    for (const image of ['a', 'b', 'c']) {
      w.edit(newImage(image));
      w.settle();
    }
    assert.deepEqual(w.replicaSets().map(revisionOf).sort(), [3, 4]);
  });

  it('does not roll a paused Deployment, sets DeploymentPaused, and DeploymentResumed on resume', () => {
    const w = settled({ replicas: 2 });
    w.edit((d) => {
      d.spec.paused = true;
    });
    w.sync();
    w.edit(newImage('nginx:2'));
    w.settle();
    assert.equal(w.replicaSets().length, 1);
    const c = conditionOf(w.d.status, PROGRESSING)!;
    assert.deepEqual(
      [c.status, c.reason, c.message],
      ['Unknown', 'DeploymentPaused', 'Deployment is paused'],
    );
    w.edit((d) => {
      d.spec.paused = false;
    });
    w.sync();
    assert.equal(w.replicaSets().length, 2);
    w.settle();
    assert.equal(conditionOf(w.d.status, PROGRESSING)?.reason, 'NewReplicaSetAvailable');
  });

  it('a paused Deployment still scales', () => {
    const w = settled({ replicas: 2 });
    w.edit((d) => {
      d.spec.paused = true;
      d.spec.replicas = 5;
    });
    w.settle();
    assert.deepEqual(Object.values(specs(w)), [5]);
  });
});

describe('planDeploymentSync(): Recreate', () => {
  it('scales old to 0, waits for old pods, then creates the new RS at full size', () => {
    const w = settled({ replicas: 3, strategy: 'Recreate' });
    const old = w.replicaSets()[0]!.metadata.name!;
    w.edit(newImage('nginx:2'));
    const plan = planDeploymentSync({
      deployment: w.d,
      replicaSets: w.replicaSets(),
      nowMs: w.nowMs,
    });
    assert.deepEqual(
      plan.writes.map((x) => [x.op, x.replicaSet.metadata.name, x.replicaSet.spec.replicas]),
      [['update', old, 0]],
    );
    // the old RS reports no replicas but one of its pods still runs: wait
    const rss = w.replicaSets().map((rs) => ({ ...rs, spec: { ...rs.spec, replicas: 0 }, status: {} }));
    const waiting = planDeploymentSync({
      deployment: w.d,
      replicaSets: rss,
      pods: [{ ownerUid: rss[0]!.metadata.uid!, phase: 'Running' }],
      nowMs: w.nowMs,
    });
    assert.deepEqual(waiting.writes, []);
    const go = planDeploymentSync({
      deployment: w.d,
      replicaSets: rss,
      pods: [{ ownerUid: rss[0]!.metadata.uid!, phase: 'Succeeded' }],
      nowMs: w.nowMs,
    });
    assert.deepEqual(
      go.writes.map((x) => [x.op, x.replicaSet.spec.replicas]),
      [['create', 3]],
    );
  });
});

describe('proportional scaling', () => {
  const rs = (name: string, replicas: number, maxReplicas: number, t: number): ReplicaSet => ({
    metadata: {
      name,
      uid: name,
      creationTimestamp: formatTime(t),
      annotations: {
        'deployment.kubernetes.io/desired-replicas': '10',
        'deployment.kubernetes.io/max-replicas': String(maxReplicas),
        'deployment.kubernetes.io/revision': String(t),
      },
    },
    spec: { replicas, template: { spec: { containers: [{ name: 'c', image: name }] } } },
    status: { replicas, availableReplicas: 0 },
  });

  it('spreads a scale-up by the RSes sizes (10→15 with surge 3: 8+5 → 12+8, leftover to the largest)', () => {
    const d = deployment({ replicas: 15, maxSurge: 3, maxUnavailable: 2 });
    const plan = planDeploymentSync({
      deployment: d,
      replicaSets: [rs('old', 8, 13, 1000), rs('mid', 5, 13, 2000)],
      nowMs: 9000,
    });
    assert.equal(plan.path, 'scale');
    const sizes = Object.fromEntries(
      plan.writes.map((x) => [x.replicaSet.metadata.name, x.replicaSet.spec.replicas]),
    );
    assert.equal((sizes['old'] ?? 0) + (sizes['mid'] ?? 0), 18);
    assert.deepEqual(sizes, { old: 11, mid: 7 });
    for (const x of plan.writes) {
      assert.equal(x.replicaSet.metadata.annotations?.['deployment.kubernetes.io/desired-replicas'], '15');
      assert.equal(x.replicaSet.metadata.annotations?.['deployment.kubernetes.io/max-replicas'], '18');
    }
  });

  it('proportion() rounds half away from zero and is bounded by what is left to add', () => {
    const d = deployment({ replicas: 5, maxSurge: 0, maxUnavailable: 1 });
    assert.equal(proportion(rs('a', 1, 2, 1), d, 10, 0), 2); // round(1·5/2 = 2.5) − 1
    assert.equal(proportion(rs('a', 1, 2, 1), d, 10, 9), 1);
    assert.equal(proportion(rs('a', 0, 2, 1), d, 10, 0), 0);
  });

  it('keeps the total within replicas + maxSurge for any scale during a rollout (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 20 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 0, max: 6 }),
        (from, to, surge, unavailable, progress) => {
          fc.pre(surge + unavailable > 0);
          const w = settled({ replicas: from, maxSurge: surge, maxUnavailable: unavailable });
          w.edit(newImage('nginx:2'));
          for (let i = 0; i < progress; i++) {
            w.sync();
            const p = w.pending()[0];
            if (p !== undefined) w.becomeAvailable(p);
          }
          w.edit((d) => {
            d.spec.replicas = to;
          });
          w.sync();
          const total = w.replicaSets().reduce((n, rs) => n + (rs.spec.replicas ?? 1), 0);
          assert.ok(total <= to + maxSurgeOf(w.d), `total ${total} for ${to}`);
          assert.ok(w.replicaSets().every((rs) => (rs.spec.replicas ?? 1) >= 0));
          w.settle(400);
          const active = w.replicaSets().filter((rs) => (rs.spec.replicas ?? 1) > 0);
          if (to > 0) assert.equal(active.length, 1);
          assert.equal(w.availablePods(), to);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('rolling update bounds (property)', () => {
  const intOrPercent = fc.oneof(
    fc.integer({ min: 0, max: 4 }),
    fc.integer({ min: 0, max: 100 }).map((p) => `${p}%`),
  );

  it('never has fewer than replicas − maxUnavailable available nor more than replicas + maxSurge pods, and ends with only the new RS', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        intOrPercent,
        intOrPercent,
        fc.array(fc.nat({ max: 9 }), { minLength: 0, maxLength: 150 }),
        fc.option(fc.nat({ max: 60 }), { nil: undefined }),
        (replicas, maxSurge, maxUnavailable, steps, secondChangeAt) => {
          const w = settled({ replicas, maxSurge, maxUnavailable });
          const minAvailable = replicas - maxUnavailableOf(w.d);
          const maxPods = replicas + maxSurgeOf(w.d);
          const check = (): void => {
            assert.ok(w.totalPods() <= maxPods, `${w.totalPods()} pods > ${maxPods}`);
            assert.ok(w.availablePods() >= minAvailable, `${w.availablePods()} available < ${minAvailable}`);
          };
          w.edit(newImage('nginx:2'));
          steps.forEach((s, i) => {
            if (i === secondChangeAt) w.edit(newImage('nginx:3'));
            if (s < 4) w.sync();
            else {
              const pending = w.pending();
              if (pending.length > 0) w.becomeAvailable(pending[s % pending.length]!);
            }
            check();
          });
          for (let i = 0; i < 400; i++) {
            const plan = w.sync();
            check();
            const pending = w.pending();
            if (pending.length > 0) w.becomeAvailable(pending[0]!);
            check();
            if (plan.writes.length === 0 && plan.deployment === undefined && pending.length === 0) break;
          }
          const active = w.replicaSets().filter((rs) => (rs.spec.replicas ?? 1) > 0);
          assert.equal(active.length, 1);
          const image = (active[0]!.spec.template?.spec?.['containers'] as { image: string }[])[0]!.image;
          assert.equal(
            image,
            secondChangeAt !== undefined && secondChangeAt < steps.length ? 'nginx:3' : 'nginx:2',
          );
          assert.equal(active[0]!.spec.replicas, replicas);
          assert.equal(w.availablePods(), replicas);
          assert.equal(conditionOf(w.d.status, PROGRESSING)?.reason, 'NewReplicaSetAvailable');
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('Recreate never overlaps (property)', () => {
  it('no new pod exists while an old one does, and it finishes with only the new RS', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.nat({ max: 5 }), { maxLength: 80 }),
        (replicas, steps) => {
          const w = settled({ replicas, strategy: 'Recreate' });
          const old = w.replicaSets()[0]!.metadata.name!;
          w.edit(newImage('nginx:2'));
          const check = (): void => {
            const oldPods = w.pods.get(old);
            const oldCount = oldPods === undefined ? 0 : oldPods.available + oldPods.unavailable;
            const others = w.totalPods() - oldCount;
            assert.ok(oldCount === 0 || others === 0, `old ${oldCount} and new ${others} at once`);
          };
          for (const s of steps) {
            if (s < 3) w.sync();
            else {
              const p = w.pending()[0];
              if (p !== undefined) w.becomeAvailable(p);
            }
            check();
          }
          w.settle();
          check();
          assert.equal(w.rss.get(old)?.spec.replicas, 0);
          assert.equal(w.availablePods(), replicas);
        },
      ),
      { numRuns: 200 },
    );
  });
});
