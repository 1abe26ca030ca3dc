// The kinds of subresources served beside the resources: autoscaling/v1 Scale (deployments/scale,
// replicasets/scale) and core/v1 Binding (pods/binding). They are not stored; their schemas serve
// the OpenAPI documents and the zero values of responses.
import { always, field, int32, named, str } from './build.js';
import { objectReference } from './core.js';
import { kindSchema } from './meta.js';
import type { Schema } from './schema.js';

export const scale: Schema = kindSchema(
  'io.k8s.api.autoscaling.v1.Scale',
  'Scale represents a scaling request for a resource.',
  {
    spec: always(
      field(
        named('io.k8s.api.autoscaling.v1.ScaleSpec', {
          replicas: int32('Desired number of instances for the scaled object.'),
        }),
        'Desired state of the object.',
      ),
    ),
    status: always(
      field(
        named(
          'io.k8s.api.autoscaling.v1.ScaleStatus',
          {
            replicas: always(int32('Actual number of observed instances of the scaled object.')),
            selector: str('Label query over the pods, in the string form of a label selector.'),
          },
          { required: ['replicas'] },
        ),
        'Current status of the object. Read-only.',
      ),
    ),
  },
);

export const binding: Schema = named(
  'io.k8s.api.core.v1.Binding',
  {
    ...(kindSchema('io.k8s.api.core.v1.Binding', '', {}).properties ?? {}),
    target: always(field(objectReference, 'The object to bind to: a Node.')),
  },
  {
    description: 'Binding ties one object to another, for example a pod to a node by a scheduler.',
    required: ['target'],
  },
);
