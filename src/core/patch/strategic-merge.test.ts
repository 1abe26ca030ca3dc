import fc from 'fast-check';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Schema } from '../../api/schema/schema.js';
import { applyMergePatch, type Json } from './merge-patch.js';
import { PatchError, type PatchErrorKind } from './patch-error.js';
import { applyStrategicMergePatch, MAX_STRATEGIC_MERGE_PATCH_DEPTH } from './strategic-merge.js';

// Small stand-ins for the real kind schemas: only the parts strategic merge patch reads.
const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };
const intOrString: Schema = { 'x-kubernetes-int-or-string': true };
const strMap: Schema = { type: 'object', additionalProperties: str };
const obj = (properties: Record<string, Schema>, extra: Partial<Schema> = {}): Schema => ({
  type: 'object',
  properties,
  ...extra,
});
const arr = (items: Schema, extra: Partial<Schema> = {}): Schema => ({ type: 'array', items, ...extra });
const keyed = (items: Schema, mergeKey: string, strategy = 'merge'): Schema =>
  arr(items, { 'x-kubernetes-patch-strategy': strategy, 'x-kubernetes-patch-merge-key': mergeKey });
const free: Schema = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };

const objectMeta = obj({
  name: str,
  namespace: str,
  resourceVersion: str,
  labels: strMap,
  annotations: strMap,
  finalizers: arr(str, { 'x-kubernetes-patch-strategy': 'merge' }),
  ownerReferences: keyed(obj({ uid: str, kind: str, name: str }), 'uid'),
});

const serviceSchema = obj({
  apiVersion: str,
  kind: str,
  metadata: objectMeta,
  spec: obj({
    type: str,
    selector: strMap,
    clusterIPs: arr(str),
    ports: keyed(obj({ name: str, protocol: str, port: int, targetPort: intOrString }), 'port'),
  }),
  status: obj({ conditions: keyed(obj({ type: str, status: str }), 'type') }),
});

const container = obj({
  name: str,
  image: str,
  args: arr(str),
  env: keyed(obj({ name: str, value: str, valueFrom: obj({ fieldRef: obj({ fieldPath: str }) }) }), 'name'),
  ports: keyed(obj({ containerPort: int, protocol: str, name: str }), 'containerPort'),
  volumeMounts: keyed(obj({ name: str, mountPath: str }), 'mountPath'),
  resources: obj({ limits: strMap, requests: strMap }),
});
const podSpec = obj({
  containers: keyed(container, 'name'),
  initContainers: keyed(container, 'name'),
  volumes: keyed(
    obj({
      name: str,
      emptyDir: obj({ sizeLimit: str }),
      hostPath: obj({ path: str }),
      configMap: obj({ name: str }),
    }),
    'name',
    'merge,retainKeys',
  ),
  tolerations: arr(obj({ key: str, operator: str, value: str, effect: str })),
  nodeSelector: strMap,
});
const podSchema = obj({ apiVersion: str, kind: str, metadata: objectMeta, spec: podSpec });

const deploymentSchema = obj({
  apiVersion: str,
  kind: str,
  metadata: objectMeta,
  spec: obj({
    replicas: int,
    selector: obj({ matchLabels: strMap }),
    template: obj({ metadata: objectMeta, spec: podSpec }),
    strategy: obj(
      { type: str, rollingUpdate: obj({ maxSurge: intOrString, maxUnavailable: intOrString }) },
      { 'x-kubernetes-patch-strategy': 'retainKeys' },
    ),
  }),
});

const endpointSliceSchema = obj({
  apiVersion: str,
  kind: str,
  metadata: objectMeta,
  addressType: str,
  endpoints: arr(
    obj({ addresses: arr(str), conditions: obj({ ready: { type: 'boolean' } }), nodeName: str }),
  ),
  ports: arr(obj({ name: str, port: int, protocol: str })),
});

const eventSchema = obj({
  apiVersion: str,
  kind: str,
  metadata: objectMeta,
  reason: str,
  note: str,
  series: obj({ count: int, lastObservedTime: str }),
  count: int,
  message: str,
  lastTimestamp: str,
});

/** A test-only kind with the less common strategies. */
const oddSchema = obj({
  replacingMap: obj({ a: str, b: str }, { 'x-kubernetes-patch-strategy': 'replace' }),
  mergingObjectsWithoutKey: arr(obj({ a: str }), { 'x-kubernetes-patch-strategy': 'merge' }),
  mergingList: keyed(obj({ name: str, value: str, other: str }), 'name'),
  mergingIntList: arr(int, { 'x-kubernetes-patch-strategy': 'merge' }),
  raw: free,
  known: obj({ list: keyed(obj({ name: str }), 'name'), data: free }),
});

function assertPatchError(fn: () => unknown, kind: PatchErrorKind, message: string | RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof PatchError, `expected a PatchError, got ${String(err)}`);
    assert.equal(err.kind, kind);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

