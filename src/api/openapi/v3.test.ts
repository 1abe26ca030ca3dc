import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isPlainObject, type JsonRecord } from '../json.js';
import { RESOURCES } from '../resources.js';
import type { Schema } from '../schema/schema.js';
import {
  buildGroupVersionDocument,
  Components,
  fnv1a64,
  openAPIV3Document,
  openAPIV3Documents,
  openAPIV3Index,
} from './v3.js';

const obj = (v: unknown): JsonRecord => {
  assert.ok(isPlainObject(v), JSON.stringify(v));
  return v;
};
const doc = (path: string): JsonRecord => {
  const d = openAPIV3Document(path);
  assert.ok(d !== undefined, path);
  return JSON.parse(d.json) as JsonRecord;
};

/** Follow a $ref, or a single-element allOf around one, the way kubectl explain does. */
function resolve(document: JsonRecord, schema: JsonRecord): JsonRecord {
  const allOf = schema['allOf'];
  const target = Array.isArray(allOf) && schema['properties'] === undefined ? obj(allOf[0]) : schema;
  const ref = target['$ref'];
  if (typeof ref !== 'string') return target;
  const name = ref.replace('#/components/schemas/', '');
  return obj(obj(obj(document['components'])['schemas'])[name]);
}

/** The schema at a dotted field path of a kind, descending through lists. */
function field(document: JsonRecord, root: string, path: string[]): JsonRecord {
  let s = obj(obj(obj(document['components'])['schemas'])[root]);
  for (const step of path) {
    s = resolve(document, s);
    while (s['items'] !== undefined) s = resolve(document, obj(s['items']));
    s = obj(obj(s['properties'])[step]);
  }
  return s;
}

describe('fnv1a64', () => {
  it('matches the published FNV-1a 64-bit test vectors', () => {
    assert.equal(fnv1a64(''), 'CBF29CE484222325');
    assert.equal(fnv1a64('a'), 'AF63DC4C8601EC8C');
    assert.equal(fnv1a64('foobar'), '85944171F73967E8');
  });

  it('agrees with a BigInt implementation over UTF-8 bytes', () => {
    const reference = (s: string): string => {
      let h = 0xcbf29ce484222325n;
      for (const b of new TextEncoder().encode(s))
        h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn;
      return h.toString(16).padStart(16, '0').toUpperCase();
    };
    for (const s of [
      '{"paths":{}}',
      'héllo wörld ✓',
      'x'.repeat(1000),
      openAPIV3Document('api/v1')?.json ?? '',
    ])
      assert.equal(fnv1a64(s), reference(s));
  });
});

describe('/openapi/v3 index', () => {
  it('lists one document per served group-version, with its content hash in the URL', () => {
    const index = openAPIV3Index();
    assert.deepEqual(Object.keys(index.paths), [
      'api/v1',
      'apis/apps/v1',
      'apis/certificates.k8s.io/v1',
      'apis/coordination.k8s.io/v1',
      'apis/discovery.k8s.io/v1',
      'apis/events.k8s.io/v1',
      'apis/rbac.authorization.k8s.io/v1',
      'apis/superedge.io/v1',
    ]);
    for (const [path, entry] of Object.entries(index.paths)) {
      const d = openAPIV3Document(path);
      assert.ok(d !== undefined);
      assert.equal(d.hash, fnv1a64(d.json));
      assert.equal(entry.serverRelativeURL, `/openapi/v3/${path}?hash=${d.hash}`);
    }
    assert.equal(openAPIV3Document('/api/v1'), openAPIV3Document('api/v1'));
    assert.equal(openAPIV3Document('apis/nope/v1'), undefined);
  });

  it('is deterministic', () => {
    assert.deepEqual(
      buildGroupVersionDocument('', 'v1'),
      JSON.parse(openAPIV3Documents().get('api/v1')?.json ?? ''),
    );
    assert.equal(buildGroupVersionDocument('nope.io', 'v1'), undefined);
  });
});

