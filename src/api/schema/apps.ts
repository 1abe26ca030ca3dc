// apps/v1 Deployment: replicated pods rolled out through ReplicaSets.
import { bool, enumOf, field, int32, int64, intOrString, named, str, time, always } from './build.js';
import { podTemplateSpec } from './core.js';
import { conditions, kindSchema, labelSelector } from './meta.js';
import type { Schema } from './schema.js';

const APPS = 'io.k8s.api.apps.v1';

const deploymentStrategy: Schema = named(`${APPS}.DeploymentStrategy`, {
  type: enumOf(['Recreate', 'RollingUpdate'], 'Recreate or RollingUpdate (the default).'),
  rollingUpdate: named(
    `${APPS}.RollingUpdateDeployment`,
    {
      maxUnavailable: intOrString(
        'Pods that may be unavailable during the update: a number or a percentage.',
      ),
      maxSurge: intOrString('Pods that may be created above the desired count: a number or a percentage.'),
    },
    { description: 'Parameters of a rolling update.' },
  ),
});

export const deploymentSpec: Schema = named(
  `${APPS}.DeploymentSpec`,
  {
    replicas: int32('Desired number of pods. Defaults to 1.'),
    selector: field(
      labelSelector,
      'Label query over the pods the deployment manages; must match the template.',
    ),
    template: always(field(podTemplateSpec, 'Template of the pods the deployment creates.')),
    strategy: field(deploymentStrategy, 'How old pods are replaced by new ones.', {
      'x-kubernetes-patch-strategy': 'retainKeys',
    }),
    minReadySeconds: int32('Seconds a new pod must be ready before it counts as available.'),
    revisionHistoryLimit: int32('Old ReplicaSets to keep for rollback. Defaults to 10.'),
    paused: bool('Whether the deployment is paused.'),
    progressDeadlineSeconds: int32('Seconds before a rollout without progress is reported as failed.'),
  },
  { required: ['selector', 'template'] },
);

export const deploymentStatus: Schema = named(`${APPS}.DeploymentStatus`, {
  observedGeneration: int64('The metadata.generation this status was computed from.'),
  replicas: int32('Pods targeted by the deployment.'),
  updatedReplicas: int32('Pods that have the desired template.'),
  readyReplicas: int32('Pods that are ready.'),
  availableReplicas: int32('Pods that have been ready for at least minReadySeconds.'),
  unavailableReplicas: int32('Pods still needed for the deployment to be fully available.'),
  terminatingReplicas: int32('Pods that are terminating.'),
  conditions: conditions(
    named(
      `${APPS}.DeploymentCondition`,
      {
        type: str('Available, Progressing or ReplicaFailure.'),
        status: str('True, False or Unknown.'),
        lastUpdateTime: time('When the condition was last updated.'),
        lastTransitionTime: time('When the status last changed.'),
        reason: str('CamelCase reason for the last transition.'),
        message: str('Human-readable detail.'),
      },
      { required: ['type', 'status'] },
    ),
    'Latest observations of the deployment state.',
  ),
  collisionCount: int32('Counter used to avoid name collisions of new ReplicaSets.'),
});

export const deployment: Schema = kindSchema(
  `${APPS}.Deployment`,
  'A Deployment keeps a number of identical pods running and rolls out changes to them.',
  {
    spec: always(field(deploymentSpec, 'Desired behaviour of the deployment.')),
    status: always(field(deploymentStatus, 'Most recently observed state of the deployment.')),
  },
);

export const replicaSetSpec: Schema = named(
  `${APPS}.ReplicaSetSpec`,
  {
    replicas: int32('Desired number of pods. Defaults to 1.'),
    minReadySeconds: int32('Seconds a new pod must be ready before it counts as available.'),
    selector: field(
      labelSelector,
      'Label query over the pods the replica set manages; must match the template.',
    ),
    template: always(field(podTemplateSpec, 'Template of the pods created when too few exist.')),
  },
  { required: ['selector'] },
);

export const replicaSetStatus: Schema = named(
  `${APPS}.ReplicaSetStatus`,
  {
    replicas: always(int32('Most recently observed number of pods.')),
    fullyLabeledReplicas: int32('Pods whose labels match the labels of the pod template.'),
    readyReplicas: int32('Pods that are ready.'),
    availableReplicas: int32('Pods that have been ready for at least minReadySeconds.'),
    terminatingReplicas: int32('Pods that are terminating.'),
    observedGeneration: int64('The metadata.generation this status was computed from.'),
    conditions: conditions(
      named(
        `${APPS}.ReplicaSetCondition`,
        {
          type: str('Type of the condition, such as ReplicaFailure.'),
          status: str('True, False or Unknown.'),
          lastTransitionTime: time('When the status last changed.'),
          reason: str('CamelCase reason for the last transition.'),
          message: str('Human-readable detail.'),
        },
        { required: ['type', 'status'] },
      ),
      'Latest observations of the replica set state.',
    ),
  },
  { required: ['replicas'] },
);

export const replicaSet: Schema = kindSchema(
  `${APPS}.ReplicaSet`,
  'A ReplicaSet keeps a given number of pods from one template running.',
  {
    spec: always(field(replicaSetSpec, 'Desired behaviour of the replica set.')),
    status: always(field(replicaSetStatus, 'Most recently observed state of the replica set.')),
  },
);
