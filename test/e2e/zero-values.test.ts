// What kube-apiserver always writes (struct-valued fields and fields without omitempty): one row per
// kind, a minimal create body and the always-present fields with their zero values, checked in the create
// response, a GET, a LIST item and a watch event (svcplane serves those from three different paths).
import assert from 'node:assert/strict';
import https from 'node:https';
import { after, before, describe, it } from 'node:test';
import { call, startUp, type TestServer } from './testing/server.js';

interface Row {
  readonly kind: string;
  /** The collection to POST to; `${collection}/${name}` is the object. */
  readonly collection: string;
  readonly name: string;
  readonly body: Record<string, unknown>;
  /** Dotted path → the value expected there. */
  readonly expect: Record<string, unknown>;
  /** Every top-level key of the response, when it is more than apiVersion, kind, metadata, spec, status. */
  readonly top?: readonly string[];
}

const SPEC_STATUS = ['apiVersion', 'kind', 'metadata', 'spec', 'status'];

const NODE_INFO = Object.fromEntries(
  [
    'machineID',
    'systemUUID',
    'bootID',
    'kernelVersion',
    'osImage',
    'containerRuntimeVersion',
    'kubeletVersion',
    'kubeProxyVersion',
    'operatingSystem',
    'architecture',
  ].map((k) => [`status.nodeInfo.${k}`, '']),
);