describe('group-version documents', () => {
  it('have a PATCH on every item path with the kind and the write parameters kubectl looks for', () => {
    for (const r of RESOURCES) {
      const d = doc(r.group === '' ? 'api/v1' : `apis/${r.group}/${r.version}`);
      assert.equal(d['openapi'], '3.0.0');
      const paths = obj(d['paths']);
      const prefix = r.group === '' ? '/api/v1' : `/apis/${r.group}/${r.version}`;
      const collection = `${prefix}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.resource}`;
      const items = [`${collection}/{name}`, ...(r.hasStatus ? [`${collection}/{name}/status`] : [])];
      for (const item of items) {
        const patch = obj(obj(paths[item])['patch']);
        assert.deepEqual(patch['x-kubernetes-group-version-kind'], {
          group: r.group,
          version: r.version,
          kind: r.kind,
        });
        const params = (patch['parameters'] as JsonRecord[])
          .filter((p) => p['in'] === 'query')
          .map((p) => p['name']);
        for (const name of ['fieldValidation', 'dryRun', 'fieldManager', 'force'])
          assert.ok(params.includes(name), `${item} ${name}`);
        const content = Object.keys(obj(obj(patch['requestBody'])['content']));
        assert.equal(content.includes('application/strategic-merge-patch+json'), !r.custom, item);
        assert.ok(content.includes('application/merge-patch+json'));
        assert.ok(content.includes('application/apply-patch+yaml'));
      }
      const coll = obj(paths[collection]);
      for (const verb of ['get', 'post', 'delete'])
        assert.ok(coll[verb] !== undefined, `${collection} ${verb}`);
      const post = obj(coll['post']);
      assert.ok((post['parameters'] as JsonRecord[]).some((p) => p['name'] === 'fieldValidation'));
      if (r.namespaced) assert.ok(paths[`${prefix}/${r.resource}`] !== undefined);
      if (!r.hasStatus) assert.equal(paths[`${collection}/{name}/status`], undefined);
    }
  });

  it('publish every kind and list as a component tagged with its group-version-kind', () => {
    const component = (path: string, name: string): JsonRecord =>
      obj(obj(obj(doc(path)['components'])['schemas'])[name]);
    const cases: Array<[string, string, string, string]> = [
      ['api/v1', 'io.k8s.api.core.v1.Service', '', 'Service'],
      ['api/v1', 'io.k8s.api.core.v1.ServiceList', '', 'ServiceList'],
      ['api/v1', 'io.k8s.api.core.v1.Event', '', 'Event'],
      ['apis/events.k8s.io/v1', 'io.k8s.api.events.v1.Event', 'events.k8s.io', 'Event'],
      [
        'apis/discovery.k8s.io/v1',
        'io.k8s.api.discovery.v1.EndpointSlice',
        'discovery.k8s.io',
        'EndpointSlice',
      ],
      ['apis/coordination.k8s.io/v1', 'io.k8s.api.coordination.v1.Lease', 'coordination.k8s.io', 'Lease'],
      ['apis/apps/v1', 'io.k8s.api.apps.v1.Deployment', 'apps', 'Deployment'],
      ['apis/superedge.io/v1', 'io.superedge.v1.ServiceGrid', 'superedge.io', 'ServiceGrid'],
      ['apis/superedge.io/v1', 'io.superedge.v1.DeploymentGrid', 'superedge.io', 'DeploymentGrid'],
      [
        'apis/rbac.authorization.k8s.io/v1',
        'io.k8s.api.rbac.v1.ClusterRoleBinding',
        'rbac.authorization.k8s.io',
        'ClusterRoleBinding',
      ],
    ];
    for (const [path, name, group, kind] of cases) {
      const c = component(path, name);
      assert.deepEqual(c['x-kubernetes-group-version-kind'], [{ group, kind, version: 'v1' }], name);
      assert.equal(c['type'], 'object');
    }
    assert.match(String(component('api/v1', 'io.k8s.api.core.v1.Service')['description']), /Service/);
  });

  it('resolve every $ref, and wrap a $ref in allOf only to carry field keys', () => {
    for (const d of openAPIV3Documents().values()) {
      const document = JSON.parse(d.json) as JsonRecord;
      const schemas = obj(obj(document['components'])['schemas']);
      const visit = (v: unknown): void => {
        if (Array.isArray(v)) return v.forEach(visit);
        if (typeof v !== 'object' || v === null) return;
        const o = v as JsonRecord;
        if (typeof o['$ref'] === 'string') {
          assert.deepEqual(Object.keys(o), ['$ref'], d.path);
          assert.ok(schemas[o['$ref'].replace('#/components/schemas/', '')] !== undefined, o['$ref']);
        }
        if (o['allOf'] !== undefined) {
          assert.equal((o['allOf'] as unknown[]).length, 1);
          assert.equal(o['properties'], undefined);
          assert.equal(o['type'], undefined);
        }
        Object.values(o).forEach(visit);
      };
      visit(document);
    }
  });

  it('let a reader walk service.spec.ports to targetPort, its description and type', () => {
    const d = doc('api/v1');
    const ports = field(d, 'io.k8s.api.core.v1.Service', ['spec', 'ports']);
    assert.equal(ports['type'], 'array');
    assert.equal(ports['x-kubernetes-patch-strategy'], 'merge');
    assert.equal(ports['x-kubernetes-patch-merge-key'], 'port');
    assert.deepEqual(ports['x-kubernetes-list-map-keys'], ['port', 'protocol']);
    const targetPort = field(d, 'io.k8s.api.core.v1.Service', ['spec', 'ports', 'targetPort']);
    assert.match(String(targetPort['description']), /Port on the selected pods/);
    const intOrString = resolve(d, targetPort);
    assert.equal(intOrString['x-kubernetes-int-or-string'], true);
    assert.equal(intOrString['type'], undefined);
    const conditions = field(d, 'io.k8s.api.core.v1.Pod', ['status', 'conditions']);
    assert.equal(conditions['x-kubernetes-patch-merge-key'], 'type');
    const fieldsV1 = resolve(
      d,
      field(d, 'io.k8s.api.core.v1.Pod', ['metadata', 'managedFields', 'fieldsV1']),
    );
    assert.equal(fieldsV1['x-kubernetes-preserve-unknown-fields'], true);
  });
});

describe('Components', () => {
  it('refuses two different schemas under one name', () => {
    const c = new Components();
    c.use({ name: 'X', type: 'object', properties: { a: { type: 'string' } } });
    c.use({ name: 'X', type: 'object', properties: { a: { type: 'string' } }, description: 'same shape' });
    assert.throws(
      () => c.use({ name: 'X', type: 'object', properties: { b: { type: 'string' } } }),
      /two different schemas are named X/,
    );
  });

  it('writes the Swagger 2.0 dialect for the v2 document', () => {
    const c = new Components('v2');
    const port: Schema = { name: 'IntOrString', 'x-kubernetes-int-or-string': true, description: 'a port' };
    assert.deepEqual(c.use(port), { description: 'a port', $ref: '#/definitions/IntOrString' });
    assert.deepEqual(c.schemas.get('IntOrString'), { type: 'string', format: 'int-or-string' });
    const v3 = new Components('v3');
    assert.deepEqual(v3.use(port), {
      description: 'a port',
      allOf: [{ $ref: '#/components/schemas/IntOrString' }],
    });
    assert.deepEqual(v3.schemas.get('IntOrString'), {
      'x-kubernetes-int-or-string': true,
      anyOf: [{ type: 'integer' }, { type: 'string' }],
    });
  });
});
