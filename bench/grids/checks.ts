// What a produced Service or Deployment, and a grid's status, must carry.
import {
  GRID_SELECTOR_LABEL,
  GRID_UNIQ_KEY_LABEL,
  GRID_UNIT_LABEL,
  TOPOLOGY_KEYS_ANNOTATION,
} from '../../src/core/grids/objects.js';
import { GRID_API, UNIT_KEY, type Produced } from './shape.js';

export const at = (v: unknown, ...keys: string[]): unknown => {
  let o = v;
  for (const k of keys)
    o = o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined;
  return o;
};
const show = (v: unknown): string => (v === undefined ? '(none)' : JSON.stringify(v));

function ownerProblem(obj: unknown, kind: string, grid: string, uid: string | undefined): string | undefined {
  const refs = at(obj, 'metadata', 'ownerReferences');
  const controllers = Array.isArray(refs) ? refs.filter((r) => at(r, 'controller') === true) : [];
  if (controllers.length !== 1) return `${controllers.length} controller ownerReferences`;
  const r = controllers[0] as unknown;
  if (at(r, 'apiVersion') !== GRID_API || at(r, 'kind') !== kind || at(r, 'name') !== grid)
    return `controller ownerReference ${show(at(r, 'apiVersion'))} ${show(at(r, 'kind'))} ${show(at(r, 'name'))}`;
  if (uid !== undefined && at(r, 'uid') !== uid) return `controller ownerReference uid is not ${grid}'s`;
  return undefined;
}

function labelProblems(obj: unknown, want: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(want)) {
    const have = at(obj, 'metadata', 'labels', k);
    if (have !== v) out.push(`label ${k}=${show(have)}, want ${v}`);
  }
  return out;
}

/** What is wrong with a Service that ServiceGrid `grid` must have made (undefined: nothing). */
function serviceProblem(obj: unknown, p: Produced, gridUid?: string): string | undefined {
  const problems = labelProblems(obj, { [GRID_SELECTOR_LABEL]: p.grid, [GRID_UNIQ_KEY_LABEL]: UNIT_KEY });
  const topologyKeys = at(obj, 'metadata', 'annotations', TOPOLOGY_KEYS_ANNOTATION);
  let keys: unknown;
  try {
    keys = typeof topologyKeys === 'string' ? JSON.parse(topologyKeys) : undefined;
  } catch {
    keys = undefined;
  }
  if (!Array.isArray(keys) || keys.length !== 1 || keys[0] !== UNIT_KEY)
    problems.push(`annotation ${TOPOLOGY_KEYS_ANNOTATION}=${show(topologyKeys)}`);
  const owner = ownerProblem(obj, 'ServiceGrid', p.grid, gridUid);
  if (owner !== undefined) problems.push(owner);
  if (at(obj, 'spec', 'selector', 'app') !== p.grid)
    problems.push(`selector ${show(at(obj, 'spec', 'selector'))}`);
  const ports = at(obj, 'spec', 'ports');
  if (!Array.isArray(ports) || ports.length !== 1 || at(ports[0], 'port') !== 80)
    problems.push(`ports ${show(ports)}`);
  return problems.length === 0 ? undefined : problems.join('; ');
}

/** What is wrong with a Deployment that DeploymentGrid `grid` must have made for `unit`. */
function deploymentProblem(obj: unknown, p: Produced, gridUid?: string): string | undefined {
  const unit = p.unit ?? '';
  const problems = labelProblems(obj, {
    [GRID_SELECTOR_LABEL]: p.grid,
    [GRID_UNIQ_KEY_LABEL]: UNIT_KEY,
    [GRID_UNIT_LABEL]: unit,
  });
  const nodeSelector = at(obj, 'spec', 'template', 'spec', 'nodeSelector');
  if (at(nodeSelector, UNIT_KEY) !== unit) problems.push(`nodeSelector ${show(nodeSelector)}`);
  const owner = ownerProblem(obj, 'DeploymentGrid', p.grid, gridUid);
  if (owner !== undefined) problems.push(owner);
  if (at(obj, 'spec', 'replicas') !== 1) problems.push(`replicas ${show(at(obj, 'spec', 'replicas'))}`);
  if (at(obj, 'spec', 'template', 'metadata', 'labels', 'app') !== p.grid)
    problems.push(`pod template labels ${show(at(obj, 'spec', 'template', 'metadata', 'labels'))}`);
  return problems.length === 0 ? undefined : problems.join('; ');
}

export type Kind = 'services' | 'deployments';
export const KINDS: readonly Kind[] = ['services', 'deployments'];
export const PRODUCED_PATH: Record<Kind, string> = {
  services: '/api/v1/services',
  deployments: '/apis/apps/v1/deployments',
};
export const checkProduced = (kind: Kind, obj: unknown, p: Produced, gridUid?: string): string | undefined =>
  kind === 'services' ? serviceProblem(obj, p, gridUid) : deploymentProblem(obj, p, gridUid);

export type GridKind = 'servicegrids' | 'deploymentgrids';
export const GRID_KINDS: readonly GridKind[] = ['servicegrids', 'deploymentgrids'];

/** Whether a grid's status says what it made: the ServiceGrid's Service and Ready, the DeploymentGrid's units. */
export function gridStatusProblem(
  kind: GridKind,
  obj: unknown,
  units: readonly string[],
): string | undefined {
  const name = String(at(obj, 'metadata', 'name'));
  const status = at(obj, 'status');
  if (kind === 'servicegrids') {
    if (at(status, 'service') !== `${name}-svc`) return `status.service ${show(at(status, 'service'))}`;
    const conditions = at(status, 'conditions');
    const ready = Array.isArray(conditions) ? conditions.find((c) => at(c, 'type') === 'Ready') : undefined;
    if (at(ready, 'status') !== 'True') return `Ready condition ${show(ready)}`;
    return undefined;
  }
  // status.units counts the units; status.states holds one DeploymentStatus per unit, keyed by value.
  const count = at(status, 'units');
  const states = at(status, 'states');
  const keys = states !== null && typeof states === 'object' ? Object.keys(states).sort() : undefined;
  if (count !== units.length) return `status.units ${show(count)}, want ${units.length}`;
  if (keys === undefined || keys.join(',') !== units.join(','))
    return `status.states has ${keys === undefined ? 'no units' : keys.join(',')}`;
  return undefined;
}
