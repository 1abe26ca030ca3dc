// Malformed and hostile requests for a plain-HTTP API endpoint (the wrapper's --insecure-bind-address
// port), from a seeded generator so a failure reproduces: bad paths, label and field selectors,
// resourceVersions and watch parameters, limit/continue junk, wrong methods, bad Accept and
// Content-Type (protobuf too), huge headers, slow and truncated bodies, abandoned and pipelined
// connections, and bytes that are not HTTP at all. Each goes over its own real socket (node:net).
// The fuzz test (src/cli/wrapper-fuzz.test.ts) and the benchmark (bench/wrapper-fuzz) share it.
import { connect } from 'node:net';
import { prng } from '../../src/storage/testing/helpers.js';

interface HostileRequest {
  /** What is written: the head (and body) bytes, in pieces written `dripMs` apart. */
  readonly pieces: readonly Buffer[];
  readonly dripMs: number;
  /** Close the connection this long after writing, whatever came back (abandoned watches, bodies). */
  readonly abandonAfterMs?: number;
  /**
   * Not a well-formed HTTP/1.1 request (garbage, oversized headers): Node's parser answers it, as Go's
   * net/http does for kube-apiserver, with a plain-text 4xx before any handler runs.
   */
  readonly protocol: boolean;
  readonly label: string;
}