const service = (): Json => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {
    name: 'web',
    namespace: 'default',
    annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"old":true}\n' },
  },
  spec: {
    type: 'ClusterIP',
    selector: { app: 'web' },
    clusterIPs: ['10.96.0.10'],
    ports: [
      { name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 },
      { name: 'https', protocol: 'TCP', port: 443, targetPort: 8443 },
    ],
  },
});

const pod = (): Json => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-0', labels: { app: 'web' }, finalizers: ['a', 'b'] },
  spec: {
    containers: [
      {
        name: 'app',
        image: 'app:v1',
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
        ports: [{ containerPort: 8080, protocol: 'TCP' }],
      },
      { name: 'proxy', image: 'envoy:v1' },
    ],
    volumes: [
      { name: 'data', hostPath: { path: '/srv' } },
      { name: 'config', configMap: { name: 'web' } },
    ],
    tolerations: [
      { key: 'a', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'b', operator: 'Exists', effect: 'NoExecute' },
    ],
    nodeSelector: { zone: 'a' },
  },
});

const at = (doc: Json, ...path: Array<string | number>): Json => {
  let v: Json | undefined = doc;
  for (const p of path) v = (v as Record<string | number, Json>)[p];
  return v ?? null;
};

describe('strategic merge patch: maps', () => {
  it('merges maps key by key, and null deletes a key', () => {
    const out = applyStrategicMergePatch(
      service(),
      {
        metadata: { labels: { tier: 'front' }, annotations: null },
        spec: { type: 'NodePort', selector: { app: null, v: '2' } },
      },
      serviceSchema,
    );
    assert.deepEqual(at(out, 'metadata'), { name: 'web', namespace: 'default', labels: { tier: 'front' } });
    assert.equal(at(out, 'spec', 'type'), 'NodePort');
    assert.deepEqual(at(out, 'spec', 'selector'), { v: '2' });
    assert.equal((at(out, 'spec', 'ports') as Json[]).length, 2);
  });

  it('stores nothing for a null aimed at a key that is not there, however deep', () => {
    const out = applyStrategicMergePatch({ a: 1 }, { b: null, c: { d: null, e: { f: null } } }, undefined);
    assert.deepEqual(out, { a: 1, c: { e: {} } });
  });

  it('treats a null patch as an empty one, as kube-apiserver decodes it', () => {
    assert.deepEqual(applyStrategicMergePatch(service(), null, serviceSchema), service());
  });

  for (const [patch, what] of [
    [[{ op: 'add' }], 'array'],
    ['spec', 'string'],
    [42, 'number'],
    [true, 'boolean'],
  ] as Array<[Json, string]>) {
    it(`rejects a ${what} patch as malformed, in the Go decoder's words`, () => {
      assertPatchError(
        () => applyStrategicMergePatch(service(), patch, serviceSchema),
        'Malformed',
        `json: cannot unmarshal ${what} into Go value of type map[string]interface {}`,
      );
    });
  }

  it('$patch: replace swaps the map for the rest of the patch map', () => {
    const out = applyStrategicMergePatch(
      service(),
      { spec: { selector: { $patch: 'replace', app: 'api', tier: 'back' } } },
      serviceSchema,
    );
    assert.deepEqual(at(out, 'spec', 'selector'), { app: 'api', tier: 'back' });
  });

  it('$patch: replace at the top replaces the whole document', () => {
    const out = applyStrategicMergePatch(service(), { $patch: 'replace', kind: 'Service' }, serviceSchema);
    assert.deepEqual(out, { kind: 'Service' });
  });

  it('$patch: delete removes the map, like null does', () => {
    const deployment: Json = {
      spec: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
    };
    const out = applyStrategicMergePatch(
      deployment,
      { spec: { strategy: { rollingUpdate: { $patch: 'delete' } } } },
      deploymentSchema,
    );
    assert.deepEqual(out, { spec: { strategy: { type: 'RollingUpdate' } } });
    const absent = applyStrategicMergePatch(
      { spec: {} },
      { spec: { strategy: { $patch: 'delete' } } },
      deploymentSchema,
    );
    assert.deepEqual(absent, { spec: {} });
  });

  it('$patch: merge is the default and leaves no trace', () => {
    const out = applyStrategicMergePatch(
      service(),
      { spec: { $patch: 'merge', selector: { $patch: 'merge', tier: 'front' } } },
      serviceSchema,
    );
    assert.deepEqual(at(out, 'spec', 'selector'), { app: 'web', tier: 'front' });
  });

  it('rejects an unknown $patch value as malformed, worded as upstream', () => {
    assertPatchError(
      () =>
        applyStrategicMergePatch(
          service(),
          { spec: { selector: { $patch: 'foo', app: 'x' } } },
          serviceSchema,
        ),
      'Malformed',
      'unknown patch type: foo in map: map[$patch:foo app:x]',
    );
    assertPatchError(
      () => applyStrategicMergePatch(service(), { spec: { $patch: 7 } }, serviceSchema),
      'Malformed',
      /^unknown patch type: 7 in map: /,
    );
  });

  it("replaces a map wholesale where the schema's patch strategy is replace", () => {
    const out = applyStrategicMergePatch(
      { replacingMap: { a: '1', b: '2' } },
      { replacingMap: { b: '3' } },
      oddSchema,
    );
    assert.deepEqual(out, { replacingMap: { b: '3' } });
  });

  it('$retainKeys drops the keys it does not list (kubectl apply switching a Deployment to Recreate)', () => {
    const deployment: Json = {
      spec: {
        replicas: 2,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      },
    };
    const out = applyStrategicMergePatch(
      deployment,
      { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: null, type: 'Recreate' } } },
      deploymentSchema,
    );
    assert.deepEqual(out, { spec: { replicas: 2, strategy: { type: 'Recreate' } } });
  });

  it('rejects a patch that sets a key its own $retainKeys leaves out (422), and a $retainKeys that is not a list (400)', () => {
    const deployment: Json = { spec: { strategy: { type: 'RollingUpdate' } } };
    assertPatchError(
      () =>
        applyStrategicMergePatch(
          deployment,
          { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: { maxSurge: 1 } } } },
          deploymentSchema,
        ),
      'NotApplicable',
      "patch content doesn't match retainKeys list",
    );
    assertPatchError(
      () =>
        applyStrategicMergePatch(
          deployment,
          { spec: { strategy: { $retainKeys: 'type' } } },
          deploymentSchema,
        ),
      'Malformed',
      'invalid patch format of retainKeys',
    );
  });

  it('treats a "__proto__" key as data, never as the prototype', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"x": 1}, "a": 1}') as Json;
    const out = applyStrategicMergePatch({}, patch, serviceSchema) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(out), Object.prototype);
    assert.equal(JSON.stringify(out), '{"__proto__":{"polluted":true},"constructor":{"x":1},"a":1}');
    assert.equal(({} as { polluted?: boolean }).polluted, undefined);
    const removed = applyStrategicMergePatch(
      out as Json,
      JSON.parse('{"__proto__": null}') as Json,
      undefined,
    );
    assert.deepEqual(Object.keys(removed as object), ['constructor', 'a']);
  });
});

