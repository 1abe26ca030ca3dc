// DeploymentGrid → Deployments planning, pure. One Deployment per unit (a distinct value
// of the node label `gridUniqKey`), from the template the unit chooses, pinned to the unit's nodes.
//
// SuperEdge's contract (its application-grid-controller), kept: `<dg>-<value>` names,
// template choice (templates → templatePool → defaultTemplateName → spec.template), the nodeSelector
// merged into the pod template, `superedge.io/template-hash-key` on the pod template (a hash of the
// template without replicas, so a replicas change never rolls pods), grid-selector and grid-uniq-key
// labels, a controller ownerReference, Deployments of vanished units deleted, `status.states[value]`.
// Its defects, fixed: names are always valid and the unit value travels in a label
// (`superedge.io/grid-unit`); the grid's spec is never written (the hash lives only on the
// Deployments), except that `autoDeleteUnusedTemplate: true` prunes unused pool entries; a template
// missing from the pool fails only its unit; nothing here mutates what it is given.
import type { KObject } from '../../api/object.js';
import { isPlainObject } from '../../api/json.js';
import { defaultDeploymentSpec } from '../../api/defaults/deployment.js';
import { deploymentSpec as deploymentSpecSchema } from '../../api/schema/apps.js';
import {
  type Condition,
  type Grid,
  type Obj,
  canonical,
  clone,
  conditionsOf,
  containsAll,
  controllerRefTo,
  fnv1aHex,
  gridKeyOf,
  gridLabels,
  labelsInSync,
  GRID_UNIT_LABEL,
  mergedMeta,
  ownershipOf,
  sameUnderSchema,
  TEMPLATE_HASH_LABEL,
  type WriteErrorType,
  withCondition,
  withWriteErrors,
  withoutCondition,
} from './objects.js';
import { type GridAction, type GridProblem, passedAnnotations } from './service-grid.js';
import { chooseTemplate, unitObjectName, type GridTemplates } from './units.js';

export const DEPLOYMENT_GRID_KIND = 'DeploymentGrid';

/** A unit that could not be reconciled; the others still are. */
export interface UnitError {
  readonly unit: string;
  readonly reason: 'TemplateNotFound' | 'OwnedByAnotherController';
  readonly message: string;
}

export interface DeploymentGridPlan {
  readonly problem?: GridProblem;
  readonly actions: readonly GridAction[];
  readonly unitErrors: readonly UnitError[];
  /** Each unit's Deployment name. */
  readonly names: ReadonlyMap<string, string>;
  /** templatePool entries to remove (autoDeleteUnusedTemplate only). */
  readonly unusedTemplates: readonly string[];
}

const templatesOf = (grid: Grid): GridTemplates<Obj> => {
  const spec = grid.spec ?? {};
  const pick = <T>(k: string, ok: (v: unknown) => v is T): T | undefined =>
    ok(spec[k]) ? spec[k] : undefined;
  const template = pick('template', isPlainObject);
  const pool = pick('templatePool', isPlainObject) as Record<string, Obj> | undefined;
  const templates = pick('templates', isPlainObject) as Record<string, string> | undefined;
  const def = spec['defaultTemplateName'];
  return {
    ...(template === undefined ? {} : { template }),
    ...(pool === undefined ? {} : { templatePool: pool }),
    ...(templates === undefined ? {} : { templates }),
    ...(typeof def === 'string' ? { defaultTemplateName: def } : {}),
  };
};

/** Hashes by template object: a grid's units share their template, and grids are not mutated. */
const hashes = new WeakMap<Obj, string>();

/** The hash of a template as the API server would default it, replicas left out: stable across units. */
export function templateHash(template: Obj): string {
  const known = hashes.get(template);
  if (known !== undefined) return known;
  const spec = clone(template);
  defaultDeploymentSpec(spec);
  delete spec['replicas'];
  const hash = fnv1aHex(JSON.stringify(canonical(spec)));
  hashes.set(template, hash);
  return hash;
}

const child = (o: Obj, k: string): Obj => {
  const v = o[k];
  if (isPlainObject(v)) return v;
  const fresh: Obj = {};
  o[k] = fresh;
  return fresh;
};

/** The template defaulted, with the hash label: shared by every unit, read only. */
const bases = new WeakMap<Obj, Obj>();

function baseSpec(template: Obj): Obj {
  let base = bases.get(template);
  if (base === undefined) {
    base = clone(template);
    const labels = child(child(child(base, 'template'), 'metadata'), 'labels');
    labels[TEMPLATE_HASH_LABEL] = templateHash(template);
    defaultDeploymentSpec(base);
    bases.set(template, base);
  }
  return base;
}

/**
 * The spec a unit wants, sharing all but the path to its nodeSelector with the template's defaulted
 * base (defaulting does not read the nodeSelector). Read only: a replan of a grid with many units
 * costs comparisons, not copies of the template per unit.
 */