const ROWS: Row[] = [
  {
    kind: 'Service',
    collection: '/api/v1/namespaces/zv/services',
    name: 's',
    body: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { selector: { app: 'a' }, ports: [{ port: 80 }] },
    },
    expect: { status: { loadBalancer: {} }, 'status.loadBalancer': {} },
  },
  {
    kind: 'Node',
    collection: '/api/v1/nodes',
    name: 'zv-node',
    body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'zv-node' } },
    expect: { spec: {}, 'status.daemonEndpoints': { kubeletEndpoint: { Port: 0 } }, ...NODE_INFO },
  },
  {
    kind: 'Pod',
    collection: '/api/v1/namespaces/zv/pods',
    name: 'p',
    body: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    },
    expect: {
      'spec.containers.0.resources': {},
      // computed on create by kube's admission plugins and the pod strategy
      'spec.priority': 0,
      'spec.preemptionPolicy': 'PreemptLowerPriority',
      'spec.tolerations': [
        {
          key: 'node.kubernetes.io/not-ready',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
        {
          key: 'node.kubernetes.io/unreachable',
          operator: 'Exists',
          effect: 'NoExecute',
          tolerationSeconds: 300,
        },
      ],
      'status.phase': 'Pending',
      'status.qosClass': 'BestEffort',
    },
  },
  {
    kind: 'Event (core/v1)',
    collection: '/api/v1/namespaces/zv/events',
    name: 'e1',
    body: {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e1' },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'zv' },
      reason: 'R',
      message: 'm',
    },
    top: [
      'apiVersion',
      'kind',
      'metadata',
      'involvedObject',
      'reason',
      'message',
      'source',
      'firstTimestamp',
      'lastTimestamp',
      'eventTime',
      'reportingComponent',
      'reportingInstance',
    ],
    expect: {
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
      eventTime: null,
      reportingComponent: '',
      reportingInstance: '',
    },
  },
  {
    kind: 'Event (events.k8s.io/v1)',
    // regarding.namespace may be empty only in default and kube-system (ValidateEventCreate)
    collection: '/apis/events.k8s.io/v1/namespaces/default/events',
    name: 'e2',
    body: {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'e2' },
      eventTime: '2025-05-01T10:00:00.000000Z',
      reportingController: 'example.com/ctl',
      reportingInstance: 'i1',
      action: 'Act',
      reason: 'R',
      type: 'Normal',
    },
    top: [
      'apiVersion',
      'kind',
      'metadata',
      'eventTime',
      'reportingController',
      'reportingInstance',
      'action',
      'reason',
      'type',
      'regarding',
      'deprecatedSource',
      'deprecatedFirstTimestamp',
      'deprecatedLastTimestamp',
    ],
    expect: {
      regarding: {},
      deprecatedSource: {},
      deprecatedFirstTimestamp: null,
      deprecatedLastTimestamp: null,
    },
  },
  {
    kind: 'Lease',
    collection: '/apis/coordination.k8s.io/v1/namespaces/zv/leases',
    name: 'l',
    body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' } },
    top: ['apiVersion', 'kind', 'metadata', 'spec'],
    expect: { spec: {} },
  },
  {
    kind: 'EndpointSlice',
    collection: '/apis/discovery.k8s.io/v1/namespaces/zv/endpointslices',
    name: 'es',
    body: {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'es' },
      addressType: 'IPv4',
    },
    top: ['apiVersion', 'kind', 'metadata', 'addressType', 'endpoints', 'ports'],
    expect: { endpoints: null, ports: null },
  },
  {
    kind: 'EndpointSlice (an endpoint without conditions)',
    collection: '/apis/discovery.k8s.io/v1/namespaces/zv/endpointslices',
    name: 'es2',
    body: {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'es2' },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.0.0.1'] }],
    },
    top: ['apiVersion', 'kind', 'metadata', 'addressType', 'endpoints', 'ports'],
    expect: { 'endpoints.0.conditions': {}, ports: null },
  },
  {
    kind: 'Deployment',
    collection: '/apis/apps/v1/namespaces/zv/deployments',
    name: 'd',
    body: {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: {
        selector: { matchLabels: { app: 'a' } },
        template: {
          metadata: { labels: { app: 'a' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    },
    // The deployment controller of `up` writes status as soon as the Deployment exists, so status is
    // checked among the top-level keys, not for its zero value.
    top: ['apiVersion', 'kind', 'metadata', 'spec', 'status'],
    expect: {
      'spec.template.metadata.creationTimestamp': null,
      'spec.template.spec.containers.0.resources': {},
    },
  },
  {
    kind: 'ServiceGrid',
    collection: '/apis/superedge.io/v1/namespaces/zv/servicegrids',
    name: 'sg',
    body: {
      apiVersion: 'superedge.io/v1',
      kind: 'ServiceGrid',
      metadata: { name: 'sg' },
      spec: { gridUniqKey: 'zone', template: { selector: { app: 'a' }, ports: [{ port: 80 }] } },
    },
    // The grid controllers of `up` fill in the rest of status (service, conditions …) as soon as the
    // grid exists, so only what is always there is compared; `status` itself is in the top-level keys.
    expect: { 'status.loadBalancer': {} },
  },
  {
    kind: 'DeploymentGrid',
    collection: '/apis/superedge.io/v1/namespaces/zv/deploymentgrids',
    name: 'dg',
    body: {
      apiVersion: 'superedge.io/v1',
      kind: 'DeploymentGrid',
      metadata: { name: 'dg' },
      spec: {
        gridUniqKey: 'zone',
        template: {
          selector: { matchLabels: { app: 'a' } },
          template: {
            metadata: { labels: { app: 'a' } },
            spec: { containers: [{ name: 'c', image: 'nginx' }] },
          },
        },
      },
    },
    // status is `{}` until the grid controller writes it (units, states …): only its presence is checked.
    expect: { 'spec.template.template.metadata.creationTimestamp': null },
  },
];

const at = (o: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], o);

function check(o: unknown, row: Row, where: string): void {
  // (kube's LIST items carry no apiVersion and kind; svcplane's do, so a list item is compared without them)
  const drop = where === 'list' ? ['apiVersion', 'kind'] : [];
  const keys = Object.keys(o as object)
    .filter((k) => !drop.includes(k))
    .sort();
  const want = (row.top ?? SPEC_STATUS).filter((k) => !drop.includes(k));
  assert.deepEqual(keys, [...want].sort(), `${row.kind} (${where}): top-level keys`);
  for (const [path, want] of Object.entries(row.expect)) {
    const parent = path.includes('.') ? at(o, path.slice(0, path.lastIndexOf('.'))) : o;
    const key = path.slice(path.lastIndexOf('.') + 1);
    assert.ok(
      parent !== null && typeof parent === 'object' && Object.hasOwn(parent, key),
      `${row.kind} (${where}): ${path} is missing`,
    );
    assert.deepEqual(at(o, path), want, `${row.kind} (${where}): ${path}`);
  }
}

describe('fields kube-apiserver always writes, per kind', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startUp();
    const ns = await call(srv, 'POST', '/api/v1/namespaces', { body: { metadata: { name: 'zv' } } });
    assert.equal(ns.status, 201, ns.text);
  });
  after(() => srv?.destroy());

  for (const row of ROWS) {
    it(`${row.kind}: create response, GET, LIST item and watch event`, async () => {
      const created = await call(srv, 'POST', row.collection, { body: row.body });
      assert.equal(created.status, 201, created.text);
      check(created.json(), row, 'create');
      const got = await call(srv, 'GET', `${row.collection}/${row.name}`);
      assert.equal(got.status, 200, got.text);
      check(got.json(), row, 'get');
      const list = (await call(srv, 'GET', row.collection)).json<{
        items: Array<{ metadata: { name: string } }>;
      }>();
      check(
        list.items.find((i) => i.metadata.name === row.name),
        row,
        'list',
      );
      const event = await firstWatchEvent(
        srv,
        `${row.collection}?watch=true&fieldSelector=metadata.name%3D${row.name}`,
      );
      check(event.object, row, 'watch');
    });
  }

  it('a pod naming a PriorityClass that does not exist is forbidden, as kube-apiserver forbids it', async () => {
    const r = await call(srv, 'POST', '/api/v1/namespaces/zv/pods', {
      body: {
        metadata: { name: 'gold' },
        spec: { priorityClassName: 'gold', containers: [{ name: 'c', image: 'x' }] },
      },
    });
    assert.equal(r.status, 403, r.text);
    const st = r.json<{ reason: string; message: string }>();
    assert.equal(st.reason, 'Forbidden');
    assert.equal(st.message, 'pods "gold" is forbidden: no PriorityClass with name gold was found');
    assert.equal((await call(srv, 'GET', '/api/v1/namespaces/zv/pods/gold')).status, 404);
  });

  it('a PATCH response carries them too, and the stored object stays as it was sent', async () => {
    const patched = await call(srv, 'PATCH', '/api/v1/namespaces/zv/services/s', {
      body: { metadata: { labels: { x: 'y' } } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.json<{ status: unknown }>().status, { loadBalancer: {} });
  });
});

/** The first event of a watch (the object as ADDED), then the connection is closed. */
function firstWatchEvent(srv: TestServer, path: string): Promise<{ type: string; object: unknown }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${srv.url}${path}`,
      { ca: srv.ca, headers: { Authorization: `Bearer ${srv.token}` } },
      (res) => {
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          buf += d;
          const nl = buf.indexOf('\n');
          if (nl >= 0) {
            req.destroy();
            resolve(JSON.parse(buf.slice(0, nl)) as { type: string; object: unknown });
          }
        });
      },
    );
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.end();
  });
}
