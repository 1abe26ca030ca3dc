import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTime, base64 } from './decode.js';
import {
  ProtobufError,
  decodeProtobufDeleteOptions,
  decodeProtobufObject,
  hasProtobufTable,
  type ProtobufErrorReason,
} from './index.js';
import { enc, envelope, intOrString, objectMeta, quantity, timestamp, type Enc } from './testing/encode.js';

const CORE = { group: '', version: 'v1' };
const decode = (apiVersion: string, kind: string, raw: Enc, expected = { ...CORE, kind }): unknown =>
  decodeProtobufObject(envelope(apiVersion, kind, raw), expected);

const fails = (reason: ProtobufErrorReason, fn: () => unknown, message?: RegExp): void =>
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ProtobufError, String(err));
    assert.equal(err.reason, reason, err.message);
    if (message !== undefined) assert.match(err.message, message);
    return true;
  });

/** A Service as kubectl 1.33's `create service clusterip web --tcp=80:8080` builds it. */
const kubectlService = (): Enc =>
  enc()
    .message(
      1,
      objectMeta('web', 'x', (m) => m.entry(11, 'app', 'web')),
    )
    .message(
      2,
      enc()
        .message(
          1,
          enc()
            .string(1, '80-8080')
            .string(2, 'TCP')
            .varint(3, 80)
            .message(4, intOrString(8080))
            .varint(5, 0),
        )
        .entry(2, 'app', 'web')
        .string(3, '')
        .string(4, 'ClusterIP')
        .string(7, '')
        .string(8, '')
        .string(10, '')
        .string(11, '')
        .varint(12, 0)
        .varint(13, false),
    )
    .message(3, enc().message(1, enc()));

