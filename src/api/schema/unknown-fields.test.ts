import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../object.js';
import { schemaFor } from './index.js';
import type { Schema } from './schema.js';
import { findUnknownFields, pruneUnknownFields, pruneValue, unknownFieldMessages } from './unknown-fields.js';

const must = (group: string, kind: string): Schema => {
  const s = schemaFor(group, kind);
  assert.ok(s !== undefined, `${group}/${kind}`);
  return s;
};
const serviceSchema = must('', 'Service');

const service = (): KObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
  spec: {
    selector: { app: 'web' },
    ports: [{ name: 'http', port: 80, targetPort: 8080, bogus: true }],
    foo: 1,
  },
});

describe('findUnknownFields', () => {
  it('names unknown fields by path, in document order, as kube-apiserver does', () => {
    assert.deepEqual(findUnknownFields(service(), serviceSchema), ['spec.ports[0].bogus', 'spec.foo']);
    assert.deepEqual(unknownFieldMessages(['spec.foo']), ['unknown field "spec.foo"']);
  });

  it('checks the top level and metadata too', () => {
    const obj = { ...service(), extra: {}, metadata: { name: 'web', labelz: {} }, spec: {} };
    assert.deepEqual(findUnknownFields(obj, serviceSchema), ['metadata.labelz', 'extra']);
  });

  it('accepts any key in maps and any value type it does not check', () => {
    const obj: KObject = {
      metadata: { name: 'web', labels: { 'x/y': 'z' }, annotations: { a: 'b' } },
      spec: { selector: { anything: 'goes' }, ports: [{ port: 80, targetPort: 'http' }], clusterIP: 5 },
    };
    assert.deepEqual(findUnknownFields(obj, serviceSchema), []);
  });

  it('accepts everything below x-kubernetes-preserve-unknown-fields', () => {
    const obj = {
      apiVersion: 'superedge.io/v1',
      kind: 'ServiceGrid',
      metadata: {
        name: 'sg',
        managedFields: [
          {
            manager: 'kubectl',
            fieldsV1: { 'f:spec': { 'f:gridUniqKey': {} }, whatever: { deeply: [1, { nested: true }] } },
            fieldsType: 'FieldsV1',
          },
        ],
      },
      spec: { gridUniqKey: 'zone', template: { ports: [{ port: 80 }], nope: 1 } },
    };
    assert.deepEqual(findUnknownFields(obj, must('superedge.io', 'ServiceGrid')), ['spec.template.nope']);
  });

  it('checks the grid statuses, which are typed', () => {
    const sg = { metadata: { name: 'sg' }, status: { loadBalancer: {}, service: 'sg-svc', grids: 2 } };
    assert.deepEqual(findUnknownFields(sg, must('superedge.io', 'ServiceGrid')), ['status.grids']);
    const dg = {
      metadata: { name: 'dg' },
      status: { units: 2, readyUnits: 1, states: { 'zone-a': { replicas: 1, bogus: true } } },
    };
    assert.deepEqual(findUnknownFields(dg, must('superedge.io', 'DeploymentGrid')), [
      'status.states.zone-a.bogus',
    ]);
  });

  it('declares spec.templates of a DeploymentGrid: a map from grid to templatePool name', () => {
    const dg = {
      metadata: { name: 'dg' },
      spec: { gridUniqKey: 'zone', templates: { 'zone-a': 'arm', 'zone-b': 'big' } },
    };
    const schema = must('superedge.io', 'DeploymentGrid');
    assert.deepEqual(findUnknownFields(dg, schema), []);
    assert.deepEqual(pruneUnknownFields(dg as KObject, schema), dg);
  });

  it('addresses map entries by key', () => {
    const obj = {
      metadata: { name: 'dg' },
      spec: {
        gridUniqKey: 'zone',
        template: { selector: {}, template: {} },
        templatePool: {
          'zone-a': { replicas: 2, bogus: 1, template: { spec: { containers: [{ name: 'c', x: 1 }] } } },
        },
      },
    };
    assert.deepEqual(findUnknownFields(obj, must('superedge.io', 'DeploymentGrid')), [
      'spec.templatePool.zone-a.bogus',
      'spec.templatePool.zone-a.template.spec.containers[0].x',
    ]);
  });

  it('treats an object schema without properties as having no fields, unless it preserves them', () => {
    const schema: Schema = {
      type: 'object',
      properties: {
        empty: { type: 'object', properties: {} },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        embedded: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { spec: { type: 'object' } },
        },
      },
    };
    const obj = {
      empty: { a: 1 },
      free: { a: 1 },
      embedded: { apiVersion: 'v1', kind: 'Pod', metadata: {}, spec: {}, status: {} },
    };
    assert.deepEqual(findUnknownFields(obj, schema), ['empty.a', 'embedded.status']);
  });

  it('ignores scalars and values of the wrong shape', () => {
    assert.deepEqual(findUnknownFields('x', serviceSchema), []);
    assert.deepEqual(findUnknownFields({ metadata: {}, spec: [1, 2] }, serviceSchema), []);
    assert.deepEqual(findUnknownFields({ metadata: {}, spec: { ports: { a: 1 } } }, serviceSchema), []);
    assert.deepEqual(findUnknownFields({ metadata: null, spec: null }, serviceSchema), []);
    const wrong = { metadata: {}, spec: { ports: { a: 1 }, clusterIP: { b: 2 } } };
    assert.deepEqual(pruneValue(wrong, serviceSchema), wrong);
  });

  it('finds nothing unknown in realistic objects of every kind', () => {
    for (const [group, kind, obj] of REALISTIC)
      assert.deepEqual(findUnknownFields(obj, must(group, kind)), [], kind);
  });
});

