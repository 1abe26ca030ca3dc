// Small hand-written schemas for the apply tests: the shapes of a Service and a Deployment that
// server-side apply cares about, nothing more.
import type { Schema } from '../../../api/schema/schema.js';

const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };
const strMap: Schema = { type: 'object', additionalProperties: str };

export const metadata: Schema = {
  type: 'object',
  properties: {
    name: str,
    generateName: str,
    namespace: str,
    uid: str,
    resourceVersion: str,
    generation: int,
    creationTimestamp: str,
    deletionTimestamp: str,
    labels: strMap,
    annotations: strMap,
    finalizers: { type: 'array', items: str, 'x-kubernetes-list-type': 'set' },
    ownerReferences: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['uid'],
      items: {
        type: 'object',
        properties: { apiVersion: str, kind: str, name: str, uid: str, controller: { type: 'boolean' } },
        'x-kubernetes-map-type': 'atomic',
      },
    },
    managedFields: { type: 'array', items: { type: 'object' }, 'x-kubernetes-list-type': 'atomic' },
  },
};

export const serviceSchema: Schema = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata,
    spec: {
      type: 'object',
      properties: {
        selector: { type: 'object', additionalProperties: str, 'x-kubernetes-map-type': 'atomic' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['port', 'protocol'],
          items: {
            type: 'object',
            properties: {
              name: str,
              port: int,
              protocol: { type: 'string', default: 'TCP' },
              targetPort: { 'x-kubernetes-int-or-string': true },
              nodePort: int,
            },
          },
        },
        type: str,
        clusterIP: str,
        clusterIPs: { type: 'array', items: str, 'x-kubernetes-list-type': 'atomic' },
        externalIPs: { type: 'array', items: str, 'x-kubernetes-list-type': 'set' },
        sessionAffinityConfig: {
          type: 'object',
          properties: { clientIP: { type: 'object', properties: { timeoutSeconds: int } } },
        },
      },
    },
    status: {
      type: 'object',
      properties: {
        loadBalancer: {
          type: 'object',
          properties: {
            ingress: {
              type: 'array',
              'x-kubernetes-list-type': 'atomic',
              items: { type: 'object', properties: { ip: str, hostname: str } },
            },
          },
        },
      },
    },
  },
};

const container: Schema = {
  type: 'object',
  properties: {
    name: str,
    image: str,
    args: { type: 'array', items: str, 'x-kubernetes-list-type': 'atomic' },
    env: {
      type: 'array',
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
      items: { type: 'object', properties: { name: str, value: str } },
    },
    resources: {
      type: 'object',
      properties: {
        limits: { type: 'object', additionalProperties: { 'x-kubernetes-int-or-string': true } },
      },
    },
  },
};

export const deploymentSchema: Schema = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata,
    spec: {
      type: 'object',
      properties: {
        replicas: int,
        paused: { type: 'boolean' },
        selector: {
          type: 'object',
          properties: { matchLabels: strMap },
          'x-kubernetes-map-type': 'atomic',
        },
        strategy: {
          type: 'object',
          properties: {
            type: str,
            rollingUpdate: {
              type: 'object',
              properties: {
                maxSurge: { 'x-kubernetes-int-or-string': true },
                maxUnavailable: { 'x-kubernetes-int-or-string': true },
              },
            },
          },
        },
        template: {
          type: 'object',
          properties: {
            metadata,
            spec: {
              type: 'object',
              properties: {
                // No list type: the strategic-merge-patch hints make it a list of type map.
                containers: {
                  type: 'array',
                  items: container,
                  'x-kubernetes-patch-strategy': 'merge',
                  'x-kubernetes-patch-merge-key': 'name',
                },
                volumes: {
                  type: 'array',
                  'x-kubernetes-list-type': 'map',
                  'x-kubernetes-list-map-keys': ['name'],
                  items: {
                    type: 'object',
                    properties: {
                      name: str,
                      emptyDir: { type: 'object', properties: { medium: str } },
                      hostPath: { type: 'object', properties: { path: str } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
    status: {
      type: 'object',
      properties: { replicas: int, readyReplicas: int, observedGeneration: int },
    },
  },
};

/** A custom resource that keeps whatever it is sent below spec. */
export const freeFormSchema: Schema = {
  type: 'object',
  properties: {
    apiVersion: str,
    kind: str,
    metadata,
    spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
};
