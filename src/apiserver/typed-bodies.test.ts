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

/** Values of a JSON type the schema node does not take (what Go's decoder refuses). */
function wrongValues(s: Schema): unknown[] {
  const takes = (v: unknown): boolean => {
    if (s['x-kubernetes-int-or-string'] === true)
      return (
        typeof v === 'string' ||
        (typeof v === 'number' && (s.name?.endsWith('Quantity') === true || Number.isInteger(v)))
      );
    switch (s.type) {
      case 'object':
        return isPlainObject(v);
      case 'array':
        return Array.isArray(v);
      case 'string':
        return typeof v === 'string';
      case 'integer':
        return typeof v === 'number' && Number.isInteger(v);
      case 'number':
        return typeof v === 'number';
      default:
        return typeof v === 'boolean';
    }
  };
  return CANDIDATES.filter((v) => !takes(v));
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
