import assert from 'node:assert/strict';
import { hasApproval } from '../subresources.js';
import { describe, it } from 'node:test';
import { RESOURCES } from '../resources.js';
import { openAPIV2Protobuf } from './v2-protobuf.js';

// A protobuf reader for the test: every field of the document is length-delimited.
type Message = Map<number, Uint8Array[]>;

function readVarint(buf: Uint8Array, at: number): [number, number] {
  let n = 0;
  let mul = 1;
  for (let i = at; ; i++) {
    const b = buf[i];
    assert.ok(b !== undefined, 'truncated varint');
    n += (b & 0x7f) * mul;
    mul *= 0x80;
    if (b < 0x80) return [n, i + 1];
  }
}

function decode(buf: Uint8Array): Message {
  const out: Message = new Map();
  let at = 0;
  while (at < buf.length) {
    const [key, next] = readVarint(buf, at);
    assert.equal(key & 7, 2, `field ${key >> 3} is length-delimited`);
    const [len, start] = readVarint(buf, next);
    assert.ok(start + len <= buf.length, 'field overruns its message');
    const list = out.get(key >> 3) ?? [];
    list.push(buf.subarray(start, start + len));
    out.set(key >> 3, list);
    at = start + len;
  }
  return out;
}

const text = (b: Uint8Array | undefined): string => new TextDecoder().decode(b);
const all = (m: Message, field: number): Message[] => (m.get(field) ?? []).map(decode);
const one = (m: Message, field: number): Message => {
  const [first] = all(m, field);
  assert.ok(first !== undefined, `field ${field}`);
  return first;
};
const str = (m: Message, field: number): string => text(m.get(field)?.[0]);
const strs = (m: Message, field: number): string[] => (m.get(field) ?? []).map(text);

/** A repeated Named* message as a map from name to the decoded value. */
const named = (m: Message, field: number): Map<string, Message> =>
  new Map(all(m, field).map((n) => [str(n, 1), one(n, 2)]));

/** Vendor extensions (NamedAny, value Any.yaml) as name → YAML text. */
const extensions = (m: Message, field: number): Map<string, string> =>
  new Map(all(m, field).map((n) => [str(n, 1), str(one(n, 2), 2)]));

describe('/openapi/v2 protobuf document', () => {
  const document = decode(openAPIV2Protobuf());

  it('is a Swagger 2.0 document with info', () => {
    assert.equal(str(document, 1), '2.0');
    const info = one(document, 2);
    assert.equal(str(info, 1), 'Kubernetes');
    assert.ok(str(info, 2).length > 0);
  });

  it('has a PATCH with fieldValidation and the group-version-kind for every item path', () => {
    const paths = named(one(document, 8), 2);
    for (const r of RESOURCES) {
      const prefix = r.group === '' ? '/api/v1' : `/apis/${r.group}/${r.version}`;
      const item = `${prefix}${r.namespaced ? '/namespaces/{namespace}' : ''}/${r.resource}/{name}`;
      for (const p of [
        item,
        ...(r.hasStatus ? [`${item}/status`] : []),
        ...(hasApproval(r) ? [`${item}/approval`] : []),
      ]) {
        const pathItem = paths.get(p);
        assert.ok(pathItem !== undefined, p);
        const patch = one(pathItem, 8);
        const params = all(patch, 8).map((pi) => one(one(one(pi, 1), 2), 3));
        const query = new Map(params.map((q) => [str(q, 4), str(q, 2)]));
        for (const name of ['fieldValidation', 'dryRun', 'fieldManager', 'force'])
          assert.equal(query.get(name), 'query', name);
        const gvk = JSON.parse(extensions(patch, 13).get('x-kubernetes-group-version-kind') ?? 'null');
        assert.deepEqual(gvk, { group: r.group, kind: r.kind, version: r.version });
        assert.equal(strs(patch, 7).includes('application/strategic-merge-patch+json'), !r.custom, p);
      }
    }
    assert.equal(
      paths.size,
      RESOURCES.reduce((n, r) => n + (r.hasStatus ? 2 : 1) + (hasApproval(r) ? 1 : 0), 0),
    );
  });

  it('defines every kind with its group-version-kind, fields and patch metadata', () => {
    const definitions = named(one(document, 9), 1);
    const service = definitions.get('io.k8s.api.core.v1.Service');
    assert.ok(service !== undefined);
    assert.deepEqual(JSON.parse(extensions(service, 31).get('x-kubernetes-group-version-kind') ?? ''), [
      { group: '', kind: 'Service', version: 'v1' },
    ]);
    assert.deepEqual(strs(one(service, 22), 1), ['object']);
    const spec = named(one(service, 25), 1).get('spec');
    assert.ok(spec !== undefined);
    assert.equal(str(spec, 1), '#/definitions/io.k8s.api.core.v1.ServiceSpec');
    const serviceSpec = definitions.get('io.k8s.api.core.v1.ServiceSpec');
    assert.ok(serviceSpec !== undefined);
    const ports = named(one(serviceSpec, 25), 1).get('ports');
    assert.ok(ports !== undefined);
    const ext = extensions(ports, 31);
    assert.equal(JSON.parse(ext.get('x-kubernetes-patch-strategy') ?? ''), 'merge');
    assert.equal(JSON.parse(ext.get('x-kubernetes-patch-merge-key') ?? ''), 'port');
    assert.equal(str(one(one(ports, 23), 1), 1), '#/definitions/io.k8s.api.core.v1.ServicePort');
    const servicePort = definitions.get('io.k8s.api.core.v1.ServicePort');
    assert.ok(servicePort !== undefined);
    assert.deepEqual(strs(servicePort, 19), ['port']);
    const targetPort = named(one(servicePort, 25), 1).get('targetPort');
    assert.ok(targetPort !== undefined);
    assert.match(str(targetPort, 4), /Port on the selected pods/);
    const intOrString = definitions.get('io.k8s.apimachinery.pkg.util.intstr.IntOrString');
    assert.ok(intOrString !== undefined);
    assert.equal(str(intOrString, 2), 'int-or-string');
    const selector = named(one(serviceSpec, 25), 1).get('selector');
    assert.ok(selector !== undefined);
    assert.deepEqual(strs(one(one(one(selector, 21), 1), 22), 1), ['string']);
    for (const name of [
      'io.superedge.v1.ServiceGrid',
      'io.k8s.api.events.v1.Event',
      'io.k8s.api.apps.v1.Deployment',
    ])
      assert.ok(definitions.has(name), name);
  });
});
