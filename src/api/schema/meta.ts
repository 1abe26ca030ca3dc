// The shared apimachinery types: object and list metadata, owner references, label selectors,
// conditions, and the envelope (apiVersion, kind, metadata) every kind starts from.
import {
  atomicList,
  atomicStrings,
  bool,
  field,
  free,
  int64,
  keyedList,
  named,
  setList,
  str,
  strMap,
  time,
  always,
} from './build.js';
import type { Schema } from './schema.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

export const ownerReference: Schema = named(
  `${META}.OwnerReference`,
  {
    apiVersion: str('API version of the owning object.'),
    kind: str('Kind of the owning object, in CamelCase.'),
    name: str('Name of the owning object.'),
    uid: str('UID of the owning object; the reference only holds while this UID matches.'),
    controller: bool(
      'True when the owner is the controller that manages this object. At most one owner may be.',
    ),
    blockOwnerDeletion: bool(
      'When true, foreground deletion of the owner waits until this object has been deleted.',
    ),
  },
  { required: ['apiVersion', 'kind', 'name', 'uid'], 'x-kubernetes-map-type': 'atomic' },
);

export const managedFieldsEntry: Schema = named(`${META}.ManagedFieldsEntry`, {
  manager: str('Name of the workflow (field manager) that owns these fields.'),
  operation: str('How the fields were last written: Apply or Update.'),
  apiVersion: str('API version the field set is expressed in.'),
  time: time('When the entry last changed: a field was added, or an owned value changed.'),
  fieldsType: str('Format of the field set; always FieldsV1.'),
  fieldsV1: free('The set of owned fields, as a trie of `f:`, `k:`, `v:` and `i:` keys.', {
    name: `${META}.FieldsV1`,
  }),
  subresource: str('Subresource the fields were written through, empty for the main resource.'),
});

export const objectMeta: Schema = named(`${META}.ObjectMeta`, {
  name: str('Unique name within the namespace (or cluster, for cluster-scoped kinds). Cannot be updated.'),
  generateName: str(
    'Prefix the server uses to make up a unique name when `name` is empty; a random suffix is appended.',
  ),
  namespace: str('Namespace the object lives in. Empty for cluster-scoped kinds. Cannot be updated.'),
  selfLink: str('Deprecated and never set by the server.'),
  uid: str('Server-assigned identifier, unique in time and space. Read-only.'),
  resourceVersion: str(
    'Opaque version of this object, changed on every write; used for optimistic concurrency and watches.',
  ),
  generation: int64('Sequence number of the desired state, raised by the server when the spec changes.'),
  // A zero metav1.Time prints as null (1.30–1.33): `template.metadata.creationTimestamp: null`.
  creationTimestamp: always(time('When the server created the object. Read-only.')),
  deletionTimestamp: time(
    'When the object will be removed. Set by the server when deletion is requested and finalizers remain.',
  ),
  deletionGracePeriodSeconds: int64('Seconds the object is allowed to terminate gracefully. Read-only.'),
  labels: strMap('Key/value pairs used to organise and select objects.'),
  annotations: strMap('Arbitrary non-identifying key/value data kept alongside the object.'),
  ownerReferences: keyedList(
    ownerReference,
    ['uid'],
    'Objects this one depends on; it is garbage-collected once all of its owners are gone.',
  ),
  finalizers: setList(
    { type: 'string' },
    'Keys that must all be removed before the object is deleted from storage.',
    { 'x-kubernetes-patch-strategy': 'merge' },
  ),
  managedFields: atomicList(managedFieldsEntry, 'Which field manager owns which fields (server-side apply).'),
});

export const listMeta: Schema = named(`${META}.ListMeta`, {
  selfLink: str('Deprecated and never set by the server.'),
  resourceVersion: str('Version of the collection at the time of the list; start a watch from here.'),
  continue: str('Token for the next page when the list was cut short by `limit`.'),
  remainingItemCount: int64('Approximate number of items after this page.'),
});

export const labelSelectorRequirement: Schema = named(
  `${META}.LabelSelectorRequirement`,
  {
    key: str('Label key the requirement applies to.'),
    operator: str('One of In, NotIn, Exists and DoesNotExist.'),
    values: atomicStrings('Values for In and NotIn; must be empty for Exists and DoesNotExist.'),
  },
  { required: ['key', 'operator'] },
);

