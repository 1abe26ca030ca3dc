// The Deployment controller end to end: kubectl against `svcplane up` (the ReplicaSet controller makes
// the pods). No kubelet runs here, so the test plays one: it makes pods Running and Ready by writing
// their status, either on demand or from a loop while `kubectl rollout status` waits.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KObject } from '../../src/api/object.js';
import { kubectlFor, type Kubectl } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const WAIT = 30_000;
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-deploy-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface RS extends KObject {
  spec: { replicas?: number; template?: { spec?: { containers?: { image?: string }[] } } };
  status?: { replicas?: number; availableReplicas?: number };
}

const DEPLOYMENT = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', annotations: { 'kubernetes.io/change-cause': 'first' } },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'nginx:1' }] },
    },
  },
};

describe('Deployment controller: kubectl against svcplane up', () => {
  let srv: TestServer;
  let kubectl: Kubectl;
  let ip = 10;

  const replicaSets = async (): Promise<RS[]> => {
    const r = await call(srv, 'GET', '/apis/apps/v1/namespaces/default/replicasets');
    assert.equal(r.status, 200, r.text);
    return r
      .json<{ items: RS[] }>()
      .items.sort((a, b) =>
        (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''),
      );
  };
  const sizes = async (): Promise<Record<string, number>> =>
    Object.fromEntries((await replicaSets()).map((rs) => [rs.metadata.name!, rs.spec.replicas ?? 1]));
  const image = (rs: RS): string => rs.spec.template?.spec?.containers?.[0]?.image ?? '';
  const revision = (o: KObject): string =>
    o.metadata.annotations?.['deployment.kubernetes.io/revision'] ?? '';
  const deployment = async (): Promise<KObject & { status?: Record<string, unknown> }> =>
    (await call(srv, 'GET', '/apis/apps/v1/namespaces/default/deployments/web')).json();

  /** Every pod of app=web not yet Ready becomes Running and Ready, as a kubelet would report it. */
  const kubelet = async (): Promise<number> => {
    const r = await call(srv, 'GET', '/api/v1/namespaces/default/pods?labelSelector=app%3Dweb');
    let n = 0;
    for (const p of r.json<{ items: KObject[] }>().items) {
      const st = p['status'] as { conditions?: { type: string; status: string }[] } | undefined;
      if (p.metadata.deletionTimestamp !== undefined) continue;
      if (st?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) continue;
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const podIP = `10.244.0.${++ip % 250}`;
      const put = await call(srv, 'PATCH', `/api/v1/namespaces/default/pods/${p.metadata.name}/status`, {
        contentType: 'application/merge-patch+json',
        body: {
          status: {
            phase: 'Running',
            podIP,
            podIPs: [{ ip: podIP }],
            conditions: [
              { type: 'Ready', status: 'True', lastTransitionTime: now },
              { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
            ],
          },
        },
      });
      if (put.status === 200) n++;
    }
    return n;
  };
  /** Runs the kubelet loop until the returned stop function is called. */
  const kubeletLoop = (): (() => Promise<void>) => {
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        await kubelet().catch(() => 0);
        await new Promise((r) => setTimeout(r, 150));
      }
    })();
    return async () => {
      stop = true;
      await loop;
    };
  };
  const rolloutStatus = async (): Promise<string> => {
    const stop = kubeletLoop();
    try {
      return await kubectl(['rollout', 'status', 'deployment/web', '--timeout=60s']);
    } finally {
      await stop();
    }
  };

  before(async () => {
    srv = await startUp();
    kubectl = kubectlFor(srv, work);
  });
  after(async () => srv?.destroy());

  it('apply makes one ReplicaSet <name>-<hash> with revision 1, and rollout status returns', async () => {
    await kubectl(['apply', '-f', '-'], JSON.stringify(DEPLOYMENT));
    const [rs] = await until('one ReplicaSet', WAIT, async () => {
      const l = await replicaSets();
      return l.length === 1 ? l : undefined;
    });
    assert.match(rs!.metadata.name!, /^web-[4-9bcdf]{1,10}$/);
    assert.equal(revision(rs!), '1');
    assert.equal(rs!.metadata.annotations?.['kubernetes.io/change-cause'], 'first');
    assert.equal(rs!.metadata.labels?.['pod-template-hash'], rs!.metadata.name!.slice(4));
    const out = await rolloutStatus();
    assert.match(out, /deployment "web" successfully rolled out/);
    const d = await deployment();
    assert.equal(revision(d), '1');
    const st = d.status as { availableReplicas?: number; conditions?: { type: string; reason: string }[] };
    assert.equal(st.availableReplicas, 3);
    assert.deepEqual(
      st.conditions?.map((c) => [c.type, c.reason]),
      [
        ['Available', 'MinimumReplicasAvailable'],
        ['Progressing', 'NewReplicaSetAvailable'],
      ],
    );
  });

  it('an image change makes a second ReplicaSet; the old one shrinks only as new pods become available', async () => {
    const [first] = await replicaSets();
    await kubectl(['set', 'image', 'deployment/web', 'c=nginx:2']);
    const second = await until('a second ReplicaSet at 1', WAIT, async () => {
      const l = await replicaSets();
      const n = l.find((rs) => image(rs) === 'nginx:2');
      return n !== undefined && n.spec.replicas === 1 ? n : undefined;
    });
    assert.equal(revision(second), '2');
    // maxSurge 1, maxUnavailable 0: nothing more moves until the new pod is available
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(await sizes(), { [first!.metadata.name!]: 3, [second.metadata.name!]: 1 });
    await until('the new pod Ready', WAIT, async () => (await kubelet()) > 0);
    await until('old 3→2', WAIT, async () => (await sizes())[first!.metadata.name!] === 2);
    const out = await rolloutStatus();
    assert.match(out, /successfully rolled out/);
    assert.deepEqual(await sizes(), { [first!.metadata.name!]: 0, [second.metadata.name!]: 3 });
    const events = await kubectl([
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=web,reason=ScalingReplicaSet',
      '-o',
      'jsonpath={range .items[*]}{.source.component} {.message}{"\\n"}{end}',
    ]);
    assert.match(
      events,
      new RegExp(`deployment-controller Scaled down replica set ${first!.metadata.name!} from 3 to 2`),
    );
    assert.match(
      events,
      new RegExp(`deployment-controller Scaled up replica set ${second.metadata.name!} from 1 to 2`),
    );
  });

  it('rollout history lists the revisions and rollout undo returns to the first template as revision 3', async () => {
    const history = await kubectl(['rollout', 'history', 'deployment/web']);
    assert.match(history, /^1\s/m);
    assert.match(history, /^2\s/m);
    const undo = await kubectl(['rollout', 'undo', 'deployment/web']);
    assert.match(undo, /deployment.apps\/web rolled back/);
    const out = await rolloutStatus();
    assert.match(out, /successfully rolled out/);
    const l = await replicaSets();
    const first = l.find((rs) => image(rs) === 'nginx:1')!;
    assert.equal(first.spec.replicas, 3);
    assert.equal(revision(first), '3');
    assert.equal(first.metadata.annotations?.['deployment.kubernetes.io/revision-history'], '1');
    assert.equal(revision(await deployment()), '3');
    assert.equal(l.length, 2);
  });

  it('rollout restart rolls a new ReplicaSet', async () => {
    await kubectl(['rollout', 'restart', 'deployment/web']);
    await until('a third ReplicaSet', WAIT, async () => (await replicaSets()).length === 3);
    const out = await rolloutStatus();
    assert.match(out, /successfully rolled out/);
    const active = (await replicaSets()).filter((rs) => (rs.spec.replicas ?? 1) > 0);
    assert.equal(active.length, 1);
    assert.equal(revision(active[0]!), '4');
  });

  it('a paused Deployment does not roll until resumed', async () => {
    await kubectl(['rollout', 'pause', 'deployment/web']);
    await kubectl(['set', 'image', 'deployment/web', 'c=nginx:3']);
    await until('Progressing DeploymentPaused', WAIT, async () => {
      const st = (await deployment()).status as { conditions?: { type: string; reason: string }[] };
      return st.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'DeploymentPaused');
    });
    await new Promise((r) => setTimeout(r, 1500));
    assert.ok(!(await replicaSets()).some((rs) => image(rs) === 'nginx:3'));
    await kubectl(['rollout', 'resume', 'deployment/web']);
    const out = await rolloutStatus();
    assert.match(out, /successfully rolled out/);
    assert.ok((await replicaSets()).some((rs) => image(rs) === 'nginx:3' && rs.spec.replicas === 3));
  });

  it('revisionHistoryLimit deletes the oldest old ReplicaSets', async () => {
    assert.equal((await replicaSets()).length, 4);
    await kubectl(['patch', 'deployment/web', '-p', '{"spec":{"revisionHistoryLimit":1}}']);
    const left = await until('two ReplicaSets left', WAIT, async () => {
      const l = await replicaSets();
      return l.length === 2 ? l : undefined;
    });
    // the current one (revision 5) and the newest old one (revision 4)
    assert.deepEqual(left.map(revision).sort(), ['4', '5']);
  });
});
