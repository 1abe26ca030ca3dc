// A small typed REST client for the resources svcplane knows (src/api/resources.ts), over any
// Transport: get, list (with selectors and pagination), watch (newline-delimited JSON events), create,
// update (with the resourceVersion precondition the object carries), patch and delete. A non-2xx
// answer becomes an ApiError carrying the server's Status, so callers branch on code and reason.
import type { KObject } from '../api/object.js';
import type { ResourceInfo } from '../api/resources.js';
import type { Transport, TransportRequest } from './transport.js';

export interface ApiStatus {
  readonly kind?: string;
  readonly code?: number;
  readonly reason?: string;
  readonly message?: string;
  readonly details?: { readonly causes?: { readonly reason?: string; readonly message?: string }[] };
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly status?: ApiStatus,
  ) {
    super(message);
  }
}

export const isApiError = (err: unknown, code?: number): err is ApiError =>
  err instanceof ApiError && (code === undefined || err.code === code);

export interface ListOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly limit?: number;
  readonly continue?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'Exact' | 'NotOlderThan';
}

export interface WatchOptions {
  readonly namespace?: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly resourceVersion?: string;
  readonly allowWatchBookmarks?: boolean;
  readonly timeoutSeconds?: number;
}

export interface ObjectList {
  readonly metadata: { readonly resourceVersion?: string; readonly continue?: string };
  readonly items: KObject[];
}

export interface WatchEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: KObject;
}

export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';
const PATCH_CONTENT: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
};

function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

/** `/api/v1/namespaces/ns/services/name/status` and friends. */
export function resourcePath(r: ResourceInfo, namespace?: string, name?: string, sub?: string): string {
  const root = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const ns =
    r.namespaced && namespace !== undefined && namespace !== ''
      ? `/namespaces/${encodeURIComponent(namespace)}`
      : '';
  const n = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  const s = sub === undefined || sub === '' ? '' : `/${sub}`;
  return `${root}${ns}/${r.resource}${n}${s}`;
}