describe('decodeProtobufObject', () => {
  it('decodes a Namespace, dropping the empty fields Go writes', () => {
    const raw = enc().message(1, objectMeta('x')).message(2, enc()).message(3, enc().string(1, ''));
    assert.deepEqual(decode('v1', 'Namespace', raw), {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'x' },
      spec: {},
      status: {},
    });
  });

  it('decodes the Service kubectl create service sends', () => {
    assert.deepEqual(decode('v1', 'Service', kubectlService()), {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'web', namespace: 'x', labels: { app: 'web' } },
      spec: {
        ports: [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 }],
        selector: { app: 'web' },
        type: 'ClusterIP',
      },
      status: { loadBalancer: {} },
    });
  });

  it('decodes every ServiceSpec field, keeping explicit pointer values', () => {
    const spec = enc()
      .message(1, enc().string(1, 'dns').string(2, 'UDP').varint(3, 53).message(4, intOrString('dns')))
      .message(1, enc().varint(3, 443).message(4, intOrString(0)).varint(5, 30443).string(6, 'https'))
      .string(3, '10.0.0.10')
      .string(18, '10.0.0.10')
      .string(18, 'fd00::10')
      .string(4, 'LoadBalancer')
      .string(5, '192.0.2.1')
      .string(7, 'ClientIP')
      .message(14, enc().message(1, enc().varint(1, 300)))
      .string(8, '192.0.2.9')
      .string(9, '10.0.0.0/8')
      .string(10, '')
      .string(11, 'Local')
      .varint(12, 31000)
      .varint(13, true)
      .string(19, 'IPv4')
      .string(19, 'IPv6')
      .string(17, 'PreferDualStack')
      .varint(20, false)
      .string(21, 'example.com/lb')
      .string(22, 'Local')
      .string(23, 'PreferClose');
    const status = enc().message(
      1,
      enc().message(
        1,
        enc()
          .string(1, '192.0.2.50')
          .string(2, '')
          .string(3, 'VIP')
          .message(4, enc().varint(1, 443).string(2, 'TCP')),
      ),
    );
    const out = decode(
      'v1',
      'Service',
      enc().message(1, objectMeta('lb')).message(2, spec).message(3, status),
    );
    assert.deepEqual(out, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'lb' },
      spec: {
        ports: [
          { name: 'dns', protocol: 'UDP', port: 53, targetPort: 'dns' },
          { port: 443, targetPort: 0, nodePort: 30443, appProtocol: 'https' },
        ],
        clusterIP: '10.0.0.10',
        clusterIPs: ['10.0.0.10', 'fd00::10'],
        type: 'LoadBalancer',
        externalIPs: ['192.0.2.1'],
        sessionAffinity: 'ClientIP',
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 300 } },
        loadBalancerIP: '192.0.2.9',
        loadBalancerSourceRanges: ['10.0.0.0/8'],
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 31000,
        publishNotReadyAddresses: true,
        ipFamilies: ['IPv4', 'IPv6'],
        ipFamilyPolicy: 'PreferDualStack',
        allocateLoadBalancerNodePorts: false,
        loadBalancerClass: 'example.com/lb',
        internalTrafficPolicy: 'Local',
        trafficDistribution: 'PreferClose',
      },
      status: {
        loadBalancer: {
          ingress: [{ ip: '192.0.2.50', ipMode: 'VIP', ports: [{ port: 443, protocol: 'TCP' }] }],
        },
      },
    });
  });

  it('decodes a Deployment with its pod template', () => {
    const container = enc()
      .string(1, 'nginx')
      .string(2, 'nginx')
      .string(3, '/bin/sh')
      .string(4, '-c')
      .string(4, 'nginx -g "daemon off;"')
      .string(5, '')
      .message(6, enc().string(1, 'http').varint(2, 0).varint(3, 80).string(4, '').string(5, ''))
      .message(7, enc().string(1, 'MODE').string(2, 'prod'))
      .message(7, enc().string(1, 'EMPTY').string(2, ''))
      .message(
        8,
        enc()
          .entry(1, 'cpu', quantity('500m'))
          .entry(1, 'memory', quantity('128Mi'))
          .entry(2, 'cpu', quantity('250m')),
      )
      .message(9, enc().string(1, 'data').varint(2, true).string(3, '/data').string(4, ''))
      .string(13, '')
      .string(14, 'IfNotPresent')
      .varint(16, false)
      .varint(17, false)
      .varint(18, false)
      .string(20, '');
    const podSpec = enc()
      .message(2, container)
      .string(3, 'Always')
      .varint(4, 30)
      .string(6, '')
      .entry(7, 'disk', 'ssd')
      .string(8, '')
      .string(9, '')
      .string(10, '')
      .varint(11, false)
      .varint(12, false)
      .varint(13, false)
      .message(14, enc())
      .string(16, '')
      .string(17, '')
      .string(19, '')
      .string(24, '');
    const spec = enc()
      .varint(1, 0)
      .message(
        2,
        enc()
          .entry(1, 'app', 'web')
          .message(2, enc().string(1, 'tier').string(2, 'In').string(3, 'front').string(3, 'edge')),
      )
      .message(
        3,
        enc()
          .message(
            1,
            objectMeta('', '', (m) => m.entry(11, 'app', 'web')),
          )
          .message(2, podSpec),
      )
      .message(
        4,
        enc()
          .string(1, 'RollingUpdate')
          .message(2, enc().message(1, intOrString(0)).message(2, intOrString('25%'))),
      )
      .varint(5, 0)
      .varint(6, 0)
      .varint(7, false)
      .varint(9, 600);
    const status = enc().varint(1, 0).varint(2, 0).varint(3, 0).varint(4, 0).varint(5, 0).varint(7, 0);
    const out = decodeProtobufObject(
      envelope(
        'apps/v1',
        'Deployment',
        enc().message(1, objectMeta('web', 'x')).message(2, spec).message(3, status),
      ),
      { group: 'apps', version: 'v1', kind: 'Deployment' },
    );
    assert.deepEqual(out, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'x' },
      spec: {
        replicas: 0,
        selector: {
          matchLabels: { app: 'web' },
          matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'edge'] }],
        },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            containers: [
              {
                name: 'nginx',
                image: 'nginx',
                command: ['/bin/sh'],
                args: ['-c', 'nginx -g "daemon off;"'],
                ports: [{ name: 'http', containerPort: 80 }],
                env: [{ name: 'MODE', value: 'prod' }, { name: 'EMPTY' }],
                resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '250m' } },
                volumeMounts: [{ name: 'data', readOnly: true, mountPath: '/data' }],
                imagePullPolicy: 'IfNotPresent',
              },
            ],
            restartPolicy: 'Always',
            terminationGracePeriodSeconds: 30,
            nodeSelector: { disk: 'ssd' },
            securityContext: {},
          },
        },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: '25%' } },
        revisionHistoryLimit: 0,
        progressDeadlineSeconds: 600,
      },
      status: {},
    });
  });

  it('decodes a Pod with probes, env sources, volumes and security settings', () => {
    const probe = enc()
      .message(
        1,
        enc().message(2, enc().string(1, '/healthz').message(2, intOrString('http')).string(4, 'HTTP')),
      )
      .varint(2, 5)
      .varint(3, 1)
      .varint(4, 10)
      .varint(5, 1)
      .varint(6, 3);
    const container = enc()
      .string(1, 'app')
      .string(2, 'busybox')
      .message(
        7,
        enc()
          .string(1, 'LEVEL')
          .message(
            3,
            enc().message(3, enc().message(1, enc().string(1, 'cfg')).string(2, 'level').varint(3, true)),
          ),
      )
      .message(
        7,
        enc()
          .string(1, 'NODE')
          .message(3, enc().message(1, enc().string(2, 'spec.nodeName'))),
      )
      .message(
        19,
        enc()
          .string(1, 'X_')
          .message(3, enc().message(1, enc().string(1, 'creds'))),
      )
      .message(8, enc())
      .message(10, probe)
      .message(11, enc().message(1, enc().message(3, enc().message(1, intOrString(8080)))))
      .message(
        15,
        enc()
          .message(1, enc().string(2, 'ALL'))
          .varint(5, true)
          .varint(4, 1000)
          .varint(7, false)
          .message(11, enc().string(1, 'RuntimeDefault')),
      );
    const spec = enc()
      .message(
        1,
        enc()
          .string(1, 'tmp')
          .message(2, enc().message(2, enc().string(1, 'Memory').message(2, quantity('64Mi')))),
      )
      .message(
        1,
        enc()
          .string(1, 'cfg')
          .message(2, enc().message(19, enc().message(1, enc().string(1, 'app-config')).varint(3, 420))),
      )
      .message(2, container)
      .message(
        14,
        enc()
          .varint(4, 1000)
          .varint(4, 2000)
          .varint(5, 3000)
          .message(7, enc().string(1, 'net.ipv4.ip_forward').string(2, '1')),
      )
      .message(22, enc().string(1, 'node-role').string(2, 'Exists').string(4, 'NoSchedule').varint(5, 0))
      .varint(25, 0)
      .varint(30, false);
    const out = decode(
      'v1',
      'Pod',
      enc()
        .message(1, objectMeta('p', 'x'))
        .message(2, spec)
        .message(3, enc().string(1, 'Pending').message(7, enc())),
    );
    assert.deepEqual(out, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'x' },
      spec: {
        volumes: [
          { name: 'tmp', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } },
          { name: 'cfg', configMap: { name: 'app-config', defaultMode: 420 } },
        ],
        containers: [
          {
            name: 'app',
            image: 'busybox',
            env: [
              {
                name: 'LEVEL',
                valueFrom: { configMapKeyRef: { name: 'cfg', key: 'level', optional: true } },
              },
              { name: 'NODE', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
            ],
            envFrom: [{ prefix: 'X_', secretRef: { name: 'creds' } }],
            resources: {},
            livenessProbe: {
              httpGet: { path: '/healthz', port: 'http', scheme: 'HTTP' },
              initialDelaySeconds: 5,
              timeoutSeconds: 1,
              periodSeconds: 10,
              successThreshold: 1,
              failureThreshold: 3,
            },
            readinessProbe: { tcpSocket: { port: 8080 } },
            securityContext: {
              capabilities: { drop: ['ALL'] },
              runAsNonRoot: true,
              runAsUser: 1000,
              allowPrivilegeEscalation: false,
              seccompProfile: { type: 'RuntimeDefault' },
            },
          },
        ],
        securityContext: {
          supplementalGroups: [1000, 2000],
          fsGroup: 3000,
          sysctls: [{ name: 'net.ipv4.ip_forward', value: '1' }],
        },
        tolerations: [{ key: 'node-role', operator: 'Exists', effect: 'NoSchedule', tolerationSeconds: 0 }],
        priority: 0,
        enableServiceLinks: false,
      },
      status: { phase: 'Pending' },
    });
  });

  it('reads packed repeated varints as well as unpacked ones', () => {
    const packed = enc().bytes(4, [0xe8, 0x07, 0xd0, 0x0f]); // 1000, 2000
    const out = decode(
      'v1',
      'Pod',
      enc()
        .message(1, objectMeta('p'))
        .message(2, enc().message(14, packed.varint(4, 3000))),
    ) as { spec: { securityContext: unknown } };
    assert.deepEqual(out.spec.securityContext, { supplementalGroups: [1000, 2000, 3000] });
  });

  it('decodes an events.k8s.io/v1 Event as the event recorder writes it', () => {
    const meta = objectMeta('node-1.17a8c4e5d0a3b2c1', 'default', (m) =>
      m
        .entry(12, 'note', 'kube-proxy')
        .varint(10, 0)
        .message(
          13,
          enc().string(1, 'Node').string(3, 'node-1').string(4, 'uid-1').string(5, 'v1').varint(6, true),
        )
        .string(14, 'example.com/cleanup')
        .message(
          17,
          enc()
            .string(1, 'kube-proxy')
            .string(2, 'Update')
            .string(3, 'events.k8s.io/v1')
            .message(4, timestamp(1700000000))
            .string(6, 'FieldsV1')
            .message(7, enc().bytes(1, [...new TextEncoder().encode('{"f:note":{}}')]))
            .string(8, ''),
        ),
    );
    const raw = enc()
      .message(1, meta)
      .message(2, timestamp(1700000000, 123456789))
      .message(3, enc().varint(1, 2).message(2, timestamp(1700000060, 5000)))
      .string(4, 'kube-proxy')
      .string(5, 'kube-proxy-node-1')
      .string(6, 'StartKubeProxy')
      .string(7, 'Starting')
      .message(
        8,
        enc()
          .string(1, 'Node')
          .string(2, '')
          .string(3, 'node-1')
          .string(4, 'node-1')
          .string(5, '')
          .string(6, '')
          .string(7, ''),
      )
      .string(10, '')
      .string(11, 'Normal')
      .message(12, enc().string(1, '').string(2, ''))
      .message(13, enc())
      .message(14, enc())
      .varint(15, 0);
    const out = decodeProtobufObject(envelope('events.k8s.io/v1', 'Event', raw), {
      group: 'events.k8s.io',
      version: 'v1',
      kind: 'Event',
    });
    assert.deepEqual(out, {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: {
        name: 'node-1.17a8c4e5d0a3b2c1',
        namespace: 'default',
        annotations: { note: 'kube-proxy' },
        deletionGracePeriodSeconds: 0,
        ownerReferences: [{ kind: 'Node', name: 'node-1', uid: 'uid-1', apiVersion: 'v1', controller: true }],
        finalizers: ['example.com/cleanup'],
        managedFields: [
          {
            manager: 'kube-proxy',
            operation: 'Update',
            apiVersion: 'events.k8s.io/v1',
            time: '2023-11-14T22:13:20Z',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:note': {} },
          },
        ],
      },
      eventTime: '2023-11-14T22:13:20.123456Z',
      series: { count: 2, lastObservedTime: '2023-11-14T22:14:20.000005Z' },
      reportingController: 'kube-proxy',
      reportingInstance: 'kube-proxy-node-1',
      action: 'StartKubeProxy',
      reason: 'Starting',
      regarding: { kind: 'Node', name: 'node-1', uid: 'node-1' },
      type: 'Normal',
      deprecatedSource: {},
    });
  });

  it('decodes a core/v1 Event', () => {
    const raw = enc()
      .message(
        1,
        objectMeta('web.1', 'x', (m) => m.message(8, timestamp(1700000000))),
      )
      .message(2, enc().string(1, 'Pod').string(2, 'x').string(3, 'web').string(7, 'spec.containers{nginx}'))
      .string(3, 'Pulled')
      .string(4, 'Image pulled')
      .message(5, enc().string(1, 'kubelet').string(2, 'node-1'))
      .message(6, timestamp(1700000000, 999_999_999))
      .message(7, timestamp(1700000100))
      .varint(8, 3)
      .string(9, 'Normal')
      .message(10, enc())
      .string(12, '')
      .string(14, '')
      .string(15, '');
    assert.deepEqual(decode('v1', 'Event', raw), {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web.1', namespace: 'x', creationTimestamp: '2023-11-14T22:13:20Z' },
      involvedObject: { kind: 'Pod', namespace: 'x', name: 'web', fieldPath: 'spec.containers{nginx}' },
      reason: 'Pulled',
      message: 'Image pulled',
      source: { component: 'kubelet', host: 'node-1' },
      firstTimestamp: '2023-11-14T22:13:20Z',
      lastTimestamp: '2023-11-14T22:15:00Z',
      count: 3,
      type: 'Normal',
      reportingComponent: '',
      reportingInstance: '',
    });
  });

  it('follows protobuf merge rules: last scalar wins, repeated messages merge', () => {
    const meta = enc()
      .string(1, 'first')
      .message(13, enc().string(1, 'A'))
      .string(1, 'second')
      .entry(11, 'k', 'v1')
      .entry(11, 'k', 'v2');
    const raw = enc()
      .message(1, meta)
      .message(2, enc().string(3, '10.0.0.1').string(4, 'ClusterIP'))
      .message(2, enc().string(3, '10.0.0.2'));
    assert.deepEqual(decode('v1', 'Service', raw), {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'second', ownerReferences: [{ kind: 'A' }], labels: { k: 'v2' } },
      spec: { clusterIP: '10.0.0.2', type: 'ClusterIP' },
    });
  });

  it('gives a map entry without a value the zero value', () => {
    const raw = enc()
      .message(1, enc().message(11, enc().string(1, 'only-key')))
      .message(2, enc().message(2, enc().message(8, enc().message(1, enc().string(1, 'cpu')))));
    assert.deepEqual(decode('v1', 'Pod', raw), {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { labels: { 'only-key': '' } },
      spec: { containers: [{ resources: { limits: { cpu: '0' } } }] },
    });
  });

  it('gives a message-less object empty metadata', () => {
    assert.deepEqual(decode('v1', 'Namespace', enc()), { apiVersion: 'v1', kind: 'Namespace', metadata: {} });
  });

  it('refuses field numbers that are not in the tables', () => {
    fails(
      'Unsupported',
      () => decode('v1', 'Service', enc().message(2, enc().string(99, 'x'))),
      /ServiceSpec field 99/,
    );
    fails('Unsupported', () => decode('v1', 'Namespace', enc().varint(7, 1)), /core\.v1\.Namespace field 7/);
    fails(
      'Unsupported',
      () => decode('v1', 'Namespace', enc().message(1, enc().string(15, 'cluster'))),
      /ObjectMeta field 15/,
    );
    fails(
      'Unsupported',
      () => decode('v1', 'Pod', enc().message(2, enc().message(18, enc()))),
      /PodSpec field 18/,
    );
    fails(
      'Unsupported',
      () => decode('v1', 'Pod', enc().message(2, enc().message(2, enc().fixed32(99, 1)))),
      /Container field 99/,
    );
    fails(
      'Unsupported',
      () => decode('v1', 'Namespace', enc().message(1, enc().message(11, enc().string(3, 'x')))),
      /labels/,
    );
    fails(
      'Unsupported',
      () => decode('v1', 'Service', enc().message(2, enc().message(1, enc().message(4, enc().varint(9, 1))))),
      /IntOrString field 9/,
    );
  });

  it('refuses kinds without a table', () => {
    const gvk = { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease' };
    assert.equal(hasProtobufTable(gvk), false);
    assert.equal(hasProtobufTable({ group: 'apps', version: 'v1', kind: 'Deployment' }), true);
    fails(
      'Unsupported',
      () => decodeProtobufObject(envelope('coordination.k8s.io/v1', 'Lease', enc()), gvk),
      /Lease/,
    );
    // The kind decides before the body is read, as for custom resources in kube-apiserver.
    fails('Unsupported', () =>
      decodeProtobufObject(Uint8Array.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x7f]), gvk),
    );
    fails(
      'Unsupported',
      () => decodeProtobufObject(envelope('v1', 'Lease', enc()), gvk),
      /only of v1 Namespace, v1 Service, v1 Pod, v1 Event, apps\/v1 Deployment, events\.k8s\.io\/v1 Event/,
    );
  });

  it('refuses a body of another kind or version than the endpoint takes', () => {
    fails(
      'Mismatch',
      () => decodeProtobufObject(envelope('v1', 'Service', enc()), { ...CORE, kind: 'Namespace' }),
      /v1 Service/,
    );
    fails('Mismatch', () =>
      decodeProtobufObject(envelope('apps/v1beta1', 'Deployment', enc()), {
        group: 'apps',
        version: 'v1',
        kind: 'Deployment',
      }),
    );
    fails(
      'Mismatch',
      () => decodeProtobufObject(envelope('', '', enc()), { ...CORE, kind: 'Service' }),
      /without apiVersion/,
    );
  });

  it('refuses encoded or foreign raw content', () => {
    fails('Unsupported', () =>
      decodeProtobufObject(envelope('v1', 'Service', kubectlService(), { contentEncoding: 'gzip' }), {
        ...CORE,
        kind: 'Service',
      }),
    );
    fails('Unsupported', () =>
      decodeProtobufObject(envelope('v1', 'Service', kubectlService(), { contentType: 'application/json' }), {
        ...CORE,
        kind: 'Service',
      }),
    );
    const ok = decodeProtobufObject(
      envelope('v1', 'Service', kubectlService(), { contentType: 'application/vnd.kubernetes.protobuf' }),
      { ...CORE, kind: 'Service' },
    );
    assert.equal(ok.kind, 'Service');
  });

  it('refuses malformed bodies', () => {
    const svc = { ...CORE, kind: 'Service' };
    fails(
      'Malformed',
      () => decodeProtobufObject(new TextEncoder().encode('{"kind":"Service"}'), svc),
      /k8s/,
    );
    fails('Malformed', () => decodeProtobufObject(Uint8Array.from([0x6b, 0x38, 0x73]), svc));
    const whole = envelope('v1', 'Service', kubectlService());
    fails('Malformed', () => decodeProtobufObject(whole.subarray(0, whole.length - 3), svc));
    // raw cut short: its outer length says more than it holds.
    const cut = kubectlService().finish();
    fails('Malformed', () =>
      decodeProtobufObject(envelope('v1', 'Service', cut.subarray(0, cut.length - 2)), svc),
    );
    // A known field with the wrong wire type.
    fails('Malformed', () => decode('v1', 'Service', enc().varint(2, 1)), /wire type/);
    fails(
      'Malformed',
      () => decode('v1', 'Service', enc().message(2, enc().string(12, 'x'))),
      /healthCheckNodePort/,
    );
    // IntOrString with an impossible type; FieldsV1 that is not JSON; a bad UTF-8 string.
    fails(
      'Malformed',
      () => decode('v1', 'Service', enc().message(2, enc().message(1, enc().message(4, enc().varint(1, 2))))),
      /IntOrString/,
    );
    fails(
      'Malformed',
      () =>
        decode(
          'v1',
          'Namespace',
          enc().message(1, enc().message(17, enc().message(7, enc().bytes(1, [0x7b])))),
        ),
      /FieldsV1/,
    );
    fails('Malformed', () => decode('v1', 'Namespace', enc().message(1, enc().bytes(1, [0xff]))), /UTF-8/);
    fails('Malformed', () => decode('v1', 'Namespace', enc().raw([0x0a, 0x05, 0x0a])));
    // Times outside what Go can write, and nanos out of range.
    fails('Malformed', () =>
      decode('v1', 'Namespace', enc().message(1, enc().message(8, timestamp(253402300800)))),
    );
    fails('Malformed', () =>
      decode('v1', 'Namespace', enc().message(1, enc().message(8, timestamp(0, 1_000_000_000)))),
    );
    fails('Malformed', () =>
      decode(
        'v1',
        'Pod',
        enc().message(2, enc().message(2, enc().message(8, enc().entry(1, 'cpu', quantity(''))))),
      ),
    );
  });

  it('refuses integers a JSON number cannot hold exactly', () => {
    fails(
      'Unsupported',
      () => decode('v1', 'Namespace', enc().message(1, enc().varint(7, 2n ** 60n))),
      /generation/,
    );
    assert.deepEqual(decode('v1', 'Namespace', enc().message(1, enc().varint(7, -5))), {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { generation: -5 },
    });
  });
});

