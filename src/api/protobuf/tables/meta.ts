// k8s.io/apimachinery/pkg/apis/meta/v1 messages (field numbers from its generated.proto).
import { message } from '../decode.js';

const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';

export const ownerReference = message(`${META}.OwnerReference`, {
  5: ['apiVersion', 'string', 'keep'],
  1: ['kind', 'string', 'keep'],
  3: ['name', 'string', 'keep'],
  4: ['uid', 'string', 'keep'],
  6: ['controller', 'bool', 'keep'],
  7: ['blockOwnerDeletion', 'bool', 'keep'],
});

export const managedFieldsEntry = message(`${META}.ManagedFieldsEntry`, {
  1: ['manager', 'string'],
  2: ['operation', 'string'],
  3: ['apiVersion', 'string'],
  4: ['time', 'time'],
  6: ['fieldsType', 'string'],
  7: ['fieldsV1', 'fieldsV1'],
  8: ['subresource', 'string'],
});

export const objectMeta = message(`${META}.ObjectMeta`, {
  1: ['name', 'string'],
  2: ['generateName', 'string'],
  3: ['namespace', 'string'],
  4: ['selfLink', 'string'],
  5: ['uid', 'string'],
  6: ['resourceVersion', 'string'],
  7: ['generation', 'int64'],
  8: ['creationTimestamp', 'time'],
  9: ['deletionTimestamp', 'time'],
  10: ['deletionGracePeriodSeconds', 'int64', 'keep'],
  11: ['labels', 'string', 'map'],
  12: ['annotations', 'string', 'map'],
  13: ['ownerReferences', ownerReference, 'repeated'],
  14: ['finalizers', 'string', 'repeated'],
  17: ['managedFields', managedFieldsEntry, 'repeated'],
});

export const labelSelectorRequirement = message(`${META}.LabelSelectorRequirement`, {
  1: ['key', 'string', 'keep'],
  2: ['operator', 'string', 'keep'],
  3: ['values', 'string', 'repeated'],
});

export const labelSelector = message(`${META}.LabelSelector`, {
  1: ['matchLabels', 'string', 'map'],
  2: ['matchExpressions', labelSelectorRequirement, 'repeated'],
});

export const condition = message(`${META}.Condition`, {
  1: ['type', 'string', 'keep'],
  2: ['status', 'string', 'keep'],
  3: ['observedGeneration', 'int64'],
  4: ['lastTransitionTime', 'time'],
  5: ['reason', 'string', 'keep'],
  6: ['message', 'string', 'keep'],
});

export const preconditions = message(`${META}.Preconditions`, {
  1: ['uid', 'string', 'keep'],
  2: ['resourceVersion', 'string', 'keep'],
});

/** DeleteOptions: every scalar is a pointer in Go, so a zero sent is a zero meant (gracePeriodSeconds 0). */
export const deleteOptions = message(`${META}.DeleteOptions`, {
  1: ['gracePeriodSeconds', 'int64', 'keep'],
  2: ['preconditions', preconditions],
  3: ['orphanDependents', 'bool', 'keep'],
  4: ['propagationPolicy', 'string', 'keep'],
  5: ['dryRun', 'string', 'repeated'],
  6: ['ignoreStoreReadErrorWithClusterBreakingPotential', 'bool', 'keep'],
});
