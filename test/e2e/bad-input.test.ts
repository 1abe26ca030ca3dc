// Hostile input against a real `svcplane up`: a table of malformed, oversized, mistyped and
// out-of-place requests. Every row must get its exact 4xx code and Status reason as a JSON Status
// (never a 5xx, never a hang), and after the whole table the server must still be ready and hold
// exactly the objects the test created on purpose: no failed request may leave anything behind.
//
// Where svcplane's answer was checked against kube-apiserver, the row says where from. Sources:
//  [create.go]  k8s.io/apiserver/pkg/endpoints/handlers/create.go: ValidateCreateOptions failures are
//               errors.NewInvalid(CreateOptions.meta.k8s.io) → 422; decode errors → 400.
//  [validation] k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go: ValidateDryRun,
//               ValidateFieldValidation (NotSupported), ValidatePatchOptions ("fieldManager: Required
//               value: is required for apply patch"), ValidateDeleteOptions (propagationPolicy NotSupported).
//  [patch.go]   k8s.io/apiserver/pkg/endpoints/handlers/patch.go: jsonpatch.DecodePatch failure → 400,
//               patchObj.Apply failure (bad op, failed test) → NewGenericServerResponse(422) = Invalid.
//  [restful]    k8s.io/apiserver/pkg/server/handler.go serviceErrorHandler: a method go-restful has no route
//               for → NewGenericServerResponse(405) = MethodNotAllowed, "the server does not allow this
//               method on the requested resource".
//  [strict]     kubernetes test/integration/apiserver/field_validation_test.go: Strict lists
//               `duplicate field "metadata.name"` and `unknown field "spec.foo"` as strict decoding errors.
// Deliberate differences: kube answers 500 for a non-numeric resourceVersion (kubernetes#101350) and for
// a create carrying metadata.resourceVersion (etcd3's ErrResourceVersionSetOnCreate); svcplane answers
// 400. Bodies nested deeper than 500 levels are refused with 400 (Go's decoder allows 10000).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { kubectlFor } from './testing/kubectl.js';
import { call, startUp, type Reply, type TestServer } from './testing/server.js';

const SVC = '/api/v1/namespaces/default/services';
const GRIDS = '/apis/superedge.io/v1/namespaces/default/servicegrids';
const MIB = 1024 * 1024;

interface Status {
  kind?: string;
  apiVersion?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes?: { field?: string; reason?: string; message?: string }[] };
}

/** One request, the path sent exactly as written (no URL normalization of `..` or escapes). */
function send(
  srv: TestServer,
  method: string,
  path: string,
  opts: {
    body?: string | Buffer;
    contentType?: string;
    accept?: string;
    headers?: Record<string, string>;
    /** Send the body with Transfer-Encoding: chunked (no Content-Length). */
    chunked?: boolean;
  } = {},
): Promise<Reply> {
  const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port: srv.port,
        path,
        method,
        agent: new Agent({ ca: srv.ca, keepAlive: false }),
        headers: {
          Authorization: `Bearer ${srv.token}`,
          ...(body === undefined ? {} : { 'Content-Type': opts.contentType ?? 'application/json' }),
          ...(body === undefined || opts.chunked === true ? {} : { 'Content-Length': String(body.length) }),
          ...(opts.accept === undefined ? {} : { Accept: opts.accept }),
          ...opts.headers,
        },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: <T>() => JSON.parse(text) as T,
          });
        });
        res.on('error', reject);
      },
    );
    // The server may answer (413) and stop reading before the whole body is written: a write error
    // then is no failure as long as an answer came.
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
    });
    req.on('close', () => {
      if (!answered) reject(Object.assign(new Error('closed without an answer'), { code: 'ECONNRESET' }));
    });
    req.setTimeout(20_000, () =>
      req.destroy(new Error(`no answer in 20 s: ${method} ${path.slice(0, 100)}`)),
    );
    if (body !== undefined) {
      if (opts.chunked === true) {
        for (let i = 0; i < body.length; i += 256 * 1024) req.write(body.subarray(i, i + 256 * 1024));
      } else req.write(body);
    }
    req.end();
  });
}

