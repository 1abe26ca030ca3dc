import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { defaultDeploymentSpec } from '../../api/defaults/deployment.js';
import { isDNS1123Subdomain } from '../../api/validation/names.js';
import {
  deploymentGridStatus,
  planDeploymentGrid,
  templateHash,
  unusedTemplates,
  type DeploymentGridPlan,
} from './deployment-grid.js';
import {
  GRID_SELECTOR_LABEL,
  GRID_UNIQ_KEY_LABEL,
  GRID_UNIT_LABEL,
  TEMPLATE_HASH_LABEL,
  clone,
  type Grid,
  type Obj,
} from './objects.js';
import type { GridAction } from './service-grid.js';

const UID = 'dg-uid';

const template = (
  over: { image?: string; replicas?: number; nodeSelector?: Record<string, string> } = {},
): Obj => ({
  replicas: over.replicas ?? 2,
  selector: { matchLabels: { appGrid: 'echo' } },
  template: {
    metadata: { labels: { appGrid: 'echo' } },
    spec: {
      containers: [
        { name: 'echo', image: over.image ?? 'superedge/echoserver:2.2', ports: [{ containerPort: 8080 }] },
      ],
      ...(over.nodeSelector === undefined ? {} : { nodeSelector: over.nodeSelector }),
    },
  },
});

function grid(spec: Obj = {}, name = 'deploymentgrid-demo'): Grid {
  return {
    apiVersion: 'superedge.io/v1',
    kind: 'DeploymentGrid',
    metadata: { name, namespace: 'default', uid: UID, generation: 2 },
    spec: { gridUniqKey: 'zone1', template: template(), ...spec },
  };
}

let uids = 0;
/** A toy API server: create defaults and stamps; update defaults and bumps generation on a spec change. */
function run(deployments: KObject[], actions: readonly GridAction[]): KObject[] {
  const create = (o: KObject): KObject => {
    const out = clone(o);
    out.metadata.uid = `d-${uids++}`;
    out.metadata.generation = 1;
    out.metadata.resourceVersion = '1';
    defaultDeploymentSpec(out['spec'] as Obj);
    return out;
  };
  let out = [...deployments];
  for (const a of actions) {
    if (a.op === 'create') out.push(create(a.object));
    else if (a.op === 'update')
      out = out.map((d) => {
        if (d.metadata.name !== a.object.metadata.name) return d;
        const next = clone(a.object);
        defaultDeploymentSpec(next['spec'] as Obj);
        next.metadata.generation = (d.metadata.generation ?? 1) + 1;
        return next;
      });
    else if (a.op === 'delete') out = out.filter((d) => d.metadata.uid !== a.uid);
    else out = [...out.filter((d) => d.metadata.uid !== a.uid), create(a.object)];
  }
  return out;
}

const names = (ds: readonly KObject[]): string[] => ds.map((d) => d.metadata.name ?? '').sort();
const ops = (p: DeploymentGridPlan): string[] =>
  p.actions.map((a) => `${a.op} ${a.op === 'delete' ? a.name : a.object.metadata.name}`);
const podSpec = (d: KObject): Obj => ((d['spec'] as Obj)['template'] as Obj)['spec'] as Obj;
const podLabels = (d: KObject): Record<string, string> =>
  (((d['spec'] as Obj)['template'] as Obj)['metadata'] as Obj)['labels'] as Record<string, string>;