async function readAll(body: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

function toError(status: number, text: string): ApiError {
  let s: ApiStatus | undefined;
  try {
    s = JSON.parse(text) as ApiStatus;
  } catch {
    s = undefined;
  }
  if (s?.kind === 'Status') return new ApiError(status, s.reason ?? '', s.message ?? text, s);
  return new ApiError(status, '', text.trim() || `HTTP ${status}`);
}

export class Client {
  constructor(readonly transport: Transport) {}

  private async call<T>(req: TransportRequest): Promise<T> {
    const res = await this.transport.send(req);
    const text = await readAll(res.body);
    if (res.status < 200 || res.status > 299) throw toError(res.status, text);
    return JSON.parse(text) as T;
  }

  /** Whether the server serves the resource (its group/version discovery document lists it). */
  async serves(r: ResourceInfo): Promise<boolean> {
    const path = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
    try {
      const doc = await this.call<{ resources?: Array<{ name?: string }> }>({ method: 'GET', path });
      return (doc.resources ?? []).some((x) => x.name === r.resource);
    } catch (err) {
      if (isApiError(err, 404)) return false;
      throw err;
    }
  }

  get(r: ResourceInfo, namespace: string, name: string, signal?: AbortSignal): Promise<KObject> {
    return this.call({
      method: 'GET',
      path: resourcePath(r, namespace, name),
      ...(signal ? { signal } : {}),
    });
  }

  list(r: ResourceInfo, opts: ListOptions = {}, signal?: AbortSignal): Promise<ObjectList> {
    const path =
      resourcePath(r, opts.namespace) +
      query({
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        limit: opts.limit,
        continue: opts.continue,
        resourceVersion: opts.resourceVersion,
        resourceVersionMatch: opts.resourceVersionMatch,
      });
    return this.call({ method: 'GET', path, ...(signal ? { signal } : {}) });
  }

  /** Watch events until the server ends the stream or `signal` aborts. An HTTP error throws ApiError. */
  async *watch(r: ResourceInfo, opts: WatchOptions, signal: AbortSignal): AsyncGenerator<WatchEvent> {
    const path =
      resourcePath(r, opts.namespace) +
      query({
        watch: true,
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        resourceVersion: opts.resourceVersion,
        allowWatchBookmarks: opts.allowWatchBookmarks,
        timeoutSeconds: opts.timeoutSeconds,
      });
    const res = await this.transport.send({ method: 'GET', path, signal });
    if (res.status < 200 || res.status > 299) throw toError(res.status, await readAll(res.body));
    try {
      for await (const line of ndjsonLines(res.body)) yield JSON.parse(line) as WatchEvent;
    } catch (err) {
      if (signal.aborted) return;
      throw err;
    } finally {
      res.body.destroy();
    }
  }

  create(r: ResourceInfo, namespace: string, obj: object): Promise<KObject> {
    return this.call({ method: 'POST', path: resourcePath(r, namespace), body: JSON.stringify(obj) });
  }

  /**
   * POST to an object's subresource, e.g. `pods/NAME/binding` with a v1 Binding (whose 201 answer is a
   * Status, not the pod).
   */
  createSubresource(
    r: ResourceInfo,
    namespace: string,
    name: string,
    sub: string,
    body: object,
  ): Promise<unknown> {
    return this.call({
      method: 'POST',
      path: resourcePath(r, namespace, name, sub),
      body: JSON.stringify(body),
    });
  }

  /** POST of a body to a path that stores nothing (a SubjectAccessReview): the answer. */
  post<T>(path: string, body: object): Promise<T> {
    return this.call({ method: 'POST', path, body: JSON.stringify(body) });
  }

  /** PUT; the object's metadata.resourceVersion (when set) is the compare-and-swap precondition. */
  update(r: ResourceInfo, obj: KObject, sub?: 'status' | 'approval'): Promise<KObject> {
    const path = resourcePath(r, obj.metadata.namespace, obj.metadata.name ?? '', sub);
    return this.call({ method: 'PUT', path, body: JSON.stringify(obj) });
  }

  patch(
    r: ResourceInfo,
    namespace: string,
    name: string,
    type: PatchType,
    patch: unknown,
    opts: { sub?: 'status'; fieldManager?: string; force?: boolean } = {},
  ): Promise<KObject> {
    const path =
      resourcePath(r, namespace, name, opts.sub) +
      query({ fieldManager: opts.fieldManager, force: opts.force });
    return this.call({
      method: 'PATCH',
      path,
      body: JSON.stringify(patch),
      contentType: PATCH_CONTENT[type],
    });
  }

  delete(
    r: ResourceInfo,
    namespace: string,
    name: string,
    opts: {
      propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
      preconditions?: { uid?: string; resourceVersion?: string };
      /** 0 deletes at once (a kubelet confirming a pod's graceful deletion). */
      gracePeriodSeconds?: number;
    } = {},
  ): Promise<KObject> {
    return this.call({
      method: 'DELETE',
      path: resourcePath(r, namespace, name),
      body: JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', ...opts }),
    });
  }
}

/**
 * The non-blank lines of a newline-delimited stream (`\n` or `\r\n`), decoded as UTF-8. Split on the
 * bytes rather than through readline, whose events and async-iterator queue cost the controllers more
 * per watch event than parsing it.
 */
export async function* ndjsonLines(body: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  // The pieces of a line not finished yet; only each new chunk is scanned, so a long line arriving in
  // many chunks costs one concatenation, not one per chunk.
  let pending: Buffer[] = [];
  const take = (last: Buffer): string => {
    const line = pending.length === 0 ? last : Buffer.concat([...pending, last]);
    pending = [];
    const end = line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length;
    return line.toString('utf8', 0, end);
  };
  for await (const piece of body) {
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece;
    let start = 0;
    for (let nl = chunk.indexOf(0x0a); nl !== -1; nl = chunk.indexOf(0x0a, start)) {
      const line = take(chunk.subarray(start, nl));
      start = nl + 1;
      if (/\S/.test(line)) yield line;
    }
    if (start < chunk.length) pending.push(chunk.subarray(start));
  }
  if (pending.length > 0) {
    const line = take(Buffer.alloc(0));
    if (/\S/.test(line)) yield line;
  }
}