const service = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, ...((extra['metadata'] as object | undefined) ?? {}) },
  spec: { ports: [{ port: 80 }], ...((extra['spec'] as object | undefined) ?? {}) },
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'metadata' && k !== 'spec')),
});
const json = (v: unknown): string => JSON.stringify(v);

/** A syntactically valid Service whose annotation makes the body `bytes` long. */
function hugeService(bytes: number): string {
  const head = json(service('huge', { metadata: { annotations: { pad: '' } } }));
  return head.replace('"pad":""', `"pad":"${'x'.repeat(bytes - head.length)}"`);
}

interface Row {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  /** A function when the body depends on the live fixture. */
  readonly body?: string | Buffer | (() => string);
  readonly contentType?: string;
  readonly accept?: string;
  readonly chunked?: boolean;
  readonly code: number;
  readonly reason: string;
  /** The Status message: equal to a string, or matching a RegExp. */
  readonly message?: string | RegExp;
  /** A details.causes[].field the Status must name. */
  readonly causeField?: string;
}

// Filled in before the table runs: the fixture's current and first (now stale) resourceVersion.
const live = { rv: '', uid: '', staleRv: '' };

const TABLE: readonly Row[] = [
  // ---------------------------------------------------------------------------------- bodies
  {
    name: 'malformed JSON',
    method: 'POST',
    path: SVC,
    body: '{"apiVersion":"v1","kind":"Service","metadata":{"name":"broken"',
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'malformed YAML (application/yaml)',
    method: 'POST',
    path: SVC,
    body: 'apiVersion: v1\nkind: Service\nmetadata:\n  name: [broken\n',
    contentType: 'application/yaml',
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'malformed YAML (application/apply-patch+yaml)',
    method: 'PATCH',
    path: `${SVC}/fixture?fieldManager=e2e`,
    body: 'apiVersion: v1\nkind: Service\nmetadata: {name: fixture\n  labels: : :\n',
    contentType: 'application/apply-patch+yaml',
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'JSON array body',
    method: 'POST',
    path: SVC,
    body: json([service('in-array')]),
    code: 400,
    reason: 'BadRequest',
  },
  { name: 'JSON string body', method: 'POST', path: SVC, body: '"Service"', code: 400, reason: 'BadRequest' },
  { name: 'JSON null body', method: 'POST', path: SVC, body: 'null', code: 400, reason: 'BadRequest' },
  { name: 'empty body', method: 'POST', path: SVC, body: '', code: 400, reason: 'BadRequest' },
  {
    name: 'apiVersion not matching the path',
    method: 'POST',
    path: SVC,
    body: json(service('wrong-version', { apiVersion: 'apps/v1' })),
    code: 400,
    reason: 'BadRequest',
    message: 'the API version in the data (apps/v1) does not match the expected API version (v1)',
  },
  {
    name: 'kind not matching the path',
    method: 'POST',
    path: SVC,
    body: json(service('wrong-kind', { kind: 'Pod' })),
    code: 400,
    reason: 'BadRequest',
    message: 'the kind in the data (Pod) does not match the expected kind (Service)',
  },
  {
    name: 'body name ≠ URL name',
    method: 'PUT',
    path: `${SVC}/fixture`,
    body: json(service('other')),
    code: 400,
    reason: 'BadRequest',
    message: 'the name of the object (other) does not match the name on the URL (fixture)',
  },
  {
    name: 'body namespace ≠ URL namespace',
    method: 'POST',
    path: SVC,
    body: json(service('elsewhere', { metadata: { namespace: 'kube-system' } })),
    code: 400,
    reason: 'BadRequest',
    message: 'the namespace of the provided object does not match the namespace sent on the request',
  },
  {
    name: 'unknown field with fieldValidation=Strict',
    method: 'POST',
    path: `${SVC}?fieldValidation=Strict`,
    body: json(service('strict', { spec: { foo: 1 } })),
    code: 400,
    reason: 'BadRequest',
    // kube: transformDecodeError prefixes "<Kind> in version "<v>" cannot be handled as a <Kind>: ".
    message: /strict decoding error: unknown field "spec\.foo"$/,
  },
  {
    // kube: duplicate fields are strict decoding errors too (sigs.k8s.io/json UnmarshalStrict).
    name: 'duplicate key with fieldValidation=Strict',
    method: 'POST',
    path: `${SVC}?fieldValidation=Strict`,
    body: '{"apiVersion":"v1","kind":"Service","metadata":{"name":"dup-a","name":"dup-b"},"spec":{"ports":[{"port":80}]}}',
    code: 400,
    reason: 'BadRequest',
    message:
      'Service in version "v1" cannot be handled as a Service: strict decoding error: duplicate field "metadata.name"',
  },
  {
    name: 'JSON nested 10,000 levels deep',
    method: 'POST',
    path: SVC,
    body: '['.repeat(10_000) + ']'.repeat(10_000),
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'JSON nested 10,000 levels deep inside an annotation',
    method: 'POST',
    path: SVC,
    body: json(service('deep', { metadata: { annotations: { a: 'PLACEHOLDER' } } })).replace(
      '"PLACEHOLDER"',
      '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000),
    ),
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'merge patch nested 10,000 levels deep',
    method: 'PATCH',
    path: `${SVC}/fixture`,
    body: '{"metadata":{"annotations":{"a":' + '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_001) + '}}',
    contentType: 'application/merge-patch+json',
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'YAML nested 10,000 levels deep',
    method: 'POST',
    path: SVC,
    body:
      'apiVersion: v1\nkind: Service\nmetadata:\n  name: deep-yaml\n  annotations:\n    a: ' +
      '['.repeat(10_000) +
      ']'.repeat(10_000) +
      '\n',
    contentType: 'application/yaml',
    code: 400,
    reason: 'BadRequest',
  },
  {
    // Go's decoder and Buffer#toString both turn the bad byte into U+FFFD, which no name allows.
    name: 'invalid UTF-8 in the name',
    method: 'POST',
    path: SVC,
    body: Buffer.concat([
      Buffer.from('{"apiVersion":"v1","kind":"Service","metadata":{"name":"bad'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"},"spec":{"ports":[{"port":80}]}}'),
    ]),
    code: 422,
    reason: 'Invalid',
    causeField: 'metadata.name',
  },
  {
    name: 'body over 3 MiB with Content-Length',
    method: 'POST',
    path: SVC,
    body: hugeService(3 * MIB + 1024),
    code: 413,
    reason: 'RequestEntityTooLarge',
    message: `Request entity too large: limit is ${3 * MIB}`,
  },
  {
    name: 'body over 3 MiB, chunked',
    method: 'POST',
    path: SVC,
    body: hugeService(3 * MIB + 1024),
    chunked: true,
    code: 413,
    reason: 'RequestEntityTooLarge',
    message: `Request entity too large: limit is ${3 * MIB}`,
  },
  // ---------------------------------------------------------------------------- query options
  {
    // [create.go] + [validation]: ValidateFieldValidation → CreateOptions Invalid.
    name: 'bad fieldValidation value',
    method: 'POST',
    path: `${SVC}?fieldValidation=Loose`,
    body: json(service('fv')),
    code: 422,
    reason: 'Invalid',
    message:
      'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Loose": supported values: "", "Ignore", "Strict", "Warn"',
    causeField: 'fieldValidation',
  },
  {
    // [create.go] + [validation]: ValidateDryRun → CreateOptions Invalid.
    name: 'dryRun=Foo',
    method: 'POST',
    path: `${SVC}?dryRun=Foo`,
    body: json(service('dry')),
    code: 422,
    reason: 'Invalid',
    message:
      'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Foo"}: supported values: "All"',
    causeField: 'dryRun',
  },
  {
    // [validation]: ValidateDeleteOptions → ValidateDryRun.
    name: 'dryRun=Foo (delete)',
    method: 'DELETE',
    path: `${SVC}/fixture?dryRun=Foo`,
    code: 422,
    reason: 'Invalid',
    message: /^DeleteOptions\.meta\.k8s\.io "" is invalid: dryRun: Unsupported value/,
    causeField: 'dryRun',
  },
  {
    // [validation]: ValidateFieldManager → TooLong.
    name: 'fieldManager longer than 128 characters',
    method: 'PUT',
    path: `${SVC}/fixture?fieldManager=${'m'.repeat(129)}`,
    body: () => json(service('fixture', { metadata: { resourceVersion: live.rv } })),
    code: 422,
    reason: 'Invalid',
    message: /^UpdateOptions\.meta\.k8s\.io "" is invalid: fieldManager: Too long/,
    causeField: 'fieldManager',
  },
  {
    name: 'invalid labelSelector',
    method: 'GET',
    path: `${SVC}?labelSelector=${encodeURIComponent('a in (')}`,
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'fieldSelector on an unknown field label',
    method: 'GET',
    path: `${SVC}?fieldSelector=metadata.nme%3Dx`,
    code: 400,
    reason: 'BadRequest',
    message: 'field label not supported: metadata.nme',
  },
  {
    name: 'fieldSelector on a field services do not support',
    method: 'GET',
    path: `${SVC}?fieldSelector=spec.foo%3D1`,
    code: 400,
    reason: 'BadRequest',
    message: 'field label not supported: spec.foo',
  },
  {
    // kube answers 500 here (kubernetes/kubernetes#101350, kubernetes/kubernetes#139485); 400 is the
    // proposed fix (kubernetes/kubernetes#139525).
    name: 'non-numeric resourceVersion on list',
    method: 'GET',
    path: `${SVC}?resourceVersion=abc`,
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'non-numeric resourceVersion on watch',
    method: 'GET',
    path: `${SVC}?watch=true&resourceVersion=abc`,
    code: 400,
    reason: 'BadRequest',
  },
  {
    // kube: ValidateListOptions → ListOptions.meta.k8s.io Invalid.
    name: 'resourceVersionMatch without resourceVersion',
    method: 'GET',
    path: `${SVC}?resourceVersionMatch=NotOlderThan`,
    code: 422,
    reason: 'Invalid',
    causeField: 'resourceVersionMatch',
  },
  {
    name: 'unsupported resourceVersionMatch',
    method: 'GET',
    path: `${SVC}?resourceVersion=1&resourceVersionMatch=Newest`,
    code: 422,
    reason: 'Invalid',
    causeField: 'resourceVersionMatch',
  },
  {
    name: 'bad continue token',
    method: 'GET',
    path: `${SVC}?limit=1&continue=not-a-token`,
    code: 400,
    reason: 'BadRequest',
  },
  { name: 'non-numeric limit', method: 'GET', path: `${SVC}?limit=ten`, code: 400, reason: 'BadRequest' },
  {
    name: 'watch with sendInitialEvents but no resourceVersionMatch',
    method: 'GET',
    path: `${SVC}?watch=true&sendInitialEvents=true&allowWatchBookmarks=true`,
    code: 422,
    reason: 'Invalid',
    causeField: 'resourceVersionMatch',
  },
  {
    name: 'watch with a negative timeoutSeconds',
    method: 'GET',
    path: `${SVC}?watch=true&timeoutSeconds=-5`,
    code: 400,
    reason: 'BadRequest',
  },
  // ------------------------------------------------------------------------------------ paths
  {
    name: 'unknown resource',
    method: 'GET',
    path: '/api/v1/namespaces/default/widgets',
    code: 404,
    reason: 'NotFound',
  },
  {
    name: 'unknown group',
    method: 'GET',
    path: '/apis/nope.example.com/v1/widgets',
    code: 404,
    reason: 'NotFound',
  },
  {
    name: 'unknown version of a known group',
    method: 'GET',
    path: '/apis/superedge.io/v9/namespaces/default/servicegrids',
    code: 404,
    reason: 'NotFound',
  },
  {
    name: 'unknown subresource',
    method: 'GET',
    path: `${SVC}/fixture/frobnicate`,
    code: 404,
    reason: 'NotFound',
  },
  { name: 'name ".." in the path', method: 'GET', path: `${SVC}/..`, code: 400, reason: 'BadRequest' },
  {
    name: 'name "%2e%2e" in the path',
    method: 'GET',
    path: `${SVC}/%2e%2e`,
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'name "a%2Fb" in the path',
    method: 'DELETE',
    path: `${SVC}/a%2Fb`,
    code: 400,
    reason: 'BadRequest',
  },
  { name: 'a lone "%" in the path', method: 'GET', path: `${SVC}/%`, code: 400, reason: 'BadRequest' },
  {
    name: 'namespace ".." in the path',
    method: 'GET',
    path: '/api/v1/namespaces/../services',
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'namespace "%2e%2e" on create',
    method: 'POST',
    path: '/api/v1/namespaces/%2e%2e/services',
    body: json(service('up-and-out')),
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'create in a namespace that does not exist',
    method: 'POST',
    path: '/api/v1/namespaces/nope/services',
    body: json(service('orphan')),
    code: 404,
    reason: 'NotFound',
    message: 'namespaces "nope" not found',
  },
  // ------------------------------------------------------------------------------- validation
  {
    name: 'uppercase name',
    method: 'POST',
    path: SVC,
    body: json(service('Web')),
    code: 422,
    reason: 'Invalid',
    causeField: 'metadata.name',
  },
  {
    name: 'name longer than 63 characters',
    method: 'POST',
    path: SVC,
    body: json(service('x'.repeat(64))),
    code: 422,
    reason: 'Invalid',
    causeField: 'metadata.name',
  },
  {
    name: 'name starting with "-"',
    method: 'POST',
    path: SVC,
    body: json(service('-x')),
    code: 422,
    reason: 'Invalid',
    causeField: 'metadata.name',
  },
  {
    name: 'invalid label key',
    method: 'POST',
    path: SVC,
    body: json(service('bad-label-key', { metadata: { labels: { 'bad key!': 'v' } } })),
    code: 422,
    reason: 'Invalid',
    causeField: 'metadata.labels',
  },
  {
    name: 'invalid label value',
    method: 'POST',
    path: SVC,
    body: json(service('bad-label-value', { metadata: { labels: { app: '-nope-' } } })),
    code: 422,
    reason: 'Invalid',
    causeField: 'metadata.labels',
  },
  {
    name: 'Service port 70000',
    method: 'POST',
    path: SVC,
    body: json(service('big-port', { spec: { ports: [{ port: 70000 }] } })),
    code: 422,
    reason: 'Invalid',
    causeField: 'spec.ports[0].port',
  },
  // --------------------------------------------------------------------------- media types
  {
    // Custom resources have no protobuf encoding (kube: 415 for CRDs too).
    name: 'protobuf request body for a custom resource',
    method: 'POST',
    path: GRIDS,
    body: Buffer.concat([Buffer.from('k8s\0'), Buffer.from([0x0a, 0x02, 0x76, 0x31])]),
    contentType: 'application/vnd.kubernetes.protobuf',
    code: 415,
    reason: 'UnsupportedMediaType',
  },
  {
    // The protobuf envelope's magic, then a field whose length runs past the end of the body.
    name: 'truncated protobuf request body',
    method: 'POST',
    path: SVC,
    body: Buffer.concat([Buffer.from('k8s\0'), Buffer.from([0x0a, 0x0a])]),
    contentType: 'application/vnd.kubernetes.protobuf',
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'Accept: protobuf only, for a custom resource',
    method: 'GET',
    path: GRIDS,
    accept: 'application/vnd.kubernetes.protobuf',
    code: 406,
    reason: 'NotAcceptable',
  },
  {
    name: 'an unsupported patch content type',
    method: 'PATCH',
    path: `${SVC}/fixture`,
    body: json({ metadata: { labels: { x: 'y' } } }),
    contentType: 'text/plain',
    code: 415,
    reason: 'UnsupportedMediaType',
  },
  {
    name: 'strategic merge patch on servicegrids',
    method: 'PATCH',
    path: `${GRIDS}/grid`,
    body: json({ metadata: { labels: { x: 'y' } } }),
    contentType: 'application/strategic-merge-patch+json',
    code: 415,
    reason: 'UnsupportedMediaType',
  },
  // ------------------------------------------------------------------------------- patches
  {
    // [patch.go]: not a list of operations → DecodePatch fails → 400.
    name: 'JSON patch that is not a list',
    method: 'PATCH',
    path: `${SVC}/fixture`,
    body: json({ op: 'add', path: '/metadata/labels/x', value: 'y' }),
    contentType: 'application/json-patch+json',
    code: 400,
    reason: 'BadRequest',
  },
  {
    // [patch.go]: DecodePatch does not look at the ops; Apply fails ("Unexpected kind") → 422.
    name: 'JSON patch with an unknown op',
    method: 'PATCH',
    path: `${SVC}/fixture`,
    body: json([{ op: 'frobnicate', path: '/metadata/labels/x', value: 'y' }]),
    contentType: 'application/json-patch+json',
    code: 422,
    reason: 'Invalid',
  },
  {
    // [patch.go]: a failing "test" → Apply fails → 422.
    name: 'JSON patch whose test op fails',
    method: 'PATCH',
    path: `${SVC}/fixture`,
    body: json([
      { op: 'test', path: '/metadata/name', value: 'somebody-else' },
      { op: 'add', path: '/metadata/labels/tested', value: 'yes' },
    ]),
    contentType: 'application/json-patch+json',
    code: 422,
    reason: 'Invalid',
  },
  {
    // [validation]: ValidatePatchOptions → PatchOptions Invalid.
    name: 'apply without fieldManager',
    method: 'PATCH',
    path: `${SVC}/fixture`,
    body: json(service('fixture')),
    contentType: 'application/apply-patch+yaml',
    code: 422,
    reason: 'Invalid',
    message:
      'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    causeField: 'fieldManager',
  },
  {
    // [validation]: "force: Forbidden: may not be specified for non-apply patch".
    name: 'force on a merge patch',
    method: 'PATCH',
    path: `${SVC}/fixture?force=true`,
    body: json({ metadata: { labels: { x: 'y' } } }),
    contentType: 'application/merge-patch+json',
    code: 422,
    reason: 'Invalid',
    causeField: 'force',
  },
  // ----------------------------------------------------------------- concurrency, lifecycle
  {
    name: 'a stale resourceVersion',
    method: 'PUT',
    path: `${SVC}/fixture`,
    body: () => json(service('fixture', { metadata: { resourceVersion: live.staleRv } })),
    code: 409,
    reason: 'Conflict',
    message: /^Operation cannot be fulfilled on services "fixture": the object has been modified/,
  },
  {
    // kube-apiserver answers 500 (etcd3 ErrResourceVersionSetOnCreate is not an API status; see
    // fabric8io/kubernetes-client#734); svcplane answers the client error it is.
    name: 'metadata.resourceVersion set on create',
    method: 'POST',
    path: SVC,
    body: json(service('with-rv', { metadata: { resourceVersion: '12' } })),
    code: 400,
    reason: 'BadRequest',
    message: 'resourceVersion should not be set on objects to be created',
  },
  {
    // [validation]: ValidateDeleteOptions → DeleteOptions Invalid.
    name: 'a bad propagationPolicy',
    method: 'DELETE',
    path: `${SVC}/fixture?propagationPolicy=Sideways`,
    code: 422,
    reason: 'Invalid',
    causeField: 'propagationPolicy',
  },
  {
    name: 'a wrong uid precondition',
    method: 'DELETE',
    path: `${SVC}/fixture`,
    body: json({
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      preconditions: { uid: '00000000-0000-0000-0000-000000000000' },
    }),
    code: 409,
    reason: 'Conflict',
    message: /Precondition failed: UID in precondition: 00000000-0000-0000-0000-000000000000/,
  },
  {
    name: 'a body that is not DeleteOptions',
    method: 'DELETE',
    path: `${SVC}/fixture`,
    body: json(service('fixture')),
    code: 400,
    reason: 'BadRequest',
  },
  {
    name: 'deleting the default namespace',
    method: 'DELETE',
    path: '/api/v1/namespaces/default',
    code: 403,
    reason: 'Forbidden',
    message: 'namespaces "default" is forbidden: this namespace may not be deleted',
  },
  // --------------------------------------------------------------------------------- methods
  {
    name: 'a non-resource path (/version)',
    method: 'POST',
    path: '/version',
    body: '{}',
    code: 405,
    reason: 'MethodNotAllowed',
    message: 'the server does not allow this method on the requested resource',
  },
  {
    // [restful]: collections route GET, POST and DELETE; objects GET, PUT, PATCH and DELETE.
    name: 'a collection',
    method: 'PUT',
    path: SVC,
    body: json(service('fixture')),
    code: 405,
    reason: 'MethodNotAllowed',
    message: 'the server does not allow this method on the requested resource',
  },
  {
    name: 'a collection (patch)',
    method: 'PATCH',
    path: SVC,
    body: json({ metadata: { labels: { x: 'y' } } }),
    contentType: 'application/merge-patch+json',
    code: 405,
    reason: 'MethodNotAllowed',
    message: 'the server does not allow this method on the requested resource',
  },
  {
    name: 'an object URL',
    method: 'POST',
    path: `${SVC}/fixture`,
    body: json(service('via-item-url')),
    code: 405,
    reason: 'MethodNotAllowed',
    message: 'the server does not allow this method on the requested resource',
  },
];