describe('time and bytes formatting', () => {
  it('writes RFC 3339 as metav1.Time and MicroTime do', () => {
    assert.equal(formatTime(0, 0, false), '1970-01-01T00:00:00Z');
    assert.equal(formatTime(1700000000, 999_999_999, false), '2023-11-14T22:13:20Z');
    assert.equal(formatTime(1700000000, 1_000, true), '2023-11-14T22:13:20.000001Z');
    assert.equal(formatTime(-1, 0, true), '1969-12-31T23:59:59.000000Z');
    assert.equal(formatTime(-62135596800, 0, false), '0001-01-01T00:00:00Z');
    assert.equal(formatTime(253402300799, 0, false), '9999-12-31T23:59:59Z');
  });

  it('an explicit epoch timestamp is kept, an empty one is the zero time', () => {
    const out = decode('v1', 'Namespace', enc().message(1, enc().message(8, timestamp(0)).message(9, enc())));
    assert.deepEqual(out, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { creationTimestamp: '1970-01-01T00:00:00Z' },
    });
  });

  it('encodes bytes as padded base64', () => {
    const b = (s: string): Uint8Array => new TextEncoder().encode(s);
    assert.equal(base64(b('')), '');
    assert.equal(base64(b('f')), 'Zg==');
    assert.equal(base64(b('fo')), 'Zm8=');
    assert.equal(base64(b('foo')), 'Zm9v');
    assert.equal(base64(Uint8Array.from([0xfb, 0xff])), '+/8=');
  });
});