describe('strategic merge patch: lists merged by key', () => {
  const lastApplied =
    '{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"ports":[{"port":80,"targetPort":9090}]}}\n';

  it('kubectl apply: updates port 80 and deletes port 443 with {"port":443,"$patch":"delete"}', () => {
    const patch: Json = JSON.parse(
      `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":${JSON.stringify(lastApplied)}}},` +
        '"spec":{"$setElementOrder/ports":[{"port":80}],"ports":[{"port":80,"targetPort":9090},{"$patch":"delete","port":443}]}}',
    ) as Json;
    const out = applyStrategicMergePatch(service(), patch, serviceSchema);
    assert.deepEqual(at(out, 'spec', 'ports'), [
      { name: 'http', protocol: 'TCP', port: 80, targetPort: 9090 },
    ]);
    assert.equal(
      at(out, 'metadata', 'annotations', 'kubectl.kubernetes.io/last-applied-configuration'),
      lastApplied,
    );
    assert.deepEqual(at(out, 'spec', 'selector'), { app: 'web' });
  });

  it('kubectl apply: a $setElementOrder naming only port 80 keeps the server-only port 443 after it', () => {
    const patch: Json = JSON.parse(
      `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":${JSON.stringify(lastApplied)}}},` +
        '"spec":{"$setElementOrder/ports":[{"port":80}],"ports":[{"port":80,"targetPort":9090}]}}',
    ) as Json;
    const out = applyStrategicMergePatch(service(), patch, serviceSchema);
    assert.deepEqual(at(out, 'spec', 'ports'), [
      { name: 'http', protocol: 'TCP', port: 80, targetPort: 9090 },
      { name: 'https', protocol: 'TCP', port: 443, targetPort: 8443 },
    ]);
    assert.equal(JSON.stringify(out).includes('$'), false);
  });

  it('kubectl set image: merges containers by name and keeps every field the patch does not name', () => {
    const out = applyStrategicMergePatch(
      pod(),
      { spec: { containers: [{ name: 'app', image: 'app:v2' }] } },
      podSchema,
    );
    assert.deepEqual(at(out, 'spec', 'containers'), [
      {
        name: 'app',
        image: 'app:v2',
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
        ports: [{ containerPort: 8080, protocol: 'TCP' }],
      },
      { name: 'proxy', image: 'envoy:v1' },
    ]);
  });

  it('merges env by name inside the container the patch names, deleting with $patch: delete', () => {
    const patch = JSON.parse(
      '{"spec":{"containers":[{"name":"app","env":[{"name":"B","value":"20"},{"name":"A","$patch":"delete"},{"name":"C","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}}]}]}}',
    ) as Json;
    const merged = applyStrategicMergePatch(pod(), patch, podSchema);
    assert.deepEqual(at(merged, 'spec', 'containers', 0, 'env'), [
      { name: 'B', value: '20' },
      { name: 'C', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
    ]);
    assert.deepEqual(at(merged, 'spec', 'containers', 1), { name: 'proxy', image: 'envoy:v1' });
  });

  it('puts an element the patch adds without $setElementOrder in front of the existing ones, as upstream does', () => {
    const out = applyStrategicMergePatch(
      pod(),
      { spec: { containers: [{ name: 'sidecar', image: 'busybox' }] } },
      podSchema,
    );
    assert.deepEqual(
      (at(out, 'spec', 'containers') as Array<{ name: string }>).map((c) => c.name),
      ['sidecar', 'app', 'proxy'],
    );
  });

  it('kubectl apply: places an added element where $setElementOrder says', () => {
    const out = applyStrategicMergePatch(
      pod(),
      {
        spec: {
          '$setElementOrder/containers': [{ name: 'app' }, { name: 'proxy' }, { name: 'sidecar' }],
          containers: [{ name: 'sidecar', image: 'busybox' }],
        },
      },
      podSchema,
    );
    assert.deepEqual(
      (at(out, 'spec', 'containers') as Array<{ name: string }>).map((c) => c.name),
      ['app', 'proxy', 'sidecar'],
    );
  });

  it('keeps the order of the patch list for the elements it names (upstream "preserve the order" cases)', () => {
    const original: Json = { mergingList: [{ name: '1' }, { name: '2', value: 'b' }, { name: '3' }] };
    assert.deepEqual(
      applyStrategicMergePatch(
        original,
        {
          mergingList: [
            { name: '3', value: 'c' },
            { name: '1', value: 'a' },
            { name: '2', other: 'x' },
          ],
        },
        oddSchema,
      ),
      {
        mergingList: [
          { name: '3', value: 'c' },
          { name: '1', value: 'a' },
          { name: '2', value: 'b', other: 'x' },
        ],
      },
    );
    assert.deepEqual(
      applyStrategicMergePatch(
        original,
        {
          mergingList: [
            { name: '3', value: 'c' },
            { name: '1', value: 'a' },
          ],
        },
        oddSchema,
      ),
      {
        mergingList: [
          { name: '2', value: 'b' },
          { name: '3', value: 'c' },
          { name: '1', value: 'a' },
        ],
      },
    );
  });

  it('{"$patch":"replace"} as a list element replaces the whole list by the other elements', () => {
    const out = applyStrategicMergePatch(
      service(),
      { spec: { ports: [{ port: 8080, name: 'alt' }, { $patch: 'replace' }] } },
      serviceSchema,
    );
    assert.deepEqual(at(out, 'spec', 'ports'), [{ port: 8080, name: 'alt' }]);
    const emptied = applyStrategicMergePatch(
      service(),
      { spec: { ports: [{ $patch: 'replace' }] } },
      serviceSchema,
    );
    assert.deepEqual(at(emptied, 'spec', 'ports'), []);
  });

  it('$patch: delete removes every element with that key, duplicates included', () => {
    const original: Json = {
      mergingList: [{ name: '1' }, { name: '1' }, { name: '2', value: 'a' }, { name: '3' }, { name: '3' }],
    };
    const out = applyStrategicMergePatch(
      original,
      {
        mergingList: [
          { name: '1', $patch: 'delete' },
          { name: '3', $patch: 'delete' },
        ],
      },
      oddSchema,
    );
    assert.deepEqual(out, { mergingList: [{ name: '2', value: 'a' }] });
  });

  it('kubectl apply: $retainKeys inside a volume swaps its source (volumes are merge,retainKeys)', () => {
    const patch = JSON.parse(
      '{"spec":{"$setElementOrder/volumes":[{"name":"data"},{"name":"config"}],"volumes":[{"$retainKeys":["emptyDir","name"],"emptyDir":{"sizeLimit":"1Gi"},"name":"data"}]}}',
    ) as Json;
    const out = applyStrategicMergePatch(pod(), patch, podSchema);
    assert.deepEqual(at(out, 'spec', 'volumes'), [
      { name: 'data', emptyDir: { sizeLimit: '1Gi' } },
      { name: 'config', configMap: { name: 'web' } },
    ]);
  });

  it('takes a list the object does not have yet as sent, minus its directives', () => {
    const out = applyStrategicMergePatch(
      { metadata: { name: 'x' } },
      {
        metadata: {
          ownerReferences: [
            { uid: 'u1', kind: 'ReplicaSet', name: 'rs' },
            { uid: 'u2', $patch: 'delete' },
          ],
        },
      },
      podSchema,
    );
    assert.deepEqual(out, {
      metadata: { name: 'x', ownerReferences: [{ uid: 'u1', kind: 'ReplicaSet', name: 'rs' }] },
    });
  });

  it("rejects an element without its merge key as malformed, in kubectl's words", () => {
    assertPatchError(
      () => applyStrategicMergePatch(service(), { spec: { ports: [{ targetPort: 9090 }] } }, serviceSchema),
      'Malformed',
      'map: map[targetPort:9090] does not contain declared merge key: port',
    );
    assertPatchError(
      () =>
        applyStrategicMergePatch(
          service(),
          { spec: { ports: [{ $patch: 'delete', name: 'https' }] } },
          serviceSchema,
        ),
      'Malformed',
      'map: map[$patch:delete name:https] does not contain declared merge key: port',
    );
  });

  it('rejects an unknown $patch value in a list element', () => {
    assertPatchError(
      () =>
        applyStrategicMergePatch(
          service(),
          { spec: { ports: [{ port: 80, $patch: 'upsert' }] } },
          serviceSchema,
        ),
      'Malformed',
      'unknown patch type: upsert in map: map[$patch:upsert port:80]',
    );
  });

  it('rejects lists of lists (422) and lists that mix objects with scalars', () => {
    assertPatchError(
      () => applyStrategicMergePatch({ mergingList: [{ name: 'a' }] }, { mergingList: [['a']] }, oddSchema),
      'NotApplicable',
      'lists of lists are not supported',
    );
    assertPatchError(
      () => applyStrategicMergePatch({ mergingList: [] }, { mergingList: [{ name: 'a' }, 'b'] }, oddSchema),
      'Malformed',
      /^list element types are not identical/,
    );
    assertPatchError(
      () => applyStrategicMergePatch({ mergingList: ['a'] }, { mergingList: [{ name: 'a' }] }, oddSchema),
      'NotApplicable',
      /^list element types are not identical/,
    );
  });

  it('refuses to merge objects in a merge list whose schema names no merge key (422)', () => {
    assertPatchError(
      () =>
        applyStrategicMergePatch(
          { mergingObjectsWithoutKey: [{ a: '1' }] },
          { mergingObjectsWithoutKey: [{ a: '2' }] },
          oddSchema,
        ),
      'NotApplicable',
      /^cannot merge lists without merge key/,
    );
  });
});

describe('strategic merge patch: lists without merge strategy', () => {
  it('replaces tolerations wholesale', () => {
    const out = applyStrategicMergePatch(
      pod(),
      { spec: { tolerations: [{ key: 'c', operator: 'Equal', value: 'x', effect: 'NoSchedule' }] } },
      podSchema,
    );
    assert.deepEqual(at(out, 'spec', 'tolerations'), [
      { key: 'c', operator: 'Equal', value: 'x', effect: 'NoSchedule' },
    ]);
  });

  it('replaces EndpointSlice endpoints wholesale', () => {
    const slice: Json = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'web-abc', labels: { 'kubernetes.io/service-name': 'web' } },
      addressType: 'IPv4',
      endpoints: [
        { addresses: ['10.0.0.1'], conditions: { ready: true }, nodeName: 'n1' },
        { addresses: ['10.0.0.2'], conditions: { ready: true }, nodeName: 'n2' },
      ],
      ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
    };
    const out = applyStrategicMergePatch(
      slice,
      { endpoints: [{ addresses: ['10.0.0.2'], conditions: { ready: false } }] },
      endpointSliceSchema,
    );
    assert.deepEqual(at(out, 'endpoints'), [{ addresses: ['10.0.0.2'], conditions: { ready: false } }]);
    assert.deepEqual(at(out, 'ports'), [{ name: 'http', port: 8080, protocol: 'TCP' }]);
  });

  it('replaces a list of scalars without merge strategy, keeping duplicates and order', () => {
    const out = applyStrategicMergePatch(
      service(),
      { spec: { clusterIPs: ['10.96.0.11', '10.96.0.11'] } },
      serviceSchema,
    );
    assert.deepEqual(at(out, 'spec', 'clusterIPs'), ['10.96.0.11', '10.96.0.11']);
  });

  it('leaves no directive in a replaced list', () => {
    const out = applyStrategicMergePatch(
      pod(),
      {
        spec: {
          tolerations: [{ key: 'x', $patch: 'delete' }, { $patch: 'replace' }, { key: 'y', $patch: 'merge' }],
        },
      },
      podSchema,
    );
    assert.deepEqual(at(out, 'spec', 'tolerations'), [{ key: 'y' }]);
  });
});