describe('pruneUnknownFields', () => {
  it('returns a copy without the unknown fields and leaves the input alone', () => {
    const input = service();
    const before = JSON.stringify(input);
    const pruned = pruneUnknownFields(input, serviceSchema);
    assert.equal(JSON.stringify(input), before);
    assert.deepEqual(pruned, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'default', labels: { app: 'web' } },
      spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    });
    assert.notEqual(pruned.metadata, input.metadata);
    assert.deepEqual(findUnknownFields(pruned, serviceSchema), []);
  });

  it('keeps preserved subtrees whole, as copies', () => {
    const fieldsV1 = { a: { b: [1, { c: 2 }] } };
    const obj: KObject = {
      metadata: { name: 'sg', managedFields: [{ manager: 'm', fieldsV1 }] },
      spec: { gridUniqKey: 'k', zzz: 1 },
    };
    const pruned = pruneUnknownFields(obj, must('superedge.io', 'ServiceGrid'));
    assert.deepEqual(pruned, {
      metadata: { name: 'sg', managedFields: [{ manager: 'm', fieldsV1 }] },
      spec: { gridUniqKey: 'k' },
    });
    assert.notEqual(pruned.metadata.managedFields?.[0]?.fieldsV1, fieldsV1);
  });

  it('treats a "__proto__" key as data', () => {
    const obj = JSON.parse(
      '{"metadata":{"name":"x","labels":{"__proto__":"v"}},"spec":{"__proto__":{"polluted":true}}}',
    );
    const pruned = pruneUnknownFields(obj as KObject, serviceSchema);
    assert.deepEqual(Object.keys(pruned.metadata.labels ?? {}), ['__proto__']);
    assert.equal(Object.getPrototypeOf(pruned.metadata.labels), Object.prototype);
    assert.deepEqual(Object.keys(pruned['spec'] as object), []);
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  it('leaves realistic objects unchanged', () => {
    for (const [group, kind, obj] of REALISTIC)
      assert.deepEqual(pruneValue(obj, must(group, kind)), obj, kind);
  });
});