function unitSpec(template: Obj, key: string, unit: string): Obj {
  const base = baseSpec(template);
  const podTemplate = base['template'] as Obj;
  const podSpec = isPlainObject(podTemplate['spec']) ? podTemplate['spec'] : {};
  const nodeSelector = isPlainObject(podSpec['nodeSelector']) ? podSpec['nodeSelector'] : {};
  return {
    ...base,
    template: { ...podTemplate, spec: { ...podSpec, nodeSelector: { ...nodeSelector, [key]: unit } } },
  };
}

/** The Deployment spec a unit wants: the template, defaulted, pinned to the unit, with the hash label. */
export function desiredDeploymentSpec(template: Obj, key: string, unit: string): Obj {
  return clone(unitSpec(template, key, unit));
}

const unitLabels = (grid: Grid, unit: string): Record<string, string> => ({
  ...gridLabels(grid),
  [GRID_UNIT_LABEL]: unit,
});

export function desiredDeployment(grid: Grid, unit: string, template: Obj, live?: KObject): KObject {
  const key = gridKeyOf(grid);
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      ...(live === undefined ? {} : clone(live.metadata)),
      name: unitObjectName(grid.metadata.name ?? '', unit),
      namespace: grid.metadata.namespace ?? 'default',
      ...mergedMeta(live?.metadata, {
        labels: unitLabels(grid, unit),
        annotations: passedAnnotations(grid),
        ref: controllerRefTo(grid, DEPLOYMENT_GRID_KIND),
      }),
    },
    spec: desiredDeploymentSpec(template, key, unit),
  };
}

/**
 * The writes that give every unit its Deployment and remove the others. `units` are the distinct
 * values of the grid's key on the nodes (unitsOf); `deployments` those of the grid's namespace that
 * concern it (labelled `grid-selector=<grid>`, controlled by it, or named as one of its units').
 */
export function planDeploymentGrid(
  grid: Grid,
  units: readonly string[],
  deployments: readonly KObject[],
): DeploymentGridPlan {
  const names = new Map(units.map((u) => [u, unitObjectName(grid.metadata.name ?? '', u)]));
  const key = gridKeyOf(grid);
  const empty = { actions: [], unitErrors: [], names, unusedTemplates: [] };
  if (key === '')
    return {
      ...empty,
      problem: { reason: 'EmptyGridKey', eventReason: 'Empty', message: 'spec.gridUniqKey is empty' },
    };
  if (grid.metadata.deletionTimestamp !== undefined) return empty;
  const byName = new Map(deployments.map((d) => [d.metadata.name ?? '', d]));
  const spec = templatesOf(grid);
  const actions: GridAction[] = [];
  const unitErrors: UnitError[] = [];
  const keep = new Set<string>();
  const annotations = passedAnnotations(grid);
  for (const unit of units) {
    const name = names.get(unit)!;
    keep.add(name);
    const live = byName.get(name);
    const choice = chooseTemplate(spec, unit);
    if ('error' in choice) {
      unitErrors.push({
        unit,
        reason: 'TemplateNotFound',
        message: `unit ${JSON.stringify(unit)}: ${choice.error}`,
      });
      continue; // a Deployment it already has stays as it is
    }
    if (live === undefined) {
      actions.push({ op: 'create', object: desiredDeployment(grid, unit, choice.template) });
      continue;
    }
    const owner = ownershipOf(live, grid);
    if (owner === 'other') {
      const ref = live.metadata.ownerReferences?.find((r) => r.controller === true);
      unitErrors.push({
        unit,
        reason: 'OwnedByAnotherController',
        message: `unit ${JSON.stringify(unit)}: Deployment ${name} is controlled by ${ref?.kind ?? '?'} ${ref?.name ?? '?'}`,
      });
      continue;
    }
    if (live.metadata.deletionTimestamp !== undefined) continue; // recreated once it is gone
    const wantSpec = unitSpec(choice.template, key, unit);
    const liveSpec = isPlainObject(live['spec']) ? live['spec'] : {};
    if (
      !sameUnderSchema(
        wantSpec['selector'],
        liveSpec['selector'],
        deploymentSpecSchema.properties?.['selector'],
      )
    ) {
      // apps/v1 selectors are immutable: a template whose selector changed needs a new Deployment.
      actions.push({
        op: 'recreate',
        object: desiredDeployment(grid, unit, choice.template),
        uid: live.metadata.uid ?? '',
        why: 'spec.selector cannot change in place',
      });
      continue;
    }
    const inSync =
      owner === 'ours' &&
      labelsInSync(live.metadata.labels, unitLabels(grid, unit)) &&
      containsAll(live.metadata.annotations, annotations) &&
      sameUnderSchema(wantSpec, liveSpec, deploymentSpecSchema);
    if (!inSync)
      actions.push({
        op: 'update',
        object: desiredDeployment(grid, unit, choice.template, live),
        adopt: owner === 'orphan',
      });
  }
  for (const d of deployments) {
    const name = d.metadata.name ?? '';
    if (keep.has(name) || ownershipOf(d, grid) !== 'ours') continue;
    const unit = d.metadata.labels?.[GRID_UNIT_LABEL];
    actions.push({
      op: 'delete',
      name,
      uid: d.metadata.uid ?? '',
      why:
        unit === undefined
          ? 'it serves no unit of the grid'
          : `unit ${JSON.stringify(unit)} has no nodes any more`,
    });
  }
  return { actions, unitErrors, names, unusedTemplates: unusedTemplates(grid) };
}