describe('planDeploymentGrid', () => {
  it("gives each unit SuperEdge's Deployment: <dg>-<value>, pinned to the unit, labelled, owned", () => {
    const g = grid({ template: template({ nodeSelector: { disk: 'ssd' } }) });
    const plan = planDeploymentGrid(g, ['nodeunit1', 'nodeunit2'], []);
    assert.deepEqual(ops(plan), [
      'create deploymentgrid-demo-nodeunit1',
      'create deploymentgrid-demo-nodeunit2',
    ]);
    const d = run([], plan.actions)[0]!;
    assert.deepEqual(d.metadata.labels, {
      [GRID_SELECTOR_LABEL]: 'deploymentgrid-demo',
      [GRID_UNIQ_KEY_LABEL]: 'zone1',
      [GRID_UNIT_LABEL]: 'nodeunit1',
    });
    assert.deepEqual(podSpec(d)['nodeSelector'], { disk: 'ssd', zone1: 'nodeunit1' });
    assert.match(podLabels(d)[TEMPLATE_HASH_LABEL] ?? '', /^[0-9a-f]{8}$/);
    assert.equal(podLabels(d)['appGrid'], 'echo');
    assert.equal((d['spec'] as Obj)['replicas'], 2);
    assert.deepEqual(d.metadata.ownerReferences, [
      {
        apiVersion: 'superedge.io/v1',
        kind: 'DeploymentGrid',
        name: 'deploymentgrid-demo',
        uid: UID,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });

  it('takes its grid-uniq-key label away when the key can no longer be a label value', () => {
    const ds = run([], planDeploymentGrid(grid(), ['u1'], []).actions);
    const g = grid({ gridUniqKey: 'topology.kubernetes.io/zone' });
    const plan = planDeploymentGrid(g, ['u1'], ds);
    assert.deepEqual(ops(plan), ['update deploymentgrid-demo-u1']);
    const [d] = run(ds, plan.actions);
    assert.equal(d!.metadata.labels?.[GRID_UNIQ_KEY_LABEL], undefined);
    assert.deepEqual(planDeploymentGrid(g, ['u1'], [d!]).actions, []);
  });

  it('names a unit whose value is not a valid name part validly, with the value in a label', () => {
    const plan = planDeploymentGrid(grid(), ['Unit_A'], []);
    const [d] = run([], plan.actions);
    assert.match(d!.metadata.name ?? '', /^deploymentgrid-demo-unit-a-[0-9a-f]{8}$/);
    assert.equal(d!.metadata.labels?.[GRID_UNIT_LABEL], 'Unit_A');
    assert.deepEqual(podSpec(d!)['nodeSelector'], { zone1: 'Unit_A' });
  });

  it('deletes the Deployment of a unit that vanished, and only the ones it controls', () => {
    const g = grid();
    const both = run([], planDeploymentGrid(g, ['nodeunit1', 'nodeunit2'], []).actions);
    const foreign: KObject = {
      metadata: {
        name: 'mine',
        namespace: 'default',
        uid: 'm',
        labels: { [GRID_SELECTOR_LABEL]: 'deploymentgrid-demo' },
      },
    };
    const plan = planDeploymentGrid(g, ['nodeunit2'], [...both, foreign]);
    assert.deepEqual(ops(plan), ['delete deploymentgrid-demo-nodeunit1']);
    assert.deepEqual(names(run(both, plan.actions)), ['deploymentgrid-demo-nodeunit2']);
  });

  it('plans nothing for a reconciled state, and puts back a replicas or image edit', () => {
    const g = grid();
    const ds = run([], planDeploymentGrid(g, ['u1'], []).actions);
    assert.deepEqual(planDeploymentGrid(g, ['u1'], ds).actions, []);
    for (const edit of [
      (d: KObject) => ((d['spec'] as Obj)['replicas'] = 5),
      (d: KObject) => ((podSpec(d)['containers'] as Obj[])[0]!['image'] = 'other'),
      (d: KObject) => (podSpec(d)['hostNetwork'] = true),
      (d: KObject) => delete podLabels(d)[TEMPLATE_HASH_LABEL],
    ]) {
      const edited = clone(ds[0]!);
      edit(edited);
      const plan = planDeploymentGrid(g, ['u1'], [edited]);
      assert.deepEqual(ops(plan), ['update deploymentgrid-demo-u1']);
      assert.deepEqual(planDeploymentGrid(g, ['u1'], run([edited], plan.actions)).actions, []);
    }
  });

  it('keeps the template hash for a replicas change and changes it for an image change', () => {
    assert.equal(templateHash(template({ replicas: 1 })), templateHash(template({ replicas: 7 })));
    assert.notEqual(templateHash(template()), templateHash(template({ image: 'x:2' })));
    // Defaults do not count: a template spelled out as the server defaults it hashes the same.
    const spelled = template();
    defaultDeploymentSpec(spelled);
    assert.equal(templateHash(spelled), templateHash(template()));
  });

  it('chooses templates as SuperEdge does; a missing pool name fails that unit only and keeps its Deployment', () => {
    const g = grid({
      templatePool: { big: template({ replicas: 5 }) },
      templates: { u1: 'big', u2: 'missing' },
    });
    const plan = planDeploymentGrid(g, ['u1', 'u2', 'u3'], []);
    assert.deepEqual(ops(plan), ['create deploymentgrid-demo-u1', 'create deploymentgrid-demo-u3']);
    assert.deepEqual(
      plan.unitErrors.map((e) => [e.unit, e.reason]),
      [['u2', 'TemplateNotFound']],
    );
    const ds = run([], plan.actions);
    assert.deepEqual(
      ds.map((d) => (d['spec'] as Obj)['replicas']),
      [5, 2],
    );
    // u2 had a Deployment from before its template went missing: it stays.
    const before = run([], planDeploymentGrid(grid(), ['u2'], []).actions);
    assert.deepEqual(planDeploymentGrid(g, ['u2'], before).actions, []);
  });

  it('adopts an unowned Deployment with a unit name and leaves one another controller owns, reporting it', () => {
    const orphan: KObject = {
      metadata: { name: 'deploymentgrid-demo-u1', namespace: 'default', uid: 'o', resourceVersion: '4' },
      spec: template(),
    };
    const owned: KObject = {
      metadata: {
        name: 'deploymentgrid-demo-u2',
        namespace: 'default',
        uid: 'p',
        ownerReferences: [{ apiVersion: 'v1', kind: 'Foo', name: 'f', uid: 'x', controller: true }],
      },
    };
    const plan = planDeploymentGrid(grid(), ['u1', 'u2'], [orphan, owned]);
    assert.deepEqual(
      plan.actions.map((a) => [a.op, a.op === 'update' && a.adopt]),
      [['update', true]],
    );
    assert.deepEqual(
      plan.unitErrors.map((e) => [e.unit, e.reason]),
      [['u2', 'OwnedByAnotherController']],
    );
  });

  it('recreates a Deployment whose selector the template changed (immutable in apps/v1)', () => {
    const ds = run([], planDeploymentGrid(grid(), ['u1'], []).actions);
    const t = template();
    (t['selector'] as Obj)['matchLabels'] = { appGrid: 'echo2' };
    ((t['template'] as Obj)['metadata'] as Obj)['labels'] = { appGrid: 'echo2' };
    assert.deepEqual(ops(planDeploymentGrid(grid({ template: t }), ['u1'], ds)), [
      'recreate deploymentgrid-demo-u1',
    ]);
  });

  it('says what is wrong with an empty key, and plans nothing', () => {
    const plan = planDeploymentGrid(grid({ gridUniqKey: '' }), ['u1'], []);
    assert.equal(plan.problem?.eventReason, 'Empty');
    assert.deepEqual(plan.actions, []);
  });

  it('never mutates the grid or the Deployments it is given', () => {
    const g = grid({ templatePool: { big: template() }, templates: { u1: 'big' } });
    const ds = run([], planDeploymentGrid(g, ['u1', 'u2'], []).actions);
    const edited = clone(ds);
    (edited[0]!['spec'] as Obj)['replicas'] = 9;
    const before = JSON.stringify([g, edited]);
    planDeploymentGrid(g, ['u1', 'u2', 'u3'], edited);
    assert.equal(JSON.stringify([g, edited]), before);
  });

  it('converges from any units and edits: names are valid, one per unit, and a second pass plans nothing (property)', () => {
    const unit = fc.stringMatching(/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,20}[A-Za-z0-9])?$/);
    fc.assert(
      fc.property(
        fc.uniqueArray(unit, { maxLength: 6 }),
        fc.uniqueArray(unit, { maxLength: 6 }),
        fc.integer({ min: 0, max: 5 }),
        fc.constantFrom('a:1', 'b:2'),
        (units1, units2, replicas, image) => {
          const g1 = grid();
          const s1 = run([], planDeploymentGrid(g1, units1, []).actions);
          assert.equal(s1.length, units1.length);
          for (const d of s1) assert.deepEqual(isDNS1123Subdomain(d.metadata.name ?? ''), []);
          assert.equal(new Set(names(s1)).size, units1.length);
          assert.deepEqual(planDeploymentGrid(g1, units1, s1).actions, []);
          const g2 = grid({ template: template({ replicas, image }) });
          const s2 = run(s1, planDeploymentGrid(g2, units2, s1).actions);
          assert.deepEqual(s2.map((d) => d.metadata.labels?.[GRID_UNIT_LABEL]).sort(), [...units2].sort());
          assert.deepEqual(planDeploymentGrid(g2, units2, s2).actions, []);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('unusedTemplates', () => {
  it('lists pool entries nothing names, only with autoDeleteUnusedTemplate, whatever units exist now', () => {
    const spec = {
      templatePool: { a: template(), b: template(), c: template() },
      templates: { u1: 'a' },
      defaultTemplateName: 'c',
    };
    assert.deepEqual(unusedTemplates(grid(spec)), []);
    assert.deepEqual(unusedTemplates(grid({ ...spec, autoDeleteUnusedTemplate: true })), ['b']);
    // Named but on no unit right now (no node labelled yet): kept.
    const pinned = { ...spec, templates: { u1: 'a', later: 'b' }, autoDeleteUnusedTemplate: true };
    assert.deepEqual(planDeploymentGrid(grid(pinned), [], []).unusedTemplates, []);
  });
});

describe('deploymentGridStatus', () => {
  it('mirrors each unit Deployment status, counts ready units and says Ready when all are', () => {
    const g = grid();
    const plan = planDeploymentGrid(g, ['u1', 'u2'], []);
    const ds = run([], plan.actions);
    const byUnit = new Map(ds.map((d) => [d.metadata.labels![GRID_UNIT_LABEL]!, d]));
    byUnit.set('u1', {
      ...byUnit.get('u1')!,
      status: { observedGeneration: 1, replicas: 2, readyReplicas: 2 },
    });
    const s = deploymentGridStatus(g, ['u1', 'u2'], plan, { deployments: byUnit, failures: [] }, 'T');
    assert.deepEqual(s['states'], { u1: { observedGeneration: 1, replicas: 2, readyReplicas: 2 }, u2: {} });
    assert.equal(s['units'], 2);
    assert.equal(s['readyUnits'], 1);
    const ready = (s['conditions'] as Obj[]).find((c) => c['type'] === 'Ready')!;
    assert.deepEqual(
      [ready['status'], ready['reason'], ready['message']],
      ['False', 'UnitsNotReady', '1/2 units ready'],
    );
    byUnit.set('u2', { ...byUnit.get('u2')!, status: { observedGeneration: 1, readyReplicas: 2 } });
    const s2 = deploymentGridStatus(g, ['u1', 'u2'], plan, { deployments: byUnit, failures: [] }, 'T');
    assert.equal((s2['conditions'] as Obj[]).find((c) => c['type'] === 'Ready')!['status'], 'True');
  });

  it('does not count a unit whose Deployment another controller owns', () => {
    const g = grid();
    const theirs: KObject = {
      metadata: {
        name: 'deploymentgrid-demo-u1',
        namespace: 'default',
        uid: 't',
        generation: 1,
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'cm', uid: 'x', controller: true }],
      },
      spec: { replicas: 1 },
      status: { observedGeneration: 1, readyReplicas: 1 },
    };
    const plan = planDeploymentGrid(g, ['u1'], [theirs]);
    const s = deploymentGridStatus(
      g,
      ['u1'],
      plan,
      { deployments: new Map([['u1', theirs]]), failures: [] },
      'T',
    );
    assert.equal(s['readyUnits'], 0);
    assert.deepEqual(s['states'], {});
  });

  it('says NoUnits when no node has the key, and names failed units', () => {
    const g = grid({ templates: { u1: 'nope' } });
    const none = deploymentGridStatus(
      g,
      [],
      planDeploymentGrid(g, [], []),
      { deployments: new Map(), failures: [] },
      'T',
    );
    assert.equal((none['conditions'] as Obj[]).find((c) => c['type'] === 'Ready')!['reason'], 'NoUnits');
    const plan = planDeploymentGrid(g, ['u1'], []);
    const s = deploymentGridStatus(g, ['u1'], plan, { deployments: new Map(), failures: [] }, 'T');
    const failed = (s['conditions'] as Obj[]).find((c) => c['type'] === 'UnitsFailed')!;
    assert.equal(failed['reason'], 'TemplateNotFound');
    assert.match(String(failed['message']), /unit "u1": template "nope" is not in spec.templatePool/);
  });
});