describe('strategic merge patch: lists of scalars with merge strategy', () => {
  it('merges finalizers as an ordered set: the union, original first', () => {
    const out = applyStrategicMergePatch(pod(), { metadata: { finalizers: ['b', 'c'] } }, podSchema);
    assert.deepEqual(at(out, 'metadata', 'finalizers'), ['a', 'b', 'c']);
  });

  it('puts a value the patch adds alone in front, as upstream does', () => {
    const out = applyStrategicMergePatch(
      pod(),
      { metadata: { finalizers: ['example.com/cleanup'] } },
      podSchema,
    );
    assert.deepEqual(at(out, 'metadata', 'finalizers'), ['example.com/cleanup', 'a', 'b']);
  });

  it('removes the values named by $deleteFromPrimitiveList, duplicates included', () => {
    const out = applyStrategicMergePatch(
      { metadata: { finalizers: ['a', 'b', 'b', 'c'] } },
      { metadata: { '$deleteFromPrimitiveList/finalizers': ['b', 'zzz'] } },
      podSchema,
    );
    assert.deepEqual(out, { metadata: { finalizers: ['a', 'c'] } });
  });

  it('kubectl apply: deletes and orders a list of scalars with $setElementOrder (upstream case)', () => {
    const out = applyStrategicMergePatch(
      { mergingIntList: [1, 2, 3, 4] },
      { '$setElementOrder/mergingIntList': [1, 2], '$deleteFromPrimitiveList/mergingIntList': [3] },
      oddSchema,
    );
    assert.deepEqual(out, { mergingIntList: [1, 2, 4] });
    const added = applyStrategicMergePatch(
      { mergingIntList: [1, 2, 3] },
      {
        '$setElementOrder/mergingIntList': [1, 2, 4],
        '$deleteFromPrimitiveList/mergingIntList': [3],
        mergingIntList: [4],
      },
      oddSchema,
    );
    assert.deepEqual(added, { mergingIntList: [1, 2, 4] });
  });

  it('rejects a malformed $deleteFromPrimitiveList', () => {
    for (const patch of [
      { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } },
      { metadata: { $deleteFromPrimitiveListfinalizers: ['a'] } },
    ] as Json[]) {
      assertPatchError(
        () => applyStrategicMergePatch(pod(), patch, podSchema),
        'Malformed',
        'invalid patch format of primitive list',
      );
    }
  });
});

