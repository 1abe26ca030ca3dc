// k8s.io/api/apps/v1 Deployment (field numbers from its generated.proto).
import { message } from '../decode.js';
import { podTemplateSpec } from './core.js';
import { labelSelector, objectMeta } from './meta.js';

const APPS = 'k8s.io.api.apps.v1';

const rollingUpdateDeployment = message(`${APPS}.RollingUpdateDeployment`, {
  1: ['maxUnavailable', 'intOrString'],
  2: ['maxSurge', 'intOrString'],
});

const deploymentStrategy = message(`${APPS}.DeploymentStrategy`, {
  1: ['type', 'string'],
  2: ['rollingUpdate', rollingUpdateDeployment],
});

const deploymentSpec = message(`${APPS}.DeploymentSpec`, {
  1: ['replicas', 'int32', 'keep'],
  2: ['selector', labelSelector],
  3: ['template', podTemplateSpec],
  4: ['strategy', deploymentStrategy],
  5: ['minReadySeconds', 'int32'],
  6: ['revisionHistoryLimit', 'int32', 'keep'],
  7: ['paused', 'bool'],
  9: ['progressDeadlineSeconds', 'int32', 'keep'],
  10: ['podReplacementPolicy', 'string', 'keep'],
});

const deploymentCondition = message(`${APPS}.DeploymentCondition`, {
  1: ['type', 'string', 'keep'],
  2: ['status', 'string', 'keep'],
  6: ['lastUpdateTime', 'time'],
  7: ['lastTransitionTime', 'time'],
  4: ['reason', 'string'],
  5: ['message', 'string'],
});

const deploymentStatus = message(`${APPS}.DeploymentStatus`, {
  1: ['observedGeneration', 'int64'],
  2: ['replicas', 'int32'],
  3: ['updatedReplicas', 'int32'],
  7: ['readyReplicas', 'int32'],
  4: ['availableReplicas', 'int32'],
  5: ['unavailableReplicas', 'int32'],
  9: ['terminatingReplicas', 'int32', 'keep'],
  6: ['conditions', deploymentCondition, 'repeated'],
  8: ['collisionCount', 'int32', 'keep'],
});

export const deployment = message(`${APPS}.Deployment`, {
  1: ['metadata', objectMeta],
  2: ['spec', deploymentSpec],
  3: ['status', deploymentStatus],
});
