import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { KObject } from '../object.js';
import { RESOURCES, type ResourceInfo } from '../resources.js';
import { validateCreate, validateStatusUpdate, validateUpdate } from '../validation/index.js';
import { applyDefaults, defaultPullPolicy, podQOSClass, prepareForUpdate } from './index.js';
import { MINIMAL_OBJECTS } from '../../../test/support/minimal-objects.js';

const res = (group: string, kind: string): ResourceInfo => {
  const r = RESOURCES.find((x) => x.group === group && x.kind === kind);
  assert.ok(r, `${group}/${kind}`);
  return r;
};
const SERVICE = res('', 'Service');
const POD = res('', 'Pod');
const DEPLOYMENT = res('apps', 'Deployment');

function defaulted(r: ResourceInfo, obj: object): KObject {
  const o = structuredClone(obj) as KObject;
  applyDefaults(r, o);
  return o;
}

const podSpecDefaults = {
  dnsPolicy: 'ClusterFirst',
  restartPolicy: 'Always',
  securityContext: {},
  terminationGracePeriodSeconds: 30,
  schedulerName: 'default-scheduler',
};
const containerDefaults = {
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
  resources: {},
};

describe('Service defaults', () => {
  it('ClusterIP', () => {
    const o = defaulted(SERVICE, {
      metadata: { name: 'web' },
      spec: { ports: [{ port: 80 }, { port: 53, protocol: 'UDP', targetPort: 'dns' }] },
    });
    assert.deepEqual(o.spec, {
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ports: [
        { port: 80, protocol: 'TCP', targetPort: 80 },
        { port: 53, protocol: 'UDP', targetPort: 'dns' },
      ],
      internalTrafficPolicy: 'Cluster',
    });
  });

  it('empty targetPort is the port; clusterIP alone gives clusterIPs', () => {
    const o = defaulted(SERVICE, {
      metadata: { name: 'web' },
      spec: { clusterIP: 'None', ports: [{ port: 80, targetPort: '' }] },
    });
    assert.deepEqual((o.spec as { ports: unknown[] }).ports, [{ port: 80, targetPort: 80, protocol: 'TCP' }]);
    assert.deepEqual((o.spec as { clusterIPs: unknown }).clusterIPs, ['None']);
  });

  it('NodePort, LoadBalancer and ClusterIP with externalIPs get externalTrafficPolicy', () => {
    const lb = defaulted(SERVICE, {
      metadata: { name: 'web' },
      spec: { type: 'LoadBalancer', ports: [{ port: 80 }] },
    });
    assert.equal((lb.spec as Record<string, unknown>)['externalTrafficPolicy'], 'Cluster');
    assert.equal((lb.spec as Record<string, unknown>)['allocateLoadBalancerNodePorts'], true);
    const np = defaulted(SERVICE, {
      metadata: { name: 'web' },
      spec: { type: 'NodePort', ports: [{ port: 80 }] },
    });
    assert.equal((np.spec as Record<string, unknown>)['externalTrafficPolicy'], 'Cluster');
    assert.equal((np.spec as Record<string, unknown>)['allocateLoadBalancerNodePorts'], undefined);
    const ext = defaulted(SERVICE, {
      metadata: { name: 'web' },
      spec: { externalIPs: ['203.0.113.1'], ports: [{ port: 80 }] },
    });
    assert.equal((ext.spec as Record<string, unknown>)['externalTrafficPolicy'], 'Cluster');
    // The allocator's fields are left alone.
    for (const o of [lb, np, ext]) {
      const spec = o.spec as Record<string, unknown>;
      assert.equal(spec['clusterIP'], undefined);
      assert.equal(spec['ipFamilies'], undefined);
      assert.equal(spec['ipFamilyPolicy'], undefined);
      assert.equal((spec['ports'] as Record<string, unknown>[])[0]!['nodePort'], undefined);
    }
  });

  it('ExternalName gets no traffic policies; ClientIP gets a timeout', () => {
    const en = defaulted(SERVICE, {
      metadata: { name: 'db' },
      spec: { type: 'ExternalName', externalName: 'db.example.com' },
    });
    assert.deepEqual(en.spec, {
      type: 'ExternalName',
      externalName: 'db.example.com',
      sessionAffinity: 'None',
    });
    const sticky = defaulted(SERVICE, {
      metadata: { name: 'web' },
      spec: { sessionAffinity: 'ClientIP', ports: [{ port: 80 }] },
    });
    assert.deepEqual((sticky.spec as Record<string, unknown>)['sessionAffinityConfig'], {
      clientIP: { timeoutSeconds: 10800 },
    });
  });
});