describe('hostile requests', () => {
  let srv: TestServer;

  before(async () => {
    srv = await startUp();
    const created = await call(srv, 'POST', SVC, {
      body: service('fixture', { metadata: { labels: { app: 'fixture' } } }),
    });
    assert.equal(created.status, 201, created.text);
    const meta = created.json<{ metadata: { resourceVersion: string; uid: string } }>().metadata;
    // Make the first resourceVersion stale.
    const patched = await call(srv, 'PATCH', `${SVC}/fixture`, {
      rawBody: json({ metadata: { labels: { rev: 'two' } } }),
      contentType: 'application/merge-patch+json',
    });
    assert.equal(patched.status, 200, patched.text);
    const now = patched.json<{ metadata: { resourceVersion: string; uid: string } }>().metadata;
    live.rv = now.resourceVersion;
    live.uid = now.uid;
    live.staleRv = meta.resourceVersion;
  });
  after(async () => {
    await srv?.destroy();
  });

  it(`has at least 45 rows`, () => {
    assert.ok(TABLE.length >= 45, `${TABLE.length} rows`);
  });

  for (const row of TABLE) {
    it(`${row.method} ${row.name} → ${row.code} ${row.reason}`, async () => {
      const body = typeof row.body === 'function' ? row.body() : row.body;
      const res = await send(srv, row.method, row.path, {
        ...(body === undefined ? {} : { body }),
        ...(row.contentType === undefined ? {} : { contentType: row.contentType }),
        ...(row.accept === undefined ? {} : { accept: row.accept }),
        ...(row.chunked === undefined ? {} : { chunked: row.chunked }),
      });
      const where = `${row.method} ${row.path.slice(0, 120)}: ${res.status} ${res.text.slice(0, 400)}`;
      assert.ok(res.status < 500, `a 5xx: ${where}`);
      assert.equal(res.status, row.code, where);
      assert.match(String(res.headers['content-type']), /^application\/json/, where);
      const st = res.json<Status>();
      assert.equal(st.kind, 'Status', where);
      assert.equal(st.apiVersion, 'v1', where);
      assert.equal(st.status, 'Failure', where);
      assert.equal(st.code, row.code, where);
      assert.equal(st.reason, row.reason, where);
      if (typeof row.message === 'string') assert.equal(st.message, row.message, where);
      else if (row.message !== undefined) assert.match(st.message ?? '', row.message, where);
      if (row.causeField !== undefined) {
        const fields = (st.details?.causes ?? []).map((c) => c.field);
        assert.ok(fields.includes(row.causeField), `${row.causeField} not in ${json(fields)}: ${where}`);
      }
    });
  }

  it('accepts what kube-apiserver accepts: a negative limit, repeated keys without Strict', async () => {
    // A limit <= 0 means no limit (kube ignores it too).
    const list = await send(srv, 'GET', `${SVC}?limit=-3`);
    assert.equal(list.status, 200, list.text);
    // Under the default Warn, a repeated key is a warning and the last value wins (sigs.k8s.io/json).
    const dup = await send(srv, 'POST', SVC, {
      body: '{"apiVersion":"v1","kind":"Service","metadata":{"name":"dup-warn","labels":{"app":"a","app":"b"}},"spec":{"ports":[{"port":80}]}}',
    });
    assert.equal(dup.status, 201, dup.text);
    assert.deepEqual(dup.json<{ metadata: { labels: object } }>().metadata.labels, { app: 'b' });
    assert.match(String(dup.headers['warning']), /299 - "duplicate field \\"metadata\.labels\.app\\""/);
  });

  it('kubectl: a Node body or status patch of the wrong type is refused, and nodes still list', async () => {
    const home = mkdtempSync(path.join(tmpdir(), 'svcplane-bad-input-'));
    try {
      const kubectl = kubectlFor(srv, home);
      const node = (status: unknown): string =>
        json({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'typed-n1' }, status });
      // [create.go] the body does not decode into v1.Node: 400, transformDecodeError's wording.
      await assert.rejects(
        kubectl(['create', '-f', '-'], node('garbage')),
        /BadRequest.*Node in version "v1" cannot be handled as a Node: json: cannot unmarshal string into Go struct field Node\.status of type v1\.NodeStatus/,
      );
      await kubectl(['create', '-f', '-'], node({}));
      // [patch.go] the patched object does not decode: 422 on the field "patch".
      await assert.rejects(
        kubectl([
          'patch',
          'node',
          'typed-n1',
          '--subresource=status',
          '--type=merge',
          '-p',
          '{"status":{"conditions":"x"}}',
        ]),
        /patch: Invalid value: .*json: cannot unmarshal string into Go struct field NodeStatus\.status\.conditions of type \[\]v1\.NodeCondition/,
      );
      const listed = JSON.parse(await kubectl(['get', 'nodes', '-o', 'json'])) as {
        items: { metadata: { name: string }; status?: { conditions?: unknown } }[];
      };
      const stored = listed.items.find((n) => n.metadata.name === 'typed-n1');
      assert.ok(stored, 'the valid Node is listed');
      const conditions = stored.status?.conditions;
      assert.ok(
        conditions === undefined || conditions === null || Array.isArray(conditions),
        json(conditions),
      );
      await kubectl(['delete', 'node', 'typed-n1']);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('survives malformed HTTP: oversized headers, garbage over TLS', async () => {
    const big = await send(srv, 'GET', SVC, { headers: { 'X-Padding': 'p'.repeat(64 * 1024) } }).catch(
      (err: NodeJS.ErrnoException) => ({ status: err.code ?? 'error' }),
    );
    assert.ok(big.status === 431 || big.status === 'ECONNRESET', `oversized headers: ${big.status}`);
    const answer = await new Promise<string>((resolve, reject) => {
      const sock = tlsConnect(
        { host: '127.0.0.1', port: srv.port, ca: srv.ca, servername: 'localhost' },
        () => sock.write('NOT HTTP AT ALL\r\n\r\n'),
      );
      let text = '';
      sock.on('data', (d: Buffer) => (text += d.toString()));
      sock.on('close', () => resolve(text));
      sock.setTimeout(10_000, () => sock.destroy(new Error('no answer to garbage in 10 s')));
      sock.on('error', reject);
    });
    assert.match(answer, /^HTTP\/1\.1 400 /);
  });

  it('is still healthy and nothing was half-written', async () => {
    const ready = await call(srv, 'GET', '/readyz', { token: null });
    assert.equal(ready.status, 200);
    assert.equal(ready.text, 'ok');
    const all = await call(srv, 'GET', '/api/v1/services');
    assert.equal(all.status, 200);
    const names = all
      .json<{ items: { metadata: { namespace: string; name: string } }[] }>()
      .items.map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
    // The fixture, the one object created on purpose (the repeated-key Warn case), and the
    // apiserver's own default/kubernetes.
    assert.deepEqual(names, ['default/dup-warn', 'default/fixture', 'default/kubernetes']);
    const fixture = await call(srv, 'GET', `${SVC}/fixture`);
    const meta = fixture.json<{ metadata: { resourceVersion: string; uid: string; labels: object } }>()
      .metadata;
    assert.equal(meta.resourceVersion, live.rv, 'no failed write touched the fixture');
    assert.equal(meta.uid, live.uid);
    assert.deepEqual(meta.labels, { app: 'fixture', rev: 'two' });
    const grids = await call(srv, 'GET', '/apis/superedge.io/v1/servicegrids');
    assert.deepEqual(grids.json<{ items: unknown[] }>().items, []);
    const nss = await call(srv, 'GET', '/api/v1/namespaces');
    const nsState = nss
      .json<{
        items: { metadata: { name: string; deletionTimestamp?: string }; status: { phase: string } }[];
      }>()
      .items.map((n) => `${n.metadata.name}:${n.status.phase}`);
    assert.ok(nsState.includes('default:Active'), json(nsState));
    assert.ok(!nsState.some((n) => n.startsWith('nope:') || n.startsWith('..')), json(nsState));
    assert.doesNotMatch(srv.stderr(), /internal error/, 'no request ended in an internal error');
  });
});