/**
 * autoDeleteUnusedTemplate: the templatePool entries that neither `templates` nor
 * `defaultTemplateName` names. Which units exist right now does not count: a grid applied before its
 * nodes are labelled, or a unit whose only node is briefly relabelled, must not lose its templates.
 */
export function unusedTemplates(grid: Grid): string[] {
  if (grid.spec?.['autoDeleteUnusedTemplate'] !== true) return [];
  const spec = templatesOf(grid);
  const used = new Set(Object.values(spec.templates ?? {}));
  if (spec.defaultTemplateName !== undefined) used.add(spec.defaultTemplateName);
  return Object.keys(spec.templatePool ?? {})
    .filter((n) => !used.has(n))
    .sort();
}

/** A unit is ready when its Deployment has seen its spec and has the replicas it asks for, ready. */
export function deploymentReady(d: KObject): boolean {
  const spec = isPlainObject(d['spec']) ? d['spec'] : {};
  const st = isPlainObject(d['status']) ? d['status'] : {};
  const want = typeof spec['replicas'] === 'number' ? spec['replicas'] : 1;
  const observed = typeof st['observedGeneration'] === 'number' ? st['observedGeneration'] : 0;
  const ready = typeof st['readyReplicas'] === 'number' ? st['readyReplicas'] : 0;
  return observed >= (d.metadata.generation ?? 1) && ready >= want;
}

export interface DeploymentGridOutcome {
  /** Each unit's Deployment after the writes (the server's answers), or the live one. */
  readonly deployments: ReadonlyMap<string, KObject>;
  readonly failures: ReadonlyArray<{ readonly type: WriteErrorType; readonly message: string }>;
}

/**
 * The status the grid should show: `states[value]` mirrors each unit's DeploymentStatus; `units` and
 * `readyUnits` count them; Ready says whether every unit is ready; UnitsFailed names the units that
 * could not be reconciled; one condition per kind of write that failed.
 */
export function deploymentGridStatus(
  grid: Grid,
  units: readonly string[],
  plan: DeploymentGridPlan,
  outcome: DeploymentGridOutcome,
  now: string,
): Record<string, unknown> {
  const generation = grid.metadata.generation ?? 1;
  const states: Record<string, unknown> = {};
  let readyUnits = 0;
  for (const unit of units) {
    const d = outcome.deployments.get(unit);
    if (d === undefined || ownershipOf(d, grid) === 'other') continue; // not the grid's to report
    states[unit] = isPlainObject(d['status']) ? clone(d['status']) : {};
    if (deploymentReady(d)) readyUnits++;
  }
  let conditions = withWriteErrors(conditionsOf(grid.status), outcome.failures, generation, now);
  conditions =
    plan.unitErrors.length === 0
      ? withoutCondition(conditions, 'UnitsFailed')
      : withCondition(
          conditions,
          {
            type: 'UnitsFailed',
            status: 'True',
            observedGeneration: generation,
            reason: plan.unitErrors[0]!.reason,
            message: plan.unitErrors.map((e) => e.message).join('; '),
          },
          now,
        );
  const key = gridKeyOf(grid);
  const ready: Omit<Condition, 'lastTransitionTime'> =
    plan.problem !== undefined
      ? { type: 'Ready', status: 'False', reason: plan.problem.reason, message: plan.problem.message }
      : units.length === 0
        ? {
            type: 'Ready',
            status: 'False',
            reason: 'NoUnits',
            message: `no node has the label ${JSON.stringify(key)}`,
          }
        : readyUnits === units.length && plan.unitErrors.length === 0 && outcome.failures.length === 0
          ? {
              type: 'Ready',
              status: 'True',
              reason: 'AllUnitsReady',
              message: `${readyUnits}/${units.length} units ready`,
            }
          : {
              type: 'Ready',
              status: 'False',
              reason: 'UnitsNotReady',
              message: `${readyUnits}/${units.length} units ready`,
            };
  conditions = withCondition(conditions, { ...ready, observedGeneration: generation }, now);
  return {
    ...(isPlainObject(grid.status) ? clone(grid.status) : {}),
    states,
    units: units.length,
    readyUnits,
    observedGeneration: generation,
    conditions,
  };
}