describe('Pod defaults', () => {
  it('spec, containers and initial status', () => {
    const o = defaulted(POD, {
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'app', image: 'nginx', ports: [{ containerPort: 80 }] }] },
    });
    assert.deepEqual(o.spec, {
      ...podSpecDefaults,
      enableServiceLinks: true,
      containers: [
        {
          name: 'app',
          image: 'nginx',
          ports: [{ containerPort: 80, protocol: 'TCP' }],
          imagePullPolicy: 'Always',
          ...containerDefaults,
        },
      ],
    });
    assert.deepEqual(o['status'], { phase: 'Pending', qosClass: 'BestEffort' });
  });

  it('a given status is kept', () => {
    const o = defaulted(POD, {
      metadata: { name: 'p' },
      spec: { containers: [] },
      status: { phase: 'Running' },
    });
    assert.deepEqual(o['status'], { phase: 'Running' });
  });

  it('imagePullPolicy follows the tag', () => {
    const cases: [string, string][] = [
      ['nginx', 'Always'],
      ['nginx:latest', 'Always'],
      ['nginx:1.25', 'IfNotPresent'],
      ['registry.local:5000/team/app', 'Always'],
      ['registry.local:5000/team/app:v2', 'IfNotPresent'],
      ['nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'IfNotPresent'],
      ['nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef', 'Always'],
      ['', 'IfNotPresent'],
    ];
    for (const [image, want] of cases) assert.equal(defaultPullPolicy(image), want, image);
  });

  it('hostNetwork ports, requests from limits, bare volumes, probes', () => {
    const o = defaulted(POD, {
      metadata: { name: 'p' },
      spec: {
        hostNetwork: true,
        volumes: [{ name: 'scratch' }, { name: 'cfg', configMap: { name: 'c' } }],
        containers: [
          {
            name: 'app',
            image: 'app:1',
            ports: [{ containerPort: 8080 }],
            resources: { limits: { cpu: '500m', memory: '128Mi' } },
            readinessProbe: { httpGet: { port: 8080 } },
          },
        ],
      },
    });
    const spec = o.spec as Record<string, unknown>;
    const c = (spec['containers'] as Record<string, unknown>[])[0]!;
    assert.deepEqual(c['ports'], [{ containerPort: 8080, protocol: 'TCP', hostPort: 8080 }]);
    assert.deepEqual(c['resources'], {
      limits: { cpu: '500m', memory: '128Mi' },
      requests: { cpu: '500m', memory: '128Mi' },
    });
    assert.deepEqual(c['readinessProbe'], {
      httpGet: { port: 8080, path: '/', scheme: 'HTTP' },
      timeoutSeconds: 1,
      periodSeconds: 10,
      successThreshold: 1,
      failureThreshold: 3,
    });
    assert.deepEqual(spec['volumes'], [
      { name: 'scratch', emptyDir: {} },
      { name: 'cfg', configMap: { name: 'c', defaultMode: 420 } },
    ]);
    assert.deepEqual(o['status'], { phase: 'Pending', qosClass: 'Guaranteed' });
  });

  it('QoS classes', () => {
    assert.equal(podQOSClass({ containers: [{ resources: {} }] }), 'BestEffort');
    assert.equal(podQOSClass({ containers: [{ resources: { requests: { cpu: '1' } } }] }), 'Burstable');
    assert.equal(
      podQOSClass({
        containers: [
          { resources: { requests: { cpu: '1', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } } },
        ],
      }),
      'Guaranteed',
    );
  });
});