export const labelSelector: Schema = named(
  `${META}.LabelSelector`,
  {
    matchLabels: strMap('Labels that must all be present with exactly these values.'),
    matchExpressions: atomicList(labelSelectorRequirement, 'Further requirements, all of which must hold.'),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);

export const condition: Schema = named(
  `${META}.Condition`,
  {
    type: str('Kind of condition, in CamelCase.'),
    status: str('True, False or Unknown.'),
    observedGeneration: int64('The metadata.generation the condition was computed from.'),
    lastTransitionTime: time('When the status last changed.'),
    reason: str('CamelCase reason for the last transition.'),
    message: str('Human-readable detail about the transition.'),
  },
  { required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] },
);

/** `conditions` as most kinds declare it: merged by type. */
export const conditions = (item: Schema, description: string): Schema =>
  keyedList(item, ['type'], description);

export const apiVersionField = str(
  'Versioned schema of this representation, as `group/version` (just `v1` for the core group).',
);
export const kindField = str('Kind of object this is, in CamelCase; implied by the endpoint it is sent to.');

/** apiVersion, kind and metadata: the fields every kind starts with. */
export const envelope = (): Record<string, Schema> => ({
  apiVersion: apiVersionField,
  kind: kindField,
  metadata: field(objectMeta, 'Standard object metadata: name, namespace, labels, annotations and so on.'),
});

/** A top-level kind. */
export const kindSchema = (name: string, description: string, fields: Record<string, Schema>): Schema =>
  named(name, { ...envelope(), ...fields }, { description });

/** The `<Kind>List` schema for a kind. */
export const listSchema = (name: string, kind: string, item: Schema): Schema =>
  named(
    name,
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: field(listMeta, 'Standard list metadata.'),
      items: { type: 'array', items: item, description: `The ${kind} objects.` },
    },
    { description: `A list of ${kind} objects.`, required: ['items'] },
  );

// Request and response bodies the OpenAPI documents refer to.

export const statusCause: Schema = named(`${META}.StatusCause`, {
  reason: str('Machine-readable cause.'),
  message: str('Human-readable description of the cause.'),
  field: str('Path of the field at fault, such as `spec.ports[0].port`.'),
});

export const status: Schema = named(
  `${META}.Status`,
  {
    apiVersion: apiVersionField,
    kind: kindField,
    metadata: field(listMeta, 'Standard list metadata.'),
    status: str('Success or Failure.'),
    message: str('Human-readable description of the outcome.'),
    reason: str('Machine-readable reason for a failure.'),
    details: named(`${META}.StatusDetails`, {
      name: str('Name of the resource concerned.'),
      group: str('API group of the resource concerned.'),
      kind: str('Kind (or resource) concerned.'),
      uid: str('UID of the resource concerned.'),
      causes: atomicList(statusCause, 'Individual causes of the failure.'),
      retryAfterSeconds: {
        type: 'integer',
        format: 'int32',
        description: 'Seconds to wait before retrying.',
      },
    }),
    code: { type: 'integer', format: 'int32', description: 'HTTP status code.' },
  },
  { description: 'The outcome of an operation that does not return an object.' },
);

export const deleteOptions: Schema = named(
  `${META}.DeleteOptions`,
  {
    apiVersion: apiVersionField,
    kind: kindField,
    gracePeriodSeconds: int64('Seconds before the object is deleted; 0 deletes immediately.'),
    preconditions: named(`${META}.Preconditions`, {
      uid: str('The object is deleted only if its UID matches.'),
      resourceVersion: str('The object is deleted only if its resourceVersion matches.'),
    }),
    orphanDependents: bool('Deprecated: use propagationPolicy.'),
    propagationPolicy: str('Orphan, Background or Foreground garbage collection of dependents.'),
    dryRun: atomicStrings('When set to All, the deletion is checked but not persisted.'),
    ignoreStoreReadErrorWithClusterBreakingPotential: bool(
      'Delete even when the stored object cannot be read. Dangerous.',
    ),
  },
  { description: 'Options for a DELETE request.' },
);

export const patchBody: Schema = {
  name: `${META}.Patch`,
  type: 'object',
  description: 'A patch document; its format is given by the Content-Type of the request.',
};
