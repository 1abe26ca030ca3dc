// superedge.io/v1 ServiceGrid and DeploymentGrid: SuperEdge's custom resources that stamp out one
// Service or Deployment per node group, keyed by a node label (gridUniqKey).
import { always, bool, field, int32, int64, mapOf, named, str, strMap } from './build.js';
import { deploymentSpec, deploymentStatus } from './apps.js';
import { loadBalancerStatus, serviceSpec } from './core.js';
import { condition, conditions, kindSchema } from './meta.js';
import type { Schema } from './schema.js';

const SUPEREDGE = 'io.superedge.v1';

const gridUniqKey = str(
  'Node label key whose values name the node groups; one copy of the template is made per value.',
);

export const serviceGrid: Schema = kindSchema(
  `${SUPEREDGE}.ServiceGrid`,
  'A ServiceGrid declares a Service whose traffic stays within each node group (grid) of the cluster.',
  {
    // SuperEdge's Go types: spec, spec.template and status are struct values (always written).
    spec: always(
      named(
        `${SUPEREDGE}.ServiceGridSpec`,
        {
          gridUniqKey,
          template: always(field(serviceSpec, 'Specification of the service created for the grid.')),
        },
        { description: 'Desired state of the service grid.' },
      ),
    ),
    // SuperEdge's ServiceGridStatus is core/v1 ServiceStatus (a struct value, so `{loadBalancer: {}}` at
    // least); svcplane adds observedGeneration and the name of the Service it made, both omitempty.
    status: always(
      named(
        `${SUPEREDGE}.ServiceGridStatus`,
        {
          loadBalancer: always(
            field(loadBalancerStatus, 'State of the load balancer of the generated service, if any.'),
          ),
          conditions: conditions(condition, 'Current conditions of the service grid.'),
          observedGeneration: int64('The metadata.generation this status was computed from.'),
          service: str('Name of the Service made from the grid: `<name>-svc`.'),
        },
        { description: 'Most recently observed state of the service grid.' },
      ),
    ),
  },
);

export const deploymentGrid: Schema = kindSchema(
  `${SUPEREDGE}.DeploymentGrid`,
  'A DeploymentGrid declares a Deployment that is created once in every node group (grid) of the cluster.',
  {
    spec: always(
      named(
        `${SUPEREDGE}.DeploymentGridSpec`,
        {
          gridUniqKey,
          template: always(field(deploymentSpec, 'Specification of the deployment created in each grid.')),
          templatePool: mapOf(deploymentSpec, 'Named alternative templates that individual grids may use.'),
          templates: strMap(
            'Which templatePool entry each grid uses, by grid (node label value); grids not named here use ' +
              'defaultTemplateName.',
          ),
          defaultTemplateName: str(
            'Template from templatePool used for grids that name none; `default` means template.',
          ),
          autoDeleteUnusedTemplate: bool(
            'Whether templates no grid uses any more are removed from templatePool.',
          ),
        },
        { description: 'Desired state of the deployment grid.' },
      ),
    ),
    // SuperEdge's DeploymentGridStatusList is a struct value holding `states` (omitempty), so `{}` at
    // least; svcplane adds the conditions and counts, all omitempty.
    status: always(
      named(
        `${SUPEREDGE}.DeploymentGridStatus`,
        {
          states: mapOf(
            deploymentStatus,
            'Status of the deployment in each grid, by grid (node label value).',
          ),
          conditions: conditions(condition, 'Current conditions of the deployment grid.'),
          observedGeneration: int64('The metadata.generation this status was computed from.'),
          units: int32('Number of grids (node label values) a deployment is kept in.'),
          readyUnits: int32(
            'Grids whose deployment has observed its spec and has all the replicas it asks for ready.',
          ),
        },
        { description: 'Most recently observed state of the deployment grid.' },
      ),
    ),
  },
);
