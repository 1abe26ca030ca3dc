// The ReplicaSet controller end to end: kubectl against `svcplane up`. No node simulator runs here, so
// pods stay where the test puts them: it binds one pod to a Node through pods/binding and makes pods
// Running and Ready with `svcplane pod-status`, as a kubelet would.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KObject } from '../../src/api/object.js';
import { kubectlFor, type Kubectl } from './testing/kubectl.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const WAIT = 20_000;
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-rs-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface PodList {
  items: KObject[];
}

const RS = {
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name: 'web' },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    },
  },
};

describe('ReplicaSet controller: kubectl against svcplane up', () => {
  let srv: TestServer;
  let kubectl: Kubectl;
  let rsUid = '';

  const pods = async (): Promise<KObject[]> => {
    const r = await call(srv, 'GET', '/api/v1/namespaces/default/pods');
    assert.equal(r.status, 200, r.text);
    return r.json<PodList>().items;
  };
  /** The pods the ReplicaSet controls that are not being deleted. */
  const owned = async (): Promise<KObject[]> =>
    (await pods()).filter(
      (p) =>
        p.metadata.deletionTimestamp === undefined &&
        (p.metadata.ownerReferences ?? []).some((r) => r.uid === rsUid && r.controller === true),
    );
  const ownedNames = async (): Promise<string[]> => (await owned()).map((p) => p.metadata.name!).sort();
  const waitOwned = (n: number): Promise<KObject[]> =>
    until(
      () => `${n} pods owned by the ReplicaSet`,
      WAIT,
      async () => {
        const o = await owned();
        return o.length === n ? o : undefined;
      },
    );
  const podStatus = (name: string, ...args: string[]): Promise<string> =>
    new Promise((resolve, reject) =>
      execFile(
        process.execPath,
        [BIN, 'pod-status', name, '--kubeconfig', srv.kubeconfig, ...args],
        (err, stdout, stderr) => (err ? reject(new Error(`${String(err)}\n${stderr}`)) : resolve(stdout)),
      ),
    );
  const rsStatus = async (): Promise<Record<string, number>> => {
    const r = await call(srv, 'GET', '/apis/apps/v1/namespaces/default/replicasets/web');
    assert.equal(r.status, 200, r.text);
    return (r.json<{ status: Record<string, number> }>().status ?? {}) as Record<string, number>;
  };

  before(async () => {
    srv = await startUp();
    kubectl = kubectlFor(srv, work);
  });
  after(async () => srv?.destroy());

  it('kubectl apply of a 3-replica ReplicaSet makes 3 pods with a controller ownerReference', async () => {
    await kubectl(['apply', '-f', '-'], JSON.stringify(RS));
    rsUid = (await kubectl(['get', 'rs', 'web', '-o', 'jsonpath={.metadata.uid}'])).trim();
    const three = await waitOwned(3);
    for (const p of three) {
      assert.match(p.metadata.name!, /^web-[a-z0-9]{5}$/);
      assert.deepEqual(p.metadata.labels, { app: 'web' });
      assert.deepEqual(p.metadata.ownerReferences, [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web',
          uid: rsUid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
    await until('status.replicas 3', WAIT, async () => {
      const s = await rsStatus();
      return s['replicas'] === 3 && s['fullyLabeledReplicas'] === 3 && s['observedGeneration'] === 1;
    });
    const events = await kubectl([
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=web,reason=SuccessfulCreate',
      '-o',
      'jsonpath={range .items[*]}{.source.component} {.message}{"\\n"}{end}',
    ]);
    assert.match(events, /replicaset-controller Created pod: web-/);
  });

  it('a deleted pod is replaced', async () => {
    const [victim] = await ownedNames();
    await kubectl(['delete', 'pod', victim!, '--wait=false']);
    await until('a replacement pod', WAIT, async () => {
      const names = await ownedNames();
      return names.length === 3 && !names.includes(victim!);
    });
  });

  it('scaling down deletes unscheduled, pending and not-ready pods before ready ones', async () => {
    await kubectl(['scale', 'rs', 'web', '--replicas=5']);
    const five = (await waitOwned(5)).map((p) => p.metadata.name!).sort();
    const [bound, ready, notReady] = five as [string, string, string, string, string];
    // `bound` is scheduled (and Ready), `ready` unscheduled but Ready, `notReady` Running but not
    // Ready; the other two stay Pending and unscheduled.
    await kubectl(
      ['create', '-f', '-'],
      JSON.stringify({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'rs-node' } }),
    );
    const bind = await call(srv, 'POST', `/api/v1/namespaces/default/pods/${bound}/binding`, {
      body: {
        apiVersion: 'v1',
        kind: 'Binding',
        metadata: { name: bound },
        target: { apiVersion: 'v1', kind: 'Node', name: 'rs-node' },
      },
    });
    assert.equal(bind.status, 201, bind.text);
    await podStatus(bound, '--ip', '10.244.0.11');
    await podStatus(ready, '--ip', '10.244.0.12');
    await podStatus(notReady, '--ip', '10.244.0.13', '--ready=false');
    await until('readyReplicas 2', WAIT, async () => (await rsStatus())['readyReplicas'] === 2);
    await kubectl(['scale', 'rs', 'web', '--replicas=2']);
    await until(
      () => `only ${bound} and ${ready} left`,
      WAIT,
      async () => JSON.stringify(await ownedNames()) === JSON.stringify([bound, ready].sort()),
    );
    await until('status after the scale down', WAIT, async () => {
      const s = await rsStatus();
      return s['replicas'] === 2 && s['readyReplicas'] === 2 && s['availableReplicas'] === 2;
    });
  });

  it('an orphan that matches is adopted; relabelled, it is released and replaced', async () => {
    // A high pod-deletion-cost keeps the stray pod when its adoption makes 3 of 2: the unscheduled
    // Ready pod without one goes instead.
    await kubectl([
      'run',
      'stray',
      '--image=nginx',
      '--labels=app=other',
      '--annotations=controller.kubernetes.io/pod-deletion-cost=100',
    ]);
    await podStatus('stray', '--ip', '10.244.0.20');
    const [bound] = (await owned()).filter((p) => (p.spec as { nodeName?: string }).nodeName === 'rs-node');
    await kubectl(['label', 'pod', 'stray', 'app=web', '--overwrite']);
    await until('stray adopted, the other unscheduled pod deleted', WAIT, async () => {
      const names = await ownedNames();
      return JSON.stringify(names) === JSON.stringify([bound!.metadata.name!, 'stray'].sort());
    });
    await kubectl(['label', 'pod', 'stray', 'app=elsewhere', '--overwrite']);
    await until('stray released and replaced', WAIT, async () => {
      const r = await call(srv, 'GET', '/api/v1/namespaces/default/pods/stray');
      const p = r.json<KObject>();
      const names = await ownedNames();
      return (
        (p.metadata.ownerReferences ?? []).length === 0 &&
        names.length === 2 &&
        !names.includes('stray') &&
        names.includes(bound!.metadata.name!)
      );
    });
  });

  it('deleting the ReplicaSet removes its pods (garbage collector)', async () => {
    await kubectl(['delete', 'rs', 'web', '--wait=false']);
    // Unscheduled pods go at once; the one bound to a node terminates gracefully (no kubelet here
    // confirms it), so it only has to be on its way out.
    await until('the ReplicaSet’s pods gone or terminating', WAIT, async () => {
      const left = (await pods()).filter((p) =>
        (p.metadata.ownerReferences ?? []).some((r) => r.uid === rsUid),
      );
      return left.every((p) => p.metadata.deletionTimestamp !== undefined);
    });
    // A released pod is not the ReplicaSet's any more and stays.
    const stray = await call(srv, 'GET', '/api/v1/namespaces/default/pods/stray');
    assert.equal(stray.status, 200, stray.text);
    assert.equal(stray.json<KObject>().metadata.deletionTimestamp, undefined);
  });
});