describe('other kinds', () => {
  it('Namespace: finalizer, phase, name label', () => {
    const o = defaulted(res('', 'Namespace'), {
      metadata: { name: 'edge', labels: { a: 'b', 'kubernetes.io/metadata.name': 'x' } },
    });
    assert.deepEqual(o, {
      metadata: { name: 'edge', labels: { a: 'b', 'kubernetes.io/metadata.name': 'edge' } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
    // Once deleting, the finalizer removed by /finalize stays removed.
    const d = defaulted(res('', 'Namespace'), {
      metadata: { name: 'edge', deletionTimestamp: '2024-01-01T00:00:00Z' },
      spec: {},
      status: { phase: 'Terminating' },
    });
    assert.deepEqual(d['spec'], {});
  });

  it('Deployment: replicas, strategy, limits, template', () => {
    const o = defaulted(DEPLOYMENT, {
      metadata: { name: 'd' },
      spec: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } },
      },
    });
    assert.deepEqual(o.spec, {
      replicas: 1,
      selector: { matchLabels: { a: 'b' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
      template: {
        metadata: { labels: { a: 'b' } },
        spec: {
          ...podSpecDefaults,
          containers: [{ name: 'c', image: 'x:1', imagePullPolicy: 'IfNotPresent', ...containerDefaults }],
        },
      },
    });
    const recreate = defaulted(DEPLOYMENT, {
      metadata: { name: 'd' },
      spec: { strategy: { type: 'Recreate' } },
    });
    assert.deepEqual((recreate.spec as Record<string, unknown>)['strategy'], { type: 'Recreate' });
  });

  it('Endpoints and EndpointSlice ports', () => {
    const ep = defaulted(res('', 'Endpoints'), {
      metadata: { name: 'e' },
      subsets: [{ addresses: [{ ip: '10.0.0.1' }], ports: [{ port: 80 }] }],
    });
    assert.deepEqual((ep['subsets'] as Record<string, unknown>[])[0]!['ports'], [
      { port: 80, protocol: 'TCP' },
    ]);
    const es = defaulted(res('discovery.k8s.io', 'EndpointSlice'), {
      metadata: { name: 's' },
      addressType: 'IPv4',
      ports: [{ port: 80 }],
    });
    assert.deepEqual(es['ports'], [{ port: 80, name: '', protocol: 'TCP' }]);
  });

  it('Node: allocatable defaults to capacity', () => {
    const n = defaulted(res('', 'Node'), { metadata: { name: 'n' }, status: { capacity: { cpu: '4' } } });
    assert.deepEqual(n['status'], { capacity: { cpu: '4' }, allocatable: { cpu: '4' } });
  });

  it('grids default their templates', () => {
    const sg = defaulted(res('superedge.io', 'ServiceGrid'), {
      metadata: { name: 'sg' },
      spec: { gridUniqKey: 'zone', template: { ports: [{ port: 80 }] } },
    });
    assert.deepEqual((sg.spec as Record<string, unknown>)['template'], {
      ports: [{ port: 80, protocol: 'TCP', targetPort: 80 }],
      type: 'ClusterIP',
      sessionAffinity: 'None',
      internalTrafficPolicy: 'Cluster',
    });
    const dg = defaulted(res('superedge.io', 'DeploymentGrid'), {
      metadata: { name: 'dg' },
      spec: { gridUniqKey: 'zone', template: {}, templatePool: { big: { replicas: 3 } } },
    });
    const spec = dg.spec as Record<string, Record<string, unknown>>;
    assert.equal(spec['template']!['replicas'], 1);
    assert.equal((spec['templatePool']!['big'] as Record<string, unknown>)['replicas'], 3);
    assert.equal((spec['templatePool']!['big'] as Record<string, unknown>)['revisionHistoryLimit'], 10);
  });
});

describe('prepareForUpdate', () => {
  it('carries over uid, creationTimestamp, allocated Service values', () => {
    const old = defaulted(SERVICE, {
      metadata: { name: 'web', namespace: 'd', uid: 'u', creationTimestamp: '2024-01-01T00:00:00Z' },
      spec: {
        type: 'NodePort',
        clusterIP: '10.96.0.5',
        clusterIPs: ['10.96.0.5'],
        ipFamilies: ['IPv4'],
        ipFamilyPolicy: 'SingleStack',
        ports: [{ name: 'http', port: 80, nodePort: 30080 }],
      },
    });
    const obj = {
      metadata: { name: 'web', namespace: 'd' },
      spec: { type: 'NodePort', ports: [{ name: 'http', port: 80 }] },
    } as KObject;
    prepareForUpdate(SERVICE, obj, old);
    applyDefaults(SERVICE, obj);
    assert.equal(obj.metadata.uid, 'u');
    assert.equal(obj.metadata.creationTimestamp, '2024-01-01T00:00:00Z');
    const spec = obj.spec as Record<string, unknown>;
    assert.equal(spec['clusterIP'], '10.96.0.5');
    assert.deepEqual(spec['clusterIPs'], ['10.96.0.5']);
    assert.deepEqual(spec['ipFamilies'], ['IPv4']);
    assert.equal(spec['ipFamilyPolicy'], 'SingleStack');
    assert.equal((spec['ports'] as Record<string, unknown>[])[0]!['nodePort'], 30080);
  });

  it('keeps a Namespace spec.finalizers as stored', () => {
    const ns = res('', 'Namespace');
    const old = defaulted(ns, { metadata: { name: 'a' } });
    const obj = { metadata: { name: 'a' }, spec: { finalizers: [] } } as KObject;
    prepareForUpdate(ns, obj, old);
    assert.deepEqual(obj['spec'], { finalizers: ['kubernetes'] });
  });
});

// ---- properties ----

const json = fc.jsonValue({ maxDepth: 4 });
/** Objects shaped like the kind's fields, with arbitrary JSON where values go. */
const specLike = fc.dictionary(
  fc.constantFrom(
    'ports',
    'type',
    'clusterIP',
    'clusterIPs',
    'selector',
    'sessionAffinity',
    'sessionAffinityConfig',
    'externalIPs',
    'containers',
    'initContainers',
    'volumes',
    'template',
    'strategy',
    'replicas',
    'gridUniqKey',
    'taints',
    'podCIDRs',
    'finalizers',
    'leaseDurationSeconds',
    'hostNetwork',
    'tolerations',
  ),
  fc.oneof(
    json,
    fc.array(
      fc.dictionary(
        fc.constantFrom(
          'name',
          'port',
          'protocol',
          'targetPort',
          'image',
          'nodePort',
          'containerPort',
          'ports',
          'resources',
        ),
        json,
      ),
      { maxLength: 3 },
    ),
  ),
  { maxKeys: 8 },
);
const topLevel = fc.record({
  spec: fc.oneof(specLike, json),
  status: fc.option(json, { nil: undefined }),
  subsets: fc.option(json, { nil: undefined }),
  endpoints: fc.option(json, { nil: undefined }),
  ports: fc.option(json, { nil: undefined }),
  addressType: fc.option(json, { nil: undefined }),
  regarding: fc.option(json, { nil: undefined }),
  eventTime: fc.option(json, { nil: undefined }),
});
const anyMeta = fc.oneof(
  fc.record({ name: fc.string(), namespace: fc.string() }),
  fc.record({ name: json, labels: json, annotations: json, ownerReferences: json, finalizers: json }),
);

describe('properties', () => {
  it('applyDefaults is idempotent on every kind, whatever the JSON', () => {
    fc.assert(
      fc.property(fc.constantFrom(...RESOURCES), anyMeta, topLevel, (r, metadata, rest) => {
        const obj = { metadata, ...structuredClone(rest) } as unknown as KObject;
        applyDefaults(r, obj);
        const once = JSON.stringify(obj);
        applyDefaults(r, obj);
        assert.equal(JSON.stringify(obj), once);
      }),
      { numRuns: 400 },
    );
  });

  it('validation never throws on arbitrary JSON under spec (defaulted or not)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...RESOURCES),
        anyMeta,
        topLevel,
        topLevel,
        fc.boolean(),
        (r, metadata, a, b, defaults) => {
          const obj = { metadata, ...a } as unknown as KObject;
          const old = { metadata, ...b } as unknown as KObject;
          if (defaults) {
            prepareForUpdate(r, obj, old);
            applyDefaults(r, obj);
            applyDefaults(r, old);
          }
          for (const errs of [
            validateCreate(r, obj),
            validateUpdate(r, obj, old),
            validateStatusUpdate(r, obj, old),
          ]) {
            assert.ok(Array.isArray(errs));
            for (const e of errs) assert.equal(typeof e.field, 'string');
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('a defaulted minimal object of each kind validates clean', () => {
    for (const r of RESOURCES) {
      const obj = MINIMAL_OBJECTS[`${r.group}/${r.kind}`];
      assert.ok(obj, `${r.group}/${r.kind}`);
      const o = defaulted(r, obj);
      assert.deepEqual(validateCreate(r, o), [], `${r.group}/${r.kind}`);
      const again = structuredClone(o);
      assert.deepEqual(validateUpdate(r, again, o), [], `${r.group}/${r.kind} update`);
    }
  });
});

describe('regressions', () => {
  it('prepareForUpdate tolerates an old Service whose clusterIPs is not a list (found by the property above, seed -196907381)', () => {
    const r = RESOURCES.find((x) => x.resource === 'services')!;
    const obj = { metadata: { name: 'a' }, spec: { type: 'ClusterIP' } } as unknown as KObject;
    const old = { metadata: { name: 'a' }, spec: { clusterIPs: {} } } as unknown as KObject;
    prepareForUpdate(r, obj, old);
    assert.equal((obj.spec as Record<string, unknown>)['clusterIPs'], undefined);
  });
});