describe('decodeProtobufDeleteOptions', () => {
  it('decodes what kubectl drain sends: an empty DeleteOptions', () => {
    assert.deepEqual(decodeProtobufDeleteOptions(envelope('v1', 'DeleteOptions', enc())), {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
    });
  });

  it('keeps every field, zeros included (they are pointers in Go)', () => {
    const body = enc()
      .varint(1, 0)
      .message(2, enc().string(1, 'u-1').string(2, '42'))
      .varint(3, false)
      .string(4, 'Foreground')
      .string(5, 'All')
      .varint(6, false);
    assert.deepEqual(decodeProtobufDeleteOptions(envelope('apps/v1', 'DeleteOptions', body)), {
      apiVersion: 'apps/v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 0,
      preconditions: { uid: 'u-1', resourceVersion: '42' },
      orphanDependents: false,
      propagationPolicy: 'Foreground',
      dryRun: ['All'],
      ignoreStoreReadErrorWithClusterBreakingPotential: false,
    });
  });

  it("takes any group version's DeleteOptions, as kube-apiserver does, and an untyped envelope", () => {
    for (const apiVersion of ['meta.k8s.io/v1', 'batch/v1', 'v1'])
      assert.equal(
        decodeProtobufDeleteOptions(envelope(apiVersion, 'DeleteOptions', enc().varint(1, 30)))[
          'gracePeriodSeconds'
        ],
        30,
      );
    assert.deepEqual(decodeProtobufDeleteOptions(envelope('', '', enc().varint(1, 5))), {
      apiVersion: 'meta.k8s.io/v1',
      kind: 'DeleteOptions',
      gracePeriodSeconds: 5,
    });
  });

  it('refuses another kind, an unknown field and malformed bytes', () => {
    fails(
      'Mismatch',
      () => decodeProtobufDeleteOptions(envelope('v1', 'Pod', enc())),
      /v1 Pod, but a DELETE takes a DeleteOptions/,
    );
    fails('Unsupported', () =>
      decodeProtobufDeleteOptions(envelope('v1', 'DeleteOptions', enc().string(99, 'x'))),
    );
    fails('Malformed', () =>
      decodeProtobufDeleteOptions(Uint8Array.from([0x6b, 0x38, 0x73, 0x00, 0x0a, 0x7f])),
    );
  });
});

