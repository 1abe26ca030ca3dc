import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RESOURCES } from '../resources.js';
import { KIND_SCHEMAS, kindSchemaFor, schemaFor } from './index.js';
import type { Schema } from './schema.js';

/** Every node of a schema tree with its path (`spec.ports[]`, `metadata.labels{}`). */
function* walk(schema: Schema, path = ''): Generator<[string, Schema]> {
  yield [path, schema];
  for (const [k, v] of Object.entries(schema.properties ?? {}))
    yield* walk(v, path === '' ? k : `${path}.${k}`);
  if (schema.items !== undefined) yield* walk(schema.items, `${path}[]`);
  if (schema.additionalProperties !== undefined) yield* walk(schema.additionalProperties, `${path}{}`);
}

const at = (schema: Schema, path: string): Schema => {
  const found = [...walk(schema)].find(([p]) => p === path);
  assert.ok(found !== undefined, `no ${path}`);
  return found[1];
};

const service = schemaFor('', 'Service') as Schema;

describe('kind schemas', () => {
  it('cover every served resource, with matching kind and list kind', () => {
    for (const r of RESOURCES) {
      const k = kindSchemaFor(r.group, r.kind);
      assert.ok(k !== undefined, `${r.group}/${r.kind}`);
      assert.equal(k.version, r.version);
      assert.equal(k.listKind, r.listKind);
      assert.equal(schemaFor(r.group, r.listKind), k.listSchema);
    }
    assert.equal(KIND_SCHEMAS.length, RESOURCES.length);
    assert.equal(schemaFor('', 'Nope'), undefined);
    assert.equal(schemaFor('apps', 'Service'), undefined);
    assert.notEqual(schemaFor('', 'Event'), schemaFor('events.k8s.io', 'Event'));
  });

  it('start with apiVersion, kind and metadata, and describe every top-level field', () => {
    for (const k of KIND_SCHEMAS) {
      const props = k.schema.properties ?? {};
      assert.deepEqual(Object.keys(props).slice(0, 3), ['apiVersion', 'kind', 'metadata'], k.kind);
      assert.equal(props['metadata']?.name, 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
      assert.ok(k.schema.description !== undefined, k.kind);
      for (const [f, s] of Object.entries(props)) assert.ok(s.description !== undefined, `${k.kind}.${f}`);
    }
  });

  it('describe every field of Service, ServiceSpec, ServicePort and ObjectMeta', () => {
    for (const path of ['', 'spec', 'spec.ports[]', 'metadata']) {
      const s = at(service, path);
      assert.ok(Object.keys(s.properties ?? {}).length > 0, path);
      for (const [f, sub] of Object.entries(s.properties ?? {}))
        assert.ok((sub.description ?? '').length > 10, `${path}.${f}`);
    }
  });

  it('have the Service fields Kubernetes has, topologyKeys included', () => {
    assert.deepEqual(Object.keys(at(service, 'spec').properties ?? {}).sort(), [
      'allocateLoadBalancerNodePorts',
      'clusterIP',
      'clusterIPs',
      'externalIPs',
      'externalName',
      'externalTrafficPolicy',
      'healthCheckNodePort',
      'internalTrafficPolicy',
      'ipFamilies',
      'ipFamilyPolicy',
      'loadBalancerClass',
      'loadBalancerIP',
      'loadBalancerSourceRanges',
      'ports',
      'publishNotReadyAddresses',
      'selector',
      'sessionAffinity',
      'sessionAffinityConfig',
      'topologyKeys',
      'trafficDistribution',
      'type',
    ]);
    assert.deepEqual(Object.keys(at(service, 'spec.ports[]').properties ?? {}).sort(), [
      'appProtocol',
      'name',
      'nodePort',
      'port',
      'protocol',
      'targetPort',
    ]);
    assert.equal(at(service, 'spec.ports[].targetPort')['x-kubernetes-int-or-string'], true);
    assert.deepEqual(Object.keys(at(service, 'status').properties ?? {}).sort(), [
      'conditions',
      'loadBalancer',
    ]);
  });

  it('carry the patch and list metadata Kubernetes declares', () => {
    const meta = (group: string, kind: string, path: string): unknown[] => {
      const s = at(schemaFor(group, kind) as Schema, path);
      return [
        s['x-kubernetes-patch-strategy'],
        s['x-kubernetes-patch-merge-key'],
        s['x-kubernetes-list-type'],
        s['x-kubernetes-list-map-keys'],
      ];
    };
    const cases: Array<[string, string, string, unknown[]]> = [
      ['', 'Service', 'spec.ports', ['merge', 'port', 'map', ['port', 'protocol']]],
      ['', 'Service', 'status.conditions', ['merge', 'type', 'map', ['type']]],
      ['', 'Service', 'spec.clusterIPs', [undefined, undefined, 'atomic', undefined]],
      ['', 'Service', 'metadata.finalizers', ['merge', undefined, 'set', undefined]],
      ['', 'Service', 'metadata.ownerReferences', ['merge', 'uid', 'map', ['uid']]],
      ['', 'Pod', 'spec.containers', ['merge', 'name', 'map', ['name']]],
      ['', 'Pod', 'spec.containers[].env', ['merge', 'name', 'map', ['name']]],
      [
        '',
        'Pod',
        'spec.containers[].ports',
        ['merge', 'containerPort', 'map', ['containerPort', 'protocol']],
      ],
      ['', 'Pod', 'spec.containers[].volumeMounts', ['merge', 'mountPath', 'map', ['mountPath']]],
      ['', 'Pod', 'spec.volumes', ['merge,retainKeys', 'name', 'map', ['name']]],
      ['', 'Pod', 'spec.tolerations', [undefined, undefined, 'atomic', undefined]],
      ['', 'Pod', 'status.conditions', ['merge', 'type', 'map', ['type']]],
      ['', 'Pod', 'status.podIPs', ['merge', 'ip', 'map', ['ip']]],
      ['', 'Node', 'status.addresses', ['merge', 'type', 'map', ['type']]],
      ['', 'Node', 'status.conditions', ['merge', 'type', 'map', ['type']]],
      ['', 'Node', 'spec.podCIDRs', ['merge', undefined, 'set', undefined]],
      // Kubernetes declares no merge key for taints: the list is replaced as a whole.
      ['', 'Node', 'spec.taints', [undefined, undefined, 'atomic', undefined]],
      ['discovery.k8s.io', 'EndpointSlice', 'endpoints', [undefined, undefined, 'atomic', undefined]],
      [
        'discovery.k8s.io',
        'EndpointSlice',
        'endpoints[].addresses',
        [undefined, undefined, 'set', undefined],
      ],
      ['', 'Endpoints', 'subsets', [undefined, undefined, 'atomic', undefined]],
      ['apps', 'Deployment', 'spec.strategy', ['retainKeys', undefined, undefined, undefined]],
      ['apps', 'Deployment', 'spec.template.spec.containers', ['merge', 'name', 'map', ['name']]],
      ['superedge.io', 'ServiceGrid', 'spec.template.ports', ['merge', 'port', 'map', ['port', 'protocol']]],
    ];
    for (const [group, kind, path, expected] of cases)
      assert.deepEqual(meta(group, kind, path), expected, `${kind} ${path}`);
    assert.equal(at(service, 'spec.selector')['x-kubernetes-map-type'], 'atomic');
    assert.equal(at(service, 'spec.ports[].protocol').default, 'TCP');
    const labels = at(service, 'metadata.labels');
    assert.deepEqual(labels.additionalProperties, { type: 'string' });
    assert.equal(
      at(service, 'metadata.managedFields[].fieldsV1')['x-kubernetes-preserve-unknown-fields'],
      true,
    );
  });

  it('are consistent: keyed lists key on fields of their items, merge keys come with a merge strategy', () => {
    for (const k of KIND_SCHEMAS)
      for (const [path, s] of walk(k.schema)) {
        const where = `${k.kind} ${path}`;
        if (s.type === 'array') assert.ok(s.items !== undefined, where);
        if (s['x-kubernetes-list-type'] !== undefined) assert.equal(s.type, 'array', where);
        if (s['x-kubernetes-list-type'] === 'map') {
          const keys = s['x-kubernetes-list-map-keys'] ?? [];
          assert.ok(keys.length > 0, where);
          for (const key of keys) assert.ok(s.items?.properties?.[key] !== undefined, `${where} key ${key}`);
        }
        const mergeKey = s['x-kubernetes-patch-merge-key'];
        if (mergeKey !== undefined) {
          assert.match(s['x-kubernetes-patch-strategy'] ?? '', /merge/, where);
          assert.ok(s.items?.properties?.[mergeKey] !== undefined, where);
        }
        if (s.required !== undefined)
          for (const r of s.required) assert.ok(s.properties?.[r] !== undefined, `${where} requires ${r}`);
        if (s.type === 'object' && s.properties === undefined && s.additionalProperties === undefined)
          assert.equal(s['x-kubernetes-preserve-unknown-fields'], true, `${where} has no fields`);
      }
  });

  it('share one shape per name', () => {
    const seen = new Map<string, string>();
    const strip = (s: Schema): string => {
      const rest: Schema = { ...s };
      for (const key of [
        'description',
        'default',
        'x-kubernetes-patch-strategy',
        'x-kubernetes-patch-merge-key',
        'x-svcplane-always', // a use-site mark, like description
      ] as const)
        delete rest[key];
      return JSON.stringify(rest);
    };
    for (const k of KIND_SCHEMAS)
      for (const [path, s] of walk(k.schema)) {
        if (s.name === undefined || path === '') continue;
        const prev = seen.get(s.name);
        if (prev === undefined) seen.set(s.name, strip(s));
        else assert.equal(strip(s), prev, s.name);
      }
    assert.ok(seen.size > 100);
  });
});