interface HostileOutcome {
  /** The status line's code; 0 when nothing came back (abandoned, or closed without an answer). */
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

const SERVED_PATHS = [
  '/api/v1/services',
  '/api/v1/namespaces/default/services',
  '/api/v1/namespaces/default/services/kubernetes',
  '/api/v1/namespaces/default/endpoints',
  '/api/v1/endpoints',
  '/api/v1/nodes',
  '/api/v1/nodes/n1',
  '/apis/discovery.k8s.io/v1/endpointslices',
  '/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices',
];
const OTHER_PATHS = [
  '/',
  '/api',
  '/apis',
  '/api/v1',
  '/apis/discovery.k8s.io',
  '/version',
  '/healthz',
  '/readyz?verbose',
  '/livez/ping',
  '/openapi/v2',
  '/openapi/v3',
  '/openapi/v3/api/v1',
  '/openapi/v3/junk',
  '/metrics',
  '/api/v1/pods',
  '/apis/apps/v1/namespaces/default/deployments',
  '/api/v1/namespaces/default/services/kubernetes/status',
  '/api/v1/namespaces/default/services/kubernetes/proxy/x',
  '/api/v1/namespaces/%zz/services',
  '/api/v1/namespaces//services',
  '/api/v1/namespaces/default/services/%2e%2e',
  '/api/v1/namespaces/default/services/a/b/c/d/e',
  '/api/v2/services',
  '/apis/discovery.k8s.io/v9/endpointslices',
  '/apis/x.example.com/v1/things',
  '//api//v1//services',
  '/api/v1/services/../../../etc/passwd',
  '/api/v1/namespaces/DEFAULT/services',
  '/api/v1/namespaces/%C3%BCn%C3%AFc%C3%B6d%C3%A9/services',
  '/api/v1/namespaces/ünïcödé/services', // raw bytes in the request line: not HTTP
  '/api/v1/namespaces/default/services/\u0000',
  '*',
  'http://127.0.0.1/api/v1/services',
];
const PARAMS: Record<string, readonly string[]> = {
  labelSelector: [
    'a in (',
    '!!',
    'x=y,,',
    'a notin ()',
    '=',
    'a==b==c',
    'app=web',
    'k',
    '!k',
    `${'a'.repeat(300)}=b`,
    'a in (b,c',
    'é=1',
    'a=b)',
    '%',
    'a!=b,c=d',
  ],
  fieldSelector: [
    'metadata.name',
    'spec.foo=bar',
    'metadata.name=a=b',
    '',
    'metadata.namespace!=x',
    'metadata.name==',
    ',',
    'spec.clusterIP=1.2.3.4',
    'x',
  ],
  resourceVersion: [
    '-1',
    'abc',
    '99999999999999999999',
    '0',
    '1e3',
    '',
    '1',
    '18446744073709551616',
    ' 1',
    '0x10',
  ],
  resourceVersionMatch: ['Exact', 'NotOlderThan', 'junk', ''],
  watch: ['true', '1', 'yes', 'false', '', 'TRUE'],
  timeoutSeconds: ['-1', '1e9', 'abc', '0', '1', '99999999999', '', '1.5'],
  allowWatchBookmarks: ['true', 'maybe', '', 'false'],
  sendInitialEvents: ['true', 'false', 'x', ''],
  limit: ['-5', 'abc', '1e400', '0', '1', '500', '9007199254740993', ''],
  continue: ['junk', 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiIn0', '', '%%%', 'e30'],
  includeObject: ['Object', 'None', 'Metadata', 'junk'],
  pretty: ['true', 'x'],
  dryRun: ['All', 'junk'],
  fieldManager: ['x'.repeat(200)],
  gracePeriodSeconds: ['-1', 'abc'],
};
const METHODS = ['GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'];
const ACCEPTS = [
  'application/json',
  'application/vnd.kubernetes.protobuf',
  'application/vnd.kubernetes.protobuf;stream=watch',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
  'application/json;as=Table;v=v9;g=meta.k8s.io',
  'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
  'application/json;as=PartialObjectMetadata;v=v1beta1;g=meta.k8s.io',
  'application/yaml',
  'text/html',
  '*/*',
  ';;;',
  'application/json;q=abc',
  'application/vnd.kubernetes.protobuf, application/json;q=0.1',
  'x'.repeat(4000),
];
const CONTENT_TYPES = [
  'application/json',
  'application/yaml',
  'application/vnd.kubernetes.protobuf',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
  'text/plain',
  'multipart/form-data; boundary=x',
  ';',
];

/** `n` requests from `seed`, the same ones for the same seed. */
function* hostileRequests(seed: number, n: number): Generator<HostileRequest> {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const bytes = (len: number): Buffer =>
    Buffer.from(Array.from({ length: len }, () => Math.floor(rnd() * 256)));
  for (let i = 0; i < n; i++) {
    const roll = rnd();
    if (roll < 0.04) {
      // Not HTTP/1.1: garbage, a bad request line, a header without a colon, oversized headers.
      const raw = pick([
        () => bytes(1 + Math.floor(rnd() * 200)),
        () => Buffer.from('GET / HTTP/9.9\r\nHost: x\r\n\r\n'),
        () => Buffer.from('GET /api/v1/services HTTP/1.1\r\nno colon here\r\n\r\n'),
        () => Buffer.from(`GET /api HTTP/1.1\r\nHost: x\r\nX-Big: ${'h'.repeat(40_000)}\r\n\r\n`),
        () =>
          Buffer.from(
            'POST /api/v1/services HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
          ),
        () =>
          Buffer.from(
            'GET /api/v1/services HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n',
          ),
      ])();
      yield { pieces: [raw], dripMs: 0, abandonAfterMs: 2_000, protocol: true, label: 'protocol' };
      continue;
    }
    const method = pick(METHODS);
    const path = rnd() < 0.6 ? pick(SERVED_PATHS) : pick(OTHER_PATHS);
    const params = new URLSearchParams();
    const nParams = Math.floor(rnd() * 4);
    for (let k = 0; k < nParams; k++) {
      const key = pick(Object.keys(PARAMS));
      params.append(key, pick(PARAMS[key]!));
    }
    // A watch that stays open is abandoned by the client; a bounded one usually ends by itself.
    const watching = params.get('watch') !== null || rnd() < 0.1;
    if (watching && !params.has('watch')) params.set('watch', 'true');
    const headers: string[] = ['Host: 127.0.0.1'];
    if (rnd() < 0.5) headers.push(`Accept: ${pick(ACCEPTS)}`);
    if (rnd() < 0.05) headers.push(`X-Pad: ${'p'.repeat(8_000)}`); // big, within Node's 16 KiB
    if (rnd() < 0.05) headers.push(`Impersonate-User: ${pick(['admin', '', 'system:admin'])}`);
    if (rnd() < 0.05) headers.push(`Authorization: ${pick(['Bearer junk', 'Basic !!', 'Bearer '])}`);
    let body: Buffer | undefined;
    if (method !== 'GET' && method !== 'HEAD' && rnd() < 0.7) {
      headers.push(`Content-Type: ${pick(CONTENT_TYPES)}`);
      body = pick([
        () => Buffer.from('{"kind":"Service","apiVersion":"v1","metadata":{"name":"x"}}'),
        () => Buffer.from('{'),
        () => Buffer.from('[]'),
        () => Buffer.from('- a\n- : b'),
        () => bytes(Math.floor(rnd() * 2_000)),
        () => Buffer.from(`${'['.repeat(5_000)}${']'.repeat(5_000)}`),
      ])();
    }
    const truncated = body !== undefined && rnd() < 0.1; // declares more than it sends, then leaves
    if (body !== undefined) headers.push(`Content-Length: ${body.length + (truncated ? 100 : 0)}`);
    headers.push('Connection: close');
    const query = params.toString();
    const head = Buffer.from(
      `${method} ${path}${query === '' ? '' : `?${query}`} HTTP/1.1\r\n${headers.join('\r\n')}\r\n\r\n`,
    );
    const slow = rnd() < 0.05;
    const all = body === undefined ? head : Buffer.concat([head, body]);
    const pieces = slow ? splitInto(all, 5) : [all];
    const abandon = watching || truncated || rnd() < 0.05;
    yield {
      pieces,
      dripMs: slow ? 20 : 0,
      ...(abandon ? { abandonAfterMs: 1 + Math.floor(rnd() * 300) } : {}),
      protocol: /[^\x21-\x7e]/.test(path),
      label: `${method} ${path}${query === '' ? '' : `?${query}`}`,
    };
  }
}

const splitInto = (buf: Buffer, n: number): Buffer[] => {
  const size = Math.ceil(buf.length / n);
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
};

/** Responses larger than this are not kept whole: their status and head are what is judged. */
const KEEP_BYTES = 256 * 1024;

/**
 * Sends `r` to 127.0.0.1:`port` over a fresh connection and reads what comes back until the server
 * closes (every request says Connection: close) or the request abandons it. Fails after `timeoutMs`
 * without an answer (a request that hung).
 */
function sendHostile(port: number, r: HostileRequest, timeoutMs = 20_000): Promise<HostileOutcome> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let size = 0;
    let abandoned = false;
    const timers: NodeJS.Timeout[] = [];
    sock.on('data', (d: Buffer) => {
      if (size < KEEP_BYTES) chunks.push(d);
      size += d.length;
    });
    sock.on('error', () => {});
    sock.on('close', () => {
      for (const t of timers) clearTimeout(t);
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (m === null) {
        if (abandoned || r.protocol || r.pieces.length > 1 || text === '')
          resolve({ status: 0, contentType: '', body: text });
        else reject(new Error(`not an HTTP response to ${r.label}: ${JSON.stringify(text.slice(0, 200))}`));
        return;
      }
      const split = text.indexOf('\r\n\r\n');
      const head = split < 0 ? text : text.slice(0, split);
      const ct = /^content-type: *(.*)$/im.exec(head)?.[1]?.trim() ?? '';
      let body = split < 0 ? '' : text.slice(split + 4);
      if (/^transfer-encoding: *chunked/im.test(head)) body = dechunk(body);
      resolve({ status: Number(m[1]), contentType: ct, body: Buffer.from(body, 'latin1').toString('utf8') });
    });
    sock.once('connect', () => {
      let i = 0;
      const next = (): void => {
        if (sock.destroyed) return;
        sock.write(r.pieces[i++]!);
        if (i < r.pieces.length) timers.push(setTimeout(next, r.dripMs));
        else if (r.abandonAfterMs !== undefined)
          timers.push(
            setTimeout(() => {
              abandoned = true;
              sock.destroy();
            }, r.abandonAfterMs),
          );
      };
      next();
    });
    timers.push(
      setTimeout(() => {
        sock.destroy();
        reject(new Error(`no answer in ${timeoutMs} ms to ${r.label}`));
      }, timeoutMs),
    );
  });
}