// Objects as kubectl, the kubelet, kube-proxy and the controllers write them.
const REALISTIC: ReadonlyArray<[string, string, unknown]> = [
  [
    '',
    'Service',
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'kube-dns',
        namespace: 'kube-system',
        uid: '0b9e',
        resourceVersion: '12',
        creationTimestamp: '2024-01-01T00:00:00Z',
        labels: { 'k8s-app': 'kube-dns' },
        annotations: { 'prometheus.io/port': '9153' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'x', uid: 'u', controller: true }],
        finalizers: ['service.kubernetes.io/load-balancer-cleanup'],
        managedFields: [
          {
            manager: 'kubectl',
            operation: 'Apply',
            apiVersion: 'v1',
            time: '2024-01-01T00:00:00Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:spec': { 'f:ports': { 'k:{"port":53,"protocol":"UDP"}': { '.': {} } } } },
          },
        ],
      },
      spec: {
        type: 'LoadBalancer',
        selector: { 'k8s-app': 'kube-dns' },
        clusterIP: '10.96.0.10',
        clusterIPs: ['10.96.0.10'],
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
        ports: [
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 53, nodePort: 30053 },
          { name: 'metrics', port: 9153, protocol: 'TCP', targetPort: 'metrics', appProtocol: 'http' },
        ],
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        externalIPs: ['192.0.2.1'],
        loadBalancerIP: '192.0.2.2',
        loadBalancerSourceRanges: ['0.0.0.0/0'],
        loadBalancerClass: 'example.com/lb',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 31000,
        internalTrafficPolicy: 'Cluster',
        publishNotReadyAddresses: true,
        allocateLoadBalancerNodePorts: true,
        trafficDistribution: 'PreferClose',
        topologyKeys: ['kubernetes.io/hostname', '*'],
      },
      status: {
        loadBalancer: {
          ingress: [{ ip: '192.0.2.2', ipMode: 'VIP', ports: [{ port: 53, protocol: 'UDP', error: 'x' }] }],
        },
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            lastTransitionTime: '2024-01-01T00:00:00Z',
            reason: 'R',
            message: 'm',
          },
        ],
      },
    },
  ],
  [
    '',
    'Pod',
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-1', namespace: 'default', generateName: 'web-', labels: { app: 'web' } },
      spec: {
        volumes: [
          {
            name: 'cfg',
            configMap: { name: 'cfg', items: [{ key: 'a', path: 'a.txt', mode: 420 }], defaultMode: 420 },
          },
          { name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
          { name: 'host', hostPath: { path: '/var/log', type: 'Directory' } },
          { name: 'sec', secret: { secretName: 's', optional: true } },
          { name: 'data', persistentVolumeClaim: { claimName: 'data', readOnly: false } },
          {
            name: 'kube-api-access',
            projected: {
              defaultMode: 420,
              sources: [
                { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
                { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
                {
                  downwardAPI: {
                    items: [
                      { path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } },
                    ],
                  },
                },
              ],
            },
          },
          { name: 'repo', gitRepo: { repository: 'https://example.com/r.git', revision: 'main' } },
        ],
        initContainers: [
          { name: 'init', image: 'busybox', command: ['sh', '-c', 'true'], restartPolicy: 'Always' },
        ],
        containers: [
          {
            name: 'web',
            image: 'nginx:1.27',
            imagePullPolicy: 'IfNotPresent',
            command: ['nginx'],
            args: ['-g', 'daemon off;'],
            workingDir: '/',
            ports: [{ name: 'http', containerPort: 80, protocol: 'TCP', hostPort: 8080, hostIP: '0.0.0.0' }],
            env: [
              { name: 'A', value: 'b' },
              { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
              { name: 'CPU', valueFrom: { resourceFieldRef: { resource: 'limits.cpu', divisor: '1m' } } },
              { name: 'K', valueFrom: { configMapKeyRef: { name: 'c', key: 'k', optional: true } } },
              { name: 'S', valueFrom: { secretKeyRef: { name: 's', key: 'k' } } },
            ],
            envFrom: [
              { prefix: 'X_', configMapRef: { name: 'c' } },
              { secretRef: { name: 's', optional: true } },
            ],
            resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: 0.1, memory: 1024 } },
            resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
            volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg', readOnly: true, subPath: 'a' }],
            livenessProbe: {
              httpGet: {
                path: '/healthz',
                port: 'http',
                scheme: 'HTTP',
                httpHeaders: [{ name: 'X', value: 'y' }],
              },
              initialDelaySeconds: 5,
              periodSeconds: 10,
              timeoutSeconds: 1,
              successThreshold: 1,
              failureThreshold: 3,
            },
            readinessProbe: { tcpSocket: { port: 80 } },
            startupProbe: { exec: { command: ['true'] }, terminationGracePeriodSeconds: 10 },
            lifecycle: { preStop: { sleep: { seconds: 5 } }, postStart: { exec: { command: ['true'] } } },
            securityContext: {
              runAsNonRoot: true,
              runAsUser: 1000,
              allowPrivilegeEscalation: false,
              readOnlyRootFilesystem: true,
              capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] },
              seccompProfile: { type: 'RuntimeDefault' },
            },
            terminationMessagePath: '/dev/termination-log',
            terminationMessagePolicy: 'File',
            stdin: false,
            tty: false,
          },
        ],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        dnsPolicy: 'ClusterFirst',
        dnsConfig: { nameservers: ['1.1.1.1'], searches: ['svc'], options: [{ name: 'ndots', value: '2' }] },
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        serviceAccountName: 'default',
        serviceAccount: 'default',
        automountServiceAccountToken: true,
        nodeName: 'edge-1',
        hostNetwork: false,
        hostPID: false,
        securityContext: { fsGroup: 2000, supplementalGroups: [1], sysctls: [{ name: 'net.x', value: '1' }] },
        imagePullSecrets: [{ name: 'regcred' }],
        hostname: 'web-1',
        subdomain: 'web',
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }],
            },
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 1,
                preference: { matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['x'] }] },
              },
            ],
          },
          podAntiAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 100,
                podAffinityTerm: {
                  labelSelector: { matchLabels: { app: 'web' } },
                  topologyKey: 'kubernetes.io/hostname',
                  matchLabelKeys: ['pod-template-hash'],
                },
              },
            ],
          },
        },
        schedulerName: 'default-scheduler',
        tolerations: [
          {
            key: 'node.kubernetes.io/not-ready',
            operator: 'Exists',
            effect: 'NoExecute',
            tolerationSeconds: 300,
          },
        ],
        hostAliases: [{ ip: '127.0.0.1', hostnames: ['foo.local'] }],
        priorityClassName: 'system-node-critical',
        priority: 2000001000,
        enableServiceLinks: true,
        preemptionPolicy: 'PreemptLowerPriority',
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: 'zone',
            whenUnsatisfiable: 'ScheduleAnyway',
            labelSelector: { matchLabels: {} },
          },
        ],
        readinessGates: [{ conditionType: 'example.com/ready' }],
        runtimeClassName: 'runc',
        overhead: { cpu: '10m' },
        os: { name: 'linux' },
        schedulingGates: [{ name: 'wait' }],
      },
      status: {
        phase: 'Running',
        conditions: [
          { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: '2024-01-01T00:00:00Z' },
        ],
        hostIP: '10.0.0.1',
        hostIPs: [{ ip: '10.0.0.1' }],
        podIP: '10.244.0.5',
        podIPs: [{ ip: '10.244.0.5' }],
        startTime: '2024-01-01T00:00:00Z',
        qosClass: 'Burstable',
        containerStatuses: [
          {
            name: 'web',
            state: { running: { startedAt: '2024-01-01T00:00:01Z' } },
            lastState: {
              terminated: { exitCode: 137, reason: 'OOMKilled', finishedAt: '2024-01-01T00:00:00Z' },
            },
            ready: true,
            restartCount: 1,
            image: 'nginx:1.27',
            imageID: 'docker.io/library/nginx@sha256:0',
            containerID: 'containerd://abc',
            started: true,
            volumeMounts: [
              { name: 'cfg', mountPath: '/etc/cfg', readOnly: true, recursiveReadOnly: 'Disabled' },
            ],
            user: { linux: { uid: 0, gid: 0, supplementalGroups: [0] } },
          },
        ],
        initContainerStatuses: [
          {
            name: 'init',
            state: { waiting: { reason: 'PodInitializing' } },
            ready: false,
            restartCount: 0,
            image: 'b',
            imageID: '',
          },
        ],
      },
    },
  ],
  [
    '',
    'Node',
    {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'edge-1', labels: { 'kubernetes.io/hostname': 'edge-1' } },
      spec: {
        podCIDR: '10.244.0.0/24',
        podCIDRs: ['10.244.0.0/24'],
        providerID: 'kind://docker/kind/edge-1',
        unschedulable: true,
        taints: [
          {
            key: 'node.kubernetes.io/unschedulable',
            effect: 'NoSchedule',
            timeAdded: '2024-01-01T00:00:00Z',
          },
        ],
      },
      status: {
        capacity: { cpu: '4', memory: '8Gi', pods: '110', 'ephemeral-storage': '100Gi' },
        allocatable: { cpu: '3900m', memory: '7Gi', pods: '110' },
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            lastHeartbeatTime: '2024-01-01T00:00:00Z',
            lastTransitionTime: '2024-01-01T00:00:00Z',
            reason: 'KubeletReady',
            message: 'kubelet is posting ready status',
          },
        ],
        addresses: [
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'Hostname', address: 'edge-1' },
        ],
        daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
        nodeInfo: {
          machineID: 'm',
          systemUUID: 's',
          bootID: 'b',
          kernelVersion: '6.1.0',
          osImage: 'Debian',
          containerRuntimeVersion: 'containerd://1.7.0',
          kubeletVersion: 'v1.33.0',
          kubeProxyVersion: '',
          operatingSystem: 'linux',
          architecture: 'amd64',
          swap: { capacity: 0 },
        },
        images: [{ names: ['registry.k8s.io/pause:3.10'], sizeBytes: 320368 }],
        volumesInUse: ['kubernetes.io/csi/x'],
        volumesAttached: [{ name: 'kubernetes.io/csi/x', devicePath: '' }],
        runtimeHandlers: [
          { name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: false } },
        ],
        features: { supplementalGroupsPolicy: true },
        config: { active: { configMap: { name: 'x' } } },
      },
    },
  ],
  [
    '',
    'Namespace',
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'edge', deletionTimestamp: '2024-01-01T00:00:00Z' },
      spec: { finalizers: ['kubernetes'] },
      status: {
        phase: 'Terminating',
        conditions: [
          { type: 'NamespaceDeletionDiscoveryFailure', status: 'False', reason: 'R', message: 'm' },
        ],
      },
    },
  ],
  [
    '',
    'Endpoints',
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web', namespace: 'default' },
      subsets: [
        {
          addresses: [
            {
              ip: '10.244.0.5',
              nodeName: 'edge-1',
              hostname: 'web-1',
              targetRef: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: 'u' },
            },
          ],
          notReadyAddresses: [{ ip: '10.244.0.6' }],
          ports: [{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }],
        },
      ],
    },
  ],
  [
    '',
    'Event',
    {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web.17a', namespace: 'default' },
      involvedObject: {
        kind: 'Pod',
        namespace: 'default',
        name: 'web-1',
        uid: 'u',
        apiVersion: 'v1',
        fieldPath: 'spec.containers{web}',
      },
      reason: 'Pulled',
      message: 'Container image already present',
      source: { component: 'kubelet', host: 'edge-1' },
      firstTimestamp: '2024-01-01T00:00:00Z',
      lastTimestamp: '2024-01-01T00:00:00Z',
      count: 1,
      type: 'Normal',
      eventTime: null,
      reportingComponent: 'kubelet',
      reportingInstance: 'edge-1',
      series: { count: 2, lastObservedTime: '2024-01-01T00:00:00.000000Z' },
      action: 'Pulling',
    },
  ],
  [
    'events.k8s.io',
    'Event',
    {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'web.17a', namespace: 'default' },
      eventTime: '2026-11-21T06:34:56.823Z',
      reportingController: 'svcplane.io/grid',
      reportingInstance: 'grid-1',
      action: 'Sync',
      reason: 'Synced',
      regarding: { kind: 'ServiceGrid', name: 'sg', namespace: 'default' },
      related: { kind: 'Service', name: 'sg-svc' },
      note: 'synced',
      type: 'Normal',
      series: { count: 3, lastObservedTime: '2026-11-21T06:34:56.823000Z' },
      deprecatedSource: { component: 'grid' },
      deprecatedCount: 0,
    },
  ],
  [
    'discovery.k8s.io',
    'EndpointSlice',
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: 'web-abc',
        namespace: 'default',
        generateName: 'web-',
        labels: { 'kubernetes.io/service-name': 'web', 'endpointslice.kubernetes.io/managed-by': 'x' },
        ownerReferences: [
          {
            apiVersion: 'v1',
            kind: 'Service',
            name: 'web',
            uid: 'u',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      addressType: 'IPv4',
      endpoints: [
        {
          addresses: ['10.244.0.5'],
          conditions: { ready: true, serving: true, terminating: false },
          hostname: 'web-1',
          targetRef: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: 'u' },
          nodeName: 'edge-1',
          zone: 'a',
          hints: { forZones: [{ name: 'a' }], forNodes: [{ name: 'edge-1' }] },
          deprecatedTopology: { 'kubernetes.io/hostname': 'edge-1' },
        },
      ],
      ports: [{ name: 'http', protocol: 'TCP', port: 8080, appProtocol: 'http' }],
    },
  ],
  [
    'coordination.k8s.io',
    'Lease',
    {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'edge-1', namespace: 'kube-node-lease' },
      spec: {
        holderIdentity: 'edge-1',
        leaseDurationSeconds: 40,
        acquireTime: '2024-01-01T00:00:00.000000Z',
        renewTime: '2024-01-01T00:00:10.000000Z',
        leaseTransitions: 0,
        strategy: 'OldestEmulationVersion',
        preferredHolder: 'b',
      },
    },
  ],
  [
    'apps',
    'Deployment',
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: 'coredns',
        namespace: 'kube-system',
        generation: 1,
        labels: { 'k8s-app': 'kube-dns' },
      },
      spec: {
        replicas: 2,
        selector: {
          matchLabels: { 'k8s-app': 'kube-dns' },
          matchExpressions: [{ key: 'a', operator: 'Exists' }],
        },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: '25%' } },
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600,
        minReadySeconds: 0,
        paused: false,
        template: {
          metadata: { labels: { 'k8s-app': 'kube-dns' }, creationTimestamp: null },
          spec: {
            containers: [
              {
                name: 'coredns',
                image: 'registry.k8s.io/coredns/coredns:v1.11.1',
                args: ['-conf', '/etc/coredns/Corefile'],
                ports: [
                  { containerPort: 53, name: 'dns', protocol: 'UDP' },
                  { containerPort: 53, name: 'dns-tcp', protocol: 'TCP' },
                ],
                readinessProbe: { httpGet: { path: '/ready', port: 8181, scheme: 'HTTP' } },
                securityContext: { capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] } },
              },
            ],
            priorityClassName: 'system-cluster-critical',
            tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }],
            volumes: [
              {
                name: 'config-volume',
                configMap: { name: 'coredns', items: [{ key: 'Corefile', path: 'Corefile' }] },
              },
            ],
          },
        },
      },
      status: {
        observedGeneration: 1,
        replicas: 2,
        updatedReplicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
        conditions: [
          {
            type: 'Available',
            status: 'True',
            lastUpdateTime: '2024-01-01T00:00:00Z',
            lastTransitionTime: '2024-01-01T00:00:00Z',
            reason: 'MinimumReplicasAvailable',
            message: 'Deployment has minimum availability.',
          },
        ],
      },
    },
  ],
  [
    'superedge.io',
    'ServiceGrid',
    {
      apiVersion: 'superedge.io/v1',
      kind: 'ServiceGrid',
      metadata: { name: 'echo', namespace: 'default' },
      spec: {
        gridUniqKey: 'zone',
        template: { selector: { app: 'echo' }, ports: [{ protocol: 'TCP', port: 80, targetPort: 8080 }] },
      },
      status: {
        loadBalancer: {},
        observedGeneration: 1,
        service: 'echo-svc',
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            observedGeneration: 1,
            lastTransitionTime: '2024-01-01T00:00:00Z',
            reason: 'ServiceSynced',
            message: '',
          },
        ],
      },
    },
  ],
  [
    'superedge.io',
    'DeploymentGrid',
    {
      apiVersion: 'superedge.io/v1',
      kind: 'DeploymentGrid',
      metadata: { name: 'echo', namespace: 'default' },
      spec: {
        gridUniqKey: 'zone',
        defaultTemplateName: 'default',
        autoDeleteUnusedTemplate: true,
        templates: { 'zone-b': 'arm' },
        template: {
          replicas: 2,
          selector: { matchLabels: { app: 'echo' } },
          template: {
            metadata: { labels: { app: 'echo' } },
            spec: { containers: [{ name: 'echo', image: 'echo:1', ports: [{ containerPort: 8080 }] }] },
          },
        },
        templatePool: {
          arm: {
            replicas: 1,
            selector: { matchLabels: { app: 'echo' } },
            template: { spec: { containers: [{ name: 'echo', image: 'echo:1-arm' }] } },
          },
        },
      },
      status: {
        observedGeneration: 1,
        units: 2,
        readyUnits: 1,
        states: { 'zone-a': { replicas: 2, readyReplicas: 2 }, 'zone-b': { replicas: 1 } },
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            lastTransitionTime: '2024-01-01T00:00:00Z',
            reason: 'UnitsNotReady',
            message: '1 of 2 units ready',
          },
        ],
      },
    },
  ],
];
