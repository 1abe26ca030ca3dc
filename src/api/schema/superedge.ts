// superedge.io/v1 ServiceGrid and DeploymentGrid: SuperEdge's custom resources that stamp out one
// Service or Deployment per node group, keyed by a node label (gridUniqKey).
import { always, bool, field, free, mapOf, named, str } from './build.js';
import { deploymentSpec } from './apps.js';
import { loadBalancerStatus, serviceSpec } from './core.js';
import { kindSchema } from './meta.js';
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
    // SuperEdge's ServiceGridStatus is core/v1 ServiceStatus: `{loadBalancer: {}}` at least.
    status: always({
      ...free('Most recently observed state of the service grid.'),
      properties: { loadBalancer: always(field(loadBalancerStatus, 'State of the load balancer, if any.')) },
    }),
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
    status: always(free('Most recently observed state of the deployment grid.')),
  },
);