function dechunk(text: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const eol = text.indexOf('\r\n', at);
    if (eol < 0) return out;
    const n = parseInt(text.slice(at, eol), 16);
    if (!Number.isFinite(n) || n === 0) return out;
    out += text.slice(eol + 2, eol + 2 + n);
    at = eol + 2 + n + 2;
  }
}

/**
 * What is wrong with one outcome: a status ≥ 500, or a rejection (4xx) that is not a Kubernetes Status
 * with the same code. Protocol-level rejections (Node's parser, plain text) are judged by status only.
 */
function verdict(r: HostileRequest, o: HostileOutcome): string | undefined {
  if (o.status >= 500) return `${o.status} for ${r.label}: ${o.body.slice(0, 300)}`;
  if (o.status < 400 || r.protocol || r.label.startsWith('HEAD ')) return undefined;
  if (o.body === '' && r.abandonAfterMs !== undefined) return undefined; // cut off while reading
  let status: { kind?: unknown; code?: unknown };
  try {
    status = JSON.parse(o.body) as typeof status;
  } catch {
    if (r.abandonAfterMs !== undefined) return undefined;
    return `${o.status} for ${r.label} is not JSON (${o.contentType}): ${o.body.slice(0, 300)}`;
  }
  if (status.kind !== 'Status' || status.code !== o.status)
    return `${o.status} for ${r.label} is not a Status of that code: ${o.body.slice(0, 300)}`;
  return undefined;
}

interface HostileSummary {
  readonly requests: number;
  readonly byStatus: Record<string, number>;
  readonly fiveXX: number;
  readonly failures: readonly string[];
}

/** Sends `n` requests from `seed`, `concurrency` at a time, and judges every outcome. */
export async function runHostile(
  port: number,
  seed: number,
  n: number,
  concurrency = 32,
): Promise<HostileSummary> {
  const gen = hostileRequests(seed, n);
  const byStatus: Record<string, number> = {};
  const failures: string[] = [];
  let fiveXX = 0;
  let requests = 0;
  const worker = async (): Promise<void> => {
    for (let next = gen.next(); !next.done; next = gen.next()) {
      const r = next.value;
      requests++;
      try {
        const o = await sendHostile(port, r);
        byStatus[o.status] = (byStatus[o.status] ?? 0) + 1;
        if (o.status >= 500) fiveXX++;
        const bad = verdict(r, o);
        if (bad !== undefined && failures.length < 50) failures.push(bad);
      } catch (err) {
        if (failures.length < 50) failures.push((err as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  return { requests, byStatus, fiveXX, failures };
}
