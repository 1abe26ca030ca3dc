// The kinds of subresources served beside the resources: autoscaling/v1 Scale (deployments/scale,
// replicasets/scale), core/v1 Binding (pods/binding) and authentication/v1 TokenRequest
// (serviceaccounts/token). They are not stored; their schemas serve
// the OpenAPI documents and the zero values of responses.
import { always, atomicStrings, field, int32, int64, named, str, time } from './build.js';
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

const AUTHN = 'io.k8s.api.authentication.v1';

export const tokenRequest: Schema = kindSchema(
  `${AUTHN}.TokenRequest`,
  'TokenRequest asks for a token of a ServiceAccount, for the given audiences and lifetime.',
  {
    spec: always(
      field(
        named(
          `${AUTHN}.TokenRequestSpec`,
          {
            audiences: always(atomicStrings('Who the token is for; default: the API server itself.')),
            expirationSeconds: int64('Requested lifetime in seconds; at least 600, default 3600.'),
            boundObjectRef: field(
              named(`${AUTHN}.BoundObjectReference`, {
                kind: str('Kind of the referent: Pod, Node or Secret.'),
                apiVersion: str('API version of the referent.'),
                name: str('Name of the referent.'),
                uid: str('UID of the referent.'),
              }),
              'An object the token is bound to: the token stops being valid when it is deleted.',
            ),
          },
          { required: ['audiences'] },
        ),
        'What is asked for.',
      ),
    ),
    status: always(
      field(
        named(
          `${AUTHN}.TokenRequestStatus`,
          {
            token: always(str('The token.')),
            expirationTimestamp: always(time('When the token expires.')),
          },
          { required: ['token', 'expirationTimestamp'] },
        ),
        'What was issued. Read-only.',
      ),
    ),
  },
);