describe('strategic merge patch: $setElementOrder', () => {
  it('reorders a list without changing its elements', () => {
    const out = applyStrategicMergePatch(
      {
        mergingList: [
          { name: 'B', value: 'b' },
          { name: 'A', value: 'a' },
        ],
      },
      { '$setElementOrder/mergingList': [{ name: 'A' }, { name: 'B' }] },
      oddSchema,
    );
    assert.deepEqual(out, {
      mergingList: [
        { name: 'A', value: 'a' },
        { name: 'B', value: 'b' },
      ],
    });
  });

  it('leaves server-only elements where they stood relative to the ordered ones', () => {
    const out = applyStrategicMergePatch(
      { mergingList: ['C', 'B', 'D', 'A', 'E'].map((name) => ({ name })) },
      {
        '$setElementOrder/mergingList': [{ name: 'A' }, { name: 'B' }],
        mergingList: [
          { name: 'A', value: "A'" },
          { name: 'B', value: "B'" },
        ],
      },
      oddSchema,
    );
    assert.deepEqual(
      (at(out, 'mergingList') as Array<{ name: string }>).map((e) => e.name),
      ['C', 'D', 'A', 'B', 'E'],
    );
  });

  it('kubectl apply of env with server-added variables (design proposal example, interleaved as upstream does)', () => {
    const live: Json = {
      containers: [
        {
          name: 'app',
          env: [
            { name: 'ENV2', value: 'bar' },
            { name: 'ENV5', value: 'server-added-2' },
            { name: 'ENV1', value: 'foo' },
            { name: 'ENV3', value: 'baz' },
            { name: 'ENV4', value: 'server-added-1' },
          ],
        },
      ],
    };
    const patch: Json = {
      containers: [
        {
          name: 'app',
          '$setElementOrder/env': [{ name: 'ENV1' }, { name: 'ENV2' }, { name: 'ENV6' }],
          env: [
            { name: 'ENV3', $patch: 'delete' },
            { name: 'ENV6', value: 'new-env' },
          ],
        },
      ],
    };
    const out = applyStrategicMergePatch(live, patch, podSpec);
    assert.deepEqual(
      (at(out, 'containers', 0, 'env') as Array<{ name: string }>).map((e) => e.name),
      ['ENV5', 'ENV1', 'ENV2', 'ENV6', 'ENV4'],
    );
  });

  it('ignores elements of the order list that the merged list does not have', () => {
    const out = applyStrategicMergePatch(
      { mergingList: [{ name: '1' }, { name: '3' }] },
      {
        '$setElementOrder/mergingList': [{ name: '3' }, { name: '2' }, { name: '1' }],
        mergingList: [
          { name: '3', value: '3' },
          { name: '1', value: '1' },
        ],
      },
      oddSchema,
    );
    assert.deepEqual(out, {
      mergingList: [
        { name: '3', value: '3' },
        { name: '1', value: '1' },
      ],
    });
  });

  it('orders a list the object did not have yet', () => {
    const out = applyStrategicMergePatch(
      {},
      {
        '$setElementOrder/mergingList': [{ name: 'b' }, { name: 'a' }],
        mergingList: [{ name: 'b' }, { name: 'a' }],
      },
      oddSchema,
    );
    assert.deepEqual(out, { mergingList: [{ name: 'b' }, { name: 'a' }] });
  });

  it('rejects a patch list whose order contradicts $setElementOrder', () => {
    assertPatchError(
      () =>
        applyStrategicMergePatch(
          { mergingList: [{ name: '1' }, { name: '3' }, { name: '2' }] },
          {
            '$setElementOrder/mergingList': [{ name: '1' }, { name: '2' }, { name: '3' }],
            mergingList: [
              { name: '3', value: '3' },
              { name: '1', value: '1' },
            ],
          },
          oddSchema,
        ),
      'Malformed',
      /doesn't match \$setElementOrder list/,
    );
  });

  it('rejects a malformed $setElementOrder', () => {
    for (const patch of [
      { '$setElementOrder/mergingList': { name: 'a' } },
      { $setElementOrdermergingList: [{ name: 'a' }] },
    ] as Json[]) {
      assertPatchError(
        () => applyStrategicMergePatch({ mergingList: [] }, patch, oddSchema),
        'Malformed',
        'invalid patch format of setElementOrder list',
      );
    }
    assertPatchError(
      () =>
        applyStrategicMergePatch(
          { mergingList: [] },
          { '$setElementOrder/mergingList': [{ value: 'a' }] },
          oddSchema,
        ),
      'Malformed',
      'map: map[value:a] does not contain declared merge key: name',
    );
  });

  it('is ignored for a list that is replaced anyway', () => {
    const out = applyStrategicMergePatch(
      pod(),
      { spec: { '$setElementOrder/tolerations': [{ key: 'b' }, { key: 'a' }], tolerations: [{ key: 'z' }] } },
      podSchema,
    );
    assert.deepEqual(at(out, 'spec', 'tolerations'), [{ key: 'z' }]);
    assert.equal(JSON.stringify(out).includes('$setElementOrder'), false);
  });
});