describe('the review kinds, as gogo-protobuf lays out what kubectl auth sends', () => {
  it('SelfSubjectAccessReview: every empty field written, status included', () => {
    const attrs = enc()
      .string(1, 'default')
      .string(2, 'create')
      .string(3, '')
      .string(4, '')
      .string(5, 'pods')
      .string(6, '')
      .string(7, '');
    const status = enc().varint(1, false).string(2, '').string(3, '').varint(4, false);
    const body = envelope(
      'authorization.k8s.io/v1',
      'SelfSubjectAccessReview',
      enc().message(1, objectMeta('')).message(2, enc().message(1, attrs)).message(3, status),
    );
    assert.deepEqual(
      decodeProtobufObject(body, {
        group: 'authorization.k8s.io',
        version: 'v1',
        kind: 'SelfSubjectAccessReview',
      }),
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        metadata: {},
        spec: { resourceAttributes: { namespace: 'default', verb: 'create', resource: 'pods' } },
        status: { allowed: false },
      },
    );
  });

  it('SelfSubjectReview: an empty status with an empty userInfo', () => {
    const body = envelope(
      'authentication.k8s.io/v1',
      'SelfSubjectReview',
      enc()
        .message(1, objectMeta(''))
        .message(2, enc().message(1, enc().string(1, '').string(2, ''))),
    );
    assert.deepEqual(
      decodeProtobufObject(body, {
        group: 'authentication.k8s.io',
        version: 'v1',
        kind: 'SelfSubjectReview',
      }),
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'SelfSubjectReview',
        metadata: {},
        status: { userInfo: {} },
      },
    );
  });

  it('TokenReview: a token and the audiences it is asked for', () => {
    const body = envelope(
      'authentication.k8s.io/v1',
      'TokenReview',
      enc()
        .message(1, objectMeta(''))
        .message(2, enc().string(1, 'abc.def').string(2, 'vault').string(2, 'api')),
    );
    assert.deepEqual(
      decodeProtobufObject(body, { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenReview' }),
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenReview',
        metadata: {},
        spec: { token: 'abc.def', audiences: ['vault', 'api'] },
      },
    );
  });
});
