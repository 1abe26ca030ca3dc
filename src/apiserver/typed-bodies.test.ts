// Every write path type-checks the body against the kind's schema before storing anything: a value of
// the wrong JSON type at any path of any kind's schema is a 400 (or a 422 where kube-apiserver
// validates instead of decoding: patches, custom resources), and the stored object is untouched.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { isPlainObject } from '../api/json.js';
import { RESOURCES, type ResourceInfo } from '../api/resources.js';
import { schemaFor } from '../api/schema/index.js';
import type { Schema } from '../api/schema/schema.js';
import { resourcePath } from '../runtime/client.js';
import { startInProcessApiServer, type InProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { MINIMAL_OBJECTS as FIXTURES } from '../../test/support/minimal-objects.js';
import { createCertificateRequest } from './auth/pki.js';

type Step = string | 0;

/** Every path of a schema (to `depth`), with the schema there; a list is entered at its first item. */
function schemaPaths(s: Schema, depth: number, at: Step[] = [], out: Array<[Step[], Schema]> = []) {
  const free =
    s['x-kubernetes-preserve-unknown-fields'] === true &&
    s.properties === undefined &&
    s.additionalProperties === undefined;
  if (at.length > 0 && !free && (s.type !== undefined || s['x-kubernetes-int-or-string'] === true))
    out.push([at, s]);
  if (depth === 0 || free) return out;
  for (const [k, sub] of Object.entries(s.properties ?? {})) schemaPaths(sub, depth - 1, [...at, k], out);
  if (s.additionalProperties !== undefined) schemaPaths(s.additionalProperties, depth - 1, [...at, 'k'], out);
  if (s.items !== undefined) schemaPaths(s.items, depth - 1, [...at, 0], out);
  return out;
}

const CANDIDATES: readonly unknown[] = ['x', 7, 1.5, true, { a: 1 }, [1]];

/** The candidates each schema type takes, by index into CANDIDATES (Go's encoding/json rules). */
const TAKEN: Record<string, readonly number[]> = {
  object: [4],
  array: [5],
  string: [0],
  integer: [1],
  number: [1, 2],
  boolean: [3],
  intOrString: [0, 1],
  quantity: [0, 1, 2],
};

/** Values of a JSON type the schema node does not take (what Go's decoder refuses). */
function wrongValues(s: Schema): unknown[] {
  const kind =
    s['x-kubernetes-int-or-string'] !== true
      ? (s.type ?? 'object')
      : s.name?.endsWith('Quantity') === true
        ? 'quantity'
        : 'intOrString';
  return CANDIDATES.filter((_, i) => !TAKEN[kind]!.includes(i));
}

/** A copy of `obj` with `value` at `path`, making the containers on the way. */
function withValueAt(obj: object, path: readonly Step[], value: unknown): Record<string, unknown> {
  const root = structuredClone(obj) as Record<string, unknown>;
  let cur: Record<string | number, unknown> = root;
  path.forEach((step, i) => {
    if (i === path.length - 1) {
      cur[step] = value;
      return;
    }
    const next = path[i + 1] === 0 ? [] : {};
    const have = cur[step];
    const keep = path[i + 1] === 0 ? Array.isArray(have) : isPlainObject(have);
    if (!keep) cur[step] = next;
    cur = cur[step] as Record<string | number, unknown>;
  });
  return root;
}

const CSR = 'certificates.k8s.io/CertificateSigningRequest';
/** The minimal objects, the CertificateSigningRequest's with a request the server can parse. */
const MINIMAL_OBJECTS: Record<string, object> = {
  ...FIXTURES,
  [CSR]: withValueAt(
    FIXTURES[CSR]!,
    ['spec', 'request'],
    Buffer.from(createCertificateRequest({ commonName: 'x', organizations: [] }).csrPem).toString('base64'),
  ),
};

const KINDS = RESOURCES.filter((r) => schemaFor(r.group, r.kind) !== undefined);

describe('type-checked bodies on every write path', () => {
  let api: InProcessApiServer;

  const send = async (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH',
    path: string,
    body?: unknown,
    contentType?: string,
  ) => {
    const res = await api.transport(api.token).send({
      method,
      path,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(contentType === undefined ? {} : { contentType }),
    });
    const chunks: Buffer[] = [];
    for await (const c of res.body) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return { status: res.status, text, json: JSON.parse(text) as Record<string, unknown> };
  };

  const nameOf = (r: ResourceInfo): string =>
    (MINIMAL_OBJECTS[`${r.group}/${r.kind}`] as { metadata: { name: string } }).metadata.name;

  /** The stored object of this kind, as GET answers it. */
  const stored = async (r: ResourceInfo) => send('GET', resourcePath(r, 'd', nameOf(r)));

  before(async () => {
    api = await startInProcessApiServer();
    assert.equal((await send('POST', '/api/v1/namespaces', { metadata: { name: 'd' } })).status, 201);
    for (const r of KINDS) {
      const res = await send('POST', resourcePath(r, 'd'), MINIMAL_OBJECTS[`${r.group}/${r.kind}`]);
      assert.equal(res.status, 201, `${r.group}/${r.kind}: ${res.text}`);
    }
  });
  after(() => api?.stop());

  // kube-apiserver's wording for each write path (handlers/create.go and update.go: transformDecodeError;
  // handlers/patch.go: the patched object fails to decode → Invalid on `patch`; fieldmanager: the apply
  // configuration fails to convert; apiextensions-apiserver: schema validation of custom resources).
  const NODES = '/api/v1/nodes';
  const wording: Array<{
    name: string;
    method: 'POST' | 'PUT' | 'PATCH';
    path: string;
    body: unknown;
    contentType?: string;
    code: number;
    message: string;
  }> = [
    {
      name: 'POST a Node whose status is a string',
      method: 'POST',
      path: NODES,
      body: { metadata: { name: 'bad' }, status: 'garbage' },
      code: 400,
      message:
        'Node in version "v1" cannot be handled as a Node: json: cannot unmarshal string into Go struct field Node.status of type v1.NodeStatus',
    },
    {
      name: 'PUT nodes/status with conditions a string',
      method: 'PUT',
      path: `${NODES}/n1/status`,
      body: { metadata: { name: 'n1' }, status: { conditions: 'x' } },
      code: 400,
      message:
        'Node in version "v1" cannot be handled as a Node: json: cannot unmarshal string into Go struct field NodeStatus.status.conditions of type []v1.NodeCondition',
    },
    {
      name: 'merge patch of nodes/status with conditions a string',
      method: 'PATCH',
      path: `${NODES}/n1/status`,
      body: { status: { conditions: 'x' } },
      contentType: 'application/merge-patch+json',
      code: 422,
      message:
        'json: cannot unmarshal string into Go struct field NodeStatus.status.conditions of type []v1.NodeCondition',
    },
    {
      name: 'server-side apply of a Node with conditions a string',
      method: 'PATCH',
      path: `${NODES}/n1?fieldManager=t`,
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' }, status: { conditions: 'x' } },
      contentType: 'application/apply-patch+yaml',
      code: 400,
      message:
        'failed to create typed patch object (/v1, Kind=Node): .status.conditions: json: cannot unmarshal string into Go struct field NodeStatus.status.conditions of type []v1.NodeCondition',
    },
    {
      name: 'PUT deployments/scale with replicas a string',
      method: 'PUT',
      path: '/apis/apps/v1/namespaces/d/deployments/x/scale',
      body: { metadata: { name: 'x', namespace: 'd' }, spec: { replicas: '3' } },
      code: 400,
      message:
        'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32',
    },
    {
      name: 'merge patch of deployments/scale with replicas a bool',
      method: 'PATCH',
      path: '/apis/apps/v1/namespaces/d/deployments/x/scale',
      body: { spec: { replicas: true } },
      contentType: 'application/merge-patch+json',
      code: 422,
      message: 'json: cannot unmarshal bool into Go struct field ScaleSpec.spec.replicas of type int32',
    },
    {
      name: 'POST pods/binding with a string target',
      method: 'POST',
      path: '/api/v1/namespaces/d/pods/p/binding',
      body: { metadata: { name: 'p' }, target: 'n1' },
      code: 400,
      message:
        'Binding in version "v1" cannot be handled as a Binding: json: cannot unmarshal string into Go struct field Binding.target of type v1.ObjectReference',
    },
    {
      name: 'POST a ServiceGrid whose port is a string (a custom resource: validated, 422)',
      method: 'POST',
      path: '/apis/superedge.io/v1/namespaces/d/servicegrids',
      body: { metadata: { name: 'g' }, spec: { gridUniqKey: 'z', template: { ports: [{ port: 'x' }] } } },
      code: 422,
      message:
        'ServiceGrid.superedge.io "g" is invalid: spec.template.ports[0].port: Invalid value: "string": spec.template.ports[0].port in body must be of type integer: "string"',
    },
  ];
  for (const row of wording) {
    it(`${row.name} → ${row.code}, nothing stored`, async () => {
      const pod = (await send('GET', '/api/v1/namespaces/d/pods/p')).json;
      const node = (await send('GET', `${NODES}/n1`)).json;
      const res = await send(row.method, row.path, row.body, row.contentType);
      assert.equal(res.status, row.code, res.text);
      assert.equal(res.json['reason'], row.code === 400 ? 'BadRequest' : 'Invalid');
      if (row.code === 422 && row.method === 'PATCH') {
        const causes = (res.json['details'] as { causes: Array<{ field: string; message: string }> }).causes;
        assert.equal(causes[0]!.field, 'patch');
        assert.ok(causes[0]!.message.endsWith(`: ${row.message}`), causes[0]!.message);
      } else assert.equal(res.json['message'], row.message);
      assert.deepEqual((await send('GET', '/api/v1/namespaces/d/pods/p')).json, pod);
      assert.deepEqual((await send('GET', `${NODES}/n1`)).json, node);
      assert.equal((await send('GET', `${NODES}/bad`)).status, 404);
    });
  }

  for (const r of KINDS) {
    const kind = `${r.group}/${r.kind}`;
    const paths = schemaPaths(schemaFor(r.group, r.kind)!, 6).filter(([, s]) => wrongValues(s).length > 0);
    it(`${kind}: create, update, merge patch and status update refuse a wrong type at any path`, async () => {
      const before = (await stored(r)).json;
      const minimal = MINIMAL_OBJECTS[kind]!;
      const bad = fc
        .constantFrom(...paths)
        .chain(([p, s]) => fc.constantFrom(...wrongValues(s)).map((v) => [p, v] as const));
      await fc.assert(
        fc.asyncProperty(bad, async ([path, value]) => {
          const obj = withValueAt(minimal, path, value);
          const where = `${kind} ${path.join('.')} = ${JSON.stringify(value)}`;
          const refused = (res: { status: number; json: Record<string, unknown> }, what: string) => {
            assert.ok(
              res.status === 400 || res.status === 422,
              `${what} ${where}: ${res.status} ${JSON.stringify(res.json)}`,
            );
            assert.equal(res.json['kind'], 'Status', `${what} ${where}`);
          };
          // create under another name: refused, and nothing of that name exists afterwards
          const fresh = withValueAt(withValueAt(minimal, ['metadata', 'name'], 'fresh'), path, value);
          refused(await send('POST', resourcePath(r, 'd'), fresh), 'create');
          assert.equal((await send('GET', resourcePath(r, 'd', 'fresh'))).status, 404, `create ${where}`);
          refused(await send('PUT', resourcePath(r, 'd', nameOf(r)), obj), 'update');
          refused(
            await send('PATCH', resourcePath(r, 'd', nameOf(r)), obj, 'application/merge-patch+json'),
            'merge patch',
          );
          if (r.hasStatus)
            refused(await send('PUT', resourcePath(r, 'd', nameOf(r), 'status'), obj), 'status update');
          assert.deepEqual((await stored(r)).json, before, `the stored object changed: ${where}`);
        }),
        { numRuns: 25 },
      );
    });
  }
});