describe('strategic merge patch: events', () => {
  it('events.k8s.io/v1 recorder: a series update merges into the existing series', () => {
    const event: Json = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'web.17c2', namespace: 'default' },
      reason: 'BackOff',
      note: 'Back-off restarting failed container',
      series: { count: 1, lastObservedTime: '2024-05-01T10:00:00.000000Z' },
    };
    const out = applyStrategicMergePatch(
      event,
      { series: { count: 2, lastObservedTime: '2024-05-01T10:00:05.000000Z' } },
      eventSchema,
    );
    assert.deepEqual(at(out, 'series'), { count: 2, lastObservedTime: '2024-05-01T10:00:05.000000Z' });
    assert.equal(at(out, 'note'), 'Back-off restarting failed container');
    const first = applyStrategicMergePatch(
      { ...(event as object), series: null } as Json,
      { series: { count: 2, lastObservedTime: '2024-05-01T10:00:05.000000Z' } },
      eventSchema,
    );
    assert.deepEqual(at(first, 'series'), { count: 2, lastObservedTime: '2024-05-01T10:00:05.000000Z' });
  });

  it('core/v1 recorder: a count bump changes count, message and lastTimestamp only', () => {
    const event: Json = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'web.17c2', namespace: 'default' },
      count: 1,
      message: 'Pulling image "app:v1"',
      lastTimestamp: '2024-05-01T10:00:00Z',
    };
    const out = applyStrategicMergePatch(
      event,
      { count: 2, message: 'Pulling image "app:v1"', lastTimestamp: '2024-05-01T10:01:00Z' },
      eventSchema,
    );
    assert.deepEqual(out, { ...(event as object), count: 2, lastTimestamp: '2024-05-01T10:01:00Z' });
  });
});

