// The SuperEdge grid kinds (superedge.io/v1): spec.gridUniqKey is a required node-label key, and the
// templates are validated as the specs they expand to — a ServiceSpec under `spec.template` for a
// ServiceGrid, a DeploymentSpec under `spec.template` (and each `spec.templatePool[name]`) for a
// DeploymentGrid. As for any custom resource, updates get the same rules as creates (no
// Service/Deployment immutability rules: the grid controller reconciles the generated objects).
import { FieldPath, type FieldError, invalid, required } from '../field-errors.js';
import { isDNS1035Label } from './formats.js';
import { validateDeploymentSpec } from './deployment.js';
import { In } from './json.js';
import { validateLabelName } from './labels.js';
import { validateServiceSpec } from './service.js';

function specOf(obj: Record<string, unknown>, errs: FieldError[]): In {
  return In.at(obj['spec'], FieldPath.root('spec'), errs) ?? new In({}, FieldPath.root('spec'), errs);
}

function validateGridUniqKey(spec: In, errs: FieldError[]): void {
  const key = spec.s('gridUniqKey');
  if (key === '') errs.push(required(spec.p('gridUniqKey'), ''));
  else errs.push(...validateLabelName(key, spec.p('gridUniqKey')));
}

/**
 * The Service a ServiceGrid produces is `<name>-svc`, so the grid's name must leave room for it as a
 * Service name (a DNS-1035 label). A DeploymentGrid needs no such rule: its Deployments' names are
 * rewritten to valid ones when `<name>-<unit>` is not (core/grids unitObjectName).
 */
function validateProducedServiceName(obj: Record<string, unknown>, errs: FieldError[]): void {
  const meta = obj['metadata'];
  const name =
    typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)['name'] : undefined;
  if (typeof name !== 'string' || name === '') return; // metadata validation reports it
  const problems = isDNS1035Label(`${name}-svc`);
  if (problems.length > 0)
    errs.push(
      invalid(
        FieldPath.root('metadata').child('name'),
        name,
        `the Service it produces, "${name}-svc", would be an invalid Service name: ${problems.join('; ')}`,
      ),
    );
}

export function validateServiceGrid(obj: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  validateProducedServiceName(obj, errs);
  const spec = specOf(obj, errs);
  validateGridUniqKey(spec, errs);
  const template = spec.obj('template') ?? new In({}, spec.p('template'), errs);
  errs.push(...validateServiceSpec(template, template.path));
  return errs;
}

export function validateDeploymentGrid(obj: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const spec = specOf(obj, errs);
  validateGridUniqKey(spec, errs);
  const template = spec.obj('template') ?? new In({}, spec.p('template'), errs);
  errs.push(...validateDeploymentSpec(template));
  const pool = spec.obj('templatePool');
  if (pool !== undefined) {
    for (const name of Object.keys(pool.v).sort()) {
      const entry = In.at(pool.v[name], pool.path.key(name), errs);
      if (entry !== undefined) errs.push(...validateDeploymentSpec(entry));
    }
  }
  spec.strMap('templates');
  spec.str('defaultTemplateName');
  spec.bool('autoDeleteUnusedTemplate');
  return errs;
}