describe('strategic merge patch: where the schema says nothing', () => {
  it('merges maps and replaces lists without a schema', () => {
    const out = applyStrategicMergePatch(
      { a: { b: 1, c: [1, 2] }, d: [{ name: 'x', v: 1 }] },
      { a: { c: [3] }, d: [{ name: 'x', w: 2 }] },
      undefined,
    );
    assert.deepEqual(out, { a: { b: 1, c: [3] }, d: [{ name: 'x', w: 2 }] });
  });

  it('replaces lists under x-kubernetes-preserve-unknown-fields, even ones named like merge lists', () => {
    const out = applyStrategicMergePatch(
      { known: { list: [{ name: 'a' }], data: { list: [{ name: 'a' }], keep: true } } },
      { known: { list: [{ name: 'b' }], data: { list: [{ name: 'b' }] } } },
      oddSchema,
    );
    assert.deepEqual(out, {
      known: { list: [{ name: 'b' }, { name: 'a' }], data: { list: [{ name: 'b' }], keep: true } },
    });
  });

  it('replaces a value of another type by the patch value', () => {
    const out = applyStrategicMergePatch(
      { raw: [1, 2], mergingList: 'x' },
      { raw: { a: 1 }, mergingList: [{ name: 'n' }] },
      oddSchema,
    );
    assert.deepEqual(out, { raw: { a: 1 }, mergingList: [{ name: 'n' }] });
  });
});

describe('strategic merge patch: inputs', () => {
  it('never modifies its inputs, and the result shares no structure with them', () => {
    const original = pod();
    const patch = JSON.parse(
      '{"metadata":{"labels":{"v":"2"},"finalizers":["c"]},"spec":{"$setElementOrder/containers":[{"name":"app"},{"name":"proxy"}],"containers":[{"name":"app","env":[{"name":"A","$patch":"delete"}]}],"volumes":[{"name":"new","emptyDir":{}}],"tolerations":[{"key":"t"}]}}',
    ) as Json;
    const before = [JSON.stringify(original), JSON.stringify(patch)];
    const out = applyStrategicMergePatch(original, patch, podSchema);
    assert.deepEqual([JSON.stringify(original), JSON.stringify(patch)], before);

    const seen = new Set<object>();
    const collect = (v: Json): void => {
      if (typeof v === 'object' && v !== null) {
        seen.add(v);
        for (const x of Object.values(v)) collect(x);
      }
    };
    collect(original);
    collect(patch);
    const check = (v: Json): void => {
      if (typeof v === 'object' && v !== null) {
        assert.equal(seen.has(v), false, `shared: ${JSON.stringify(v)}`);
        for (const x of Object.values(v)) check(x);
      }
    };
    check(out);
  });

  it(`refuses a patch nested deeper than ${MAX_STRATEGIC_MERGE_PATCH_DEPTH} levels with a PatchError, not a stack overflow`, () => {
    let deep: Json = { leaf: true };
    for (let i = 0; i < 50_000; i++) deep = i % 2 === 0 ? { a: deep } : [deep];
    assertPatchError(
      () => applyStrategicMergePatch({}, { a: deep }, undefined),
      'Malformed',
      /nested deeper than/,
    );
    let ok: Json = 1;
    for (let i = 0; i < MAX_STRATEGIC_MERGE_PATCH_DEPTH - 2; i++) ok = i % 2 === 0 ? { a: ok } : [ok];
    assert.doesNotThrow(() => applyStrategicMergePatch({}, { a: ok }, undefined));
  });
});

describe('strategic merge patch: properties', () => {
  const key = fc.oneof(
    fc.constantFrom(
      'metadata',
      'spec',
      'labels',
      'containers',
      'name',
      'ports',
      'port',
      'finalizers',
      '__proto__',
      'a',
      'b',
    ),
    fc.string({ maxLength: 4 }).filter((k) => !k.startsWith('$')),
  );
  const scalar = fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.boolean());
  const mapOnlyPatch = fc.letrec<{ patch: Json }>((tie) => ({
    patch: fc.dictionary(key, fc.oneof({ depthSize: 'small' }, scalar, fc.constant(null), tie('patch')), {
      maxKeys: 4,
    }) as fc.Arbitrary<Json>,
  })).patch;
  const anyObject = fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>, {
    maxKeys: 4,
  }) as fc.Arbitrary<Json>;

  it('a patch of map changes only (no lists, no directives) does what JSON merge patch does', () => {
    for (const schema of [undefined, podSchema, serviceSchema]) {
      fc.assert(
        fc.property(anyObject, mapOnlyPatch, (original, patch) => {
          assert.deepEqual(
            applyStrategicMergePatch(original, patch, schema),
            applyMergePatch(original, patch),
          );
        }),
        { numRuns: 500 },
      );
    }
  });

  const directiveKey = fc.constantFrom(
    '$patch',
    '$retainKeys',
    '$setElementOrder/ports',
    '$setElementOrder/containers',
    '$setElementOrder/finalizers',
    '$deleteFromPrimitiveList/finalizers',
    '$setElementOrderX',
    '$deleteFromPrimitiveList',
  );
  const patchValue = fc.oneof(
    fc.constantFrom<Json>('replace', 'delete', 'merge', 'bogus', 80, 443, 'app', null, true),
    fc.string({ maxLength: 3 }),
  );
  const wildPatch = fc.letrec<{ value: Json; map: Json; list: Json }>((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, patchValue, tie('map'), tie('list')),
    map: fc.dictionary(fc.oneof(key, directiveKey), tie('value'), { maxKeys: 5 }) as fc.Arbitrary<Json>,
    list: fc.array(tie('value'), { maxLength: 4 }),
  }));
  const wildOriginal = fc.letrec<{ value: Json; map: Json; list: Json }>((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, scalar, tie('map'), tie('list')),
    map: fc.dictionary(key, tie('value'), { maxKeys: 4 }) as fc.Arbitrary<Json>,
    list: fc.array(tie('value'), { maxLength: 4 }),
  }));
  const isDirectiveKey = (k: string): boolean =>
    k === '$patch' ||
    k === '$retainKeys' ||
    k.startsWith('$setElementOrder') ||
    k.startsWith('$deleteFromPrimitiveList');

  it('throws nothing but PatchError, leaves no directive in the result and never touches its inputs', () => {
    for (const schema of [undefined, podSchema, serviceSchema, oddSchema]) {
      fc.assert(
        fc.property(
          fc.oneof(wildOriginal.map, fc.constant(pod()), fc.constant(service())),
          fc.oneof(wildPatch.map, wildPatch.value),
          (original, patch) => {
            const before = [JSON.stringify(original), JSON.stringify(patch)];
            let out: Json;
            try {
              out = applyStrategicMergePatch(original, patch, schema);
            } catch (err) {
              assert.ok(err instanceof PatchError, `not a PatchError: ${String(err)}`);
              return;
            } finally {
              assert.deepEqual([JSON.stringify(original), JSON.stringify(patch)], before);
            }
            const walk = (v: Json): void => {
              if (Array.isArray(v)) v.forEach(walk);
              else if (typeof v === 'object' && v !== null) {
                for (const [k, x] of Object.entries(v)) {
                  assert.equal(isDirectiveKey(k), false, `directive ${k} in ${JSON.stringify(out)}`);
                  walk(x);
                }
              }
            };
            walk(out);
          },
        ),
        { numRuns: 1000 },
      );
    }
  });
});
