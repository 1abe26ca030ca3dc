// Paths outside the resource tree: discovery, health, version, metrics and OpenAPI.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StatusError } from '../../api/status.js';
import {
  AGGREGATED_CONTENT_TYPE,
  aggregatedDiscovery,
  apiGroupDoc,
  apiGroupList,
  apiResourceList,
  apiVersions,
} from './discovery.js';
import { negotiate } from './negotiation.js';
import { headers, writeJson, writeRawJson } from './respond.js';
import { type HandlerDeps, type Identity, notFoundPath } from './types.js';

export async function serveNonResource(
  deps: HandlerDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
  discovery: { group?: string; version?: string; legacy: boolean } | undefined,
  who: Identity | 'anonymous',
): Promise<void> {
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD') {
    throw new StatusError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: `the server does not allow this method on the requested resource`,
      reason: 'MethodNotAllowed',
      details: {},
      code: 405,
    });
  }
  // The wrapper with --proxy-upstream: the upstream's documents, asked as the client, when it answers.
  const document = discovery !== undefined || path === '/openapi/v2' || path.startsWith('/openapi/v3');
  if (document && deps.forwardDiscovery !== undefined && who !== 'anonymous')
    if (await deps.forwardDiscovery(req, res, who)) return;
  const accept = req.headers.accept;
  if (discovery !== undefined) {
    if (discovery.version === undefined && discovery.group === undefined) {
      const rendering = negotiate(accept, { discovery: true });
      if (rendering.kind === 'discovery') {
        writeJson(res, 200, aggregatedDiscovery(discovery.legacy, rendering.version, deps.resources), {
          contentType: AGGREGATED_CONTENT_TYPE(rendering.version),
          extraHeaders: { Vary: 'Accept' },
        });
        return;
      }
      writeJson(
        res,
        200,
        discovery.legacy ? apiVersions(deps.serverAddress()) : apiGroupList(deps.resources),
        {
          yaml: rendering.kind === 'yaml',
          extraHeaders: { Vary: 'Accept' },
        },
      );
      return;
    }
    const rendering = negotiate(accept, {});
    const doc =
      discovery.version === undefined
        ? apiGroupDoc(discovery.group ?? '', deps.resources)
        : discovery.legacy && discovery.version !== 'v1'
          ? undefined
          : apiResourceList(discovery.group ?? '', discovery.version, deps.resources);
    if (doc === undefined) throw notFoundPath();
    writeJson(res, 200, doc, { yaml: rendering.kind === 'yaml' });
    return;
  }
  switch (path) {
    case '/healthz':
    case '/livez':
    case '/readyz': {
      const cacheOk = path !== '/readyz' || deps.ready();
      const checks = [
        { name: 'ping', ok: true },
        { name: 'watch-cache', ok: cacheOk },
        ...(path === '/readyz' ? (deps.readyChecks ?? []).map((c) => ({ name: c.name, ok: c.ok() })) : []),
      ];
      const ok = checks.every((c) => c.ok);
      const failed = checks.find((c) => !c.ok);
      const body = query.has('verbose')
        ? `${checks.map((c) => `[${c.ok ? '+' : '-'}]${c.name} ${c.ok ? 'ok' : 'failed'}\n`).join('')}${path.slice(1)} check ${ok ? 'passed' : 'failed'}\n`
        : ok
          ? 'ok'
          : failed!.name === 'watch-cache'
            ? 'watch cache not ready'
            : `${failed!.name} not ready`;
      res.writeHead(
        ok ? 200 : 503,
        headers({ 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }),
      );
      res.end(body);
      return;
    }
    case '/version':
      writeJson(res, 200, deps.version);
      return;
    // ServiceAccountIssuerDiscovery: the issuer's OIDC document and its keys (with a first issuer).
    case '/.well-known/openid-configuration':
    case '/openid/v1/jwks': {
      const tokens = deps.serviceAccountTokens;
      if (tokens === undefined) throw notFoundPath();
      const oidc = path === '/.well-known/openid-configuration';
      writeJson(
        res,
        200,
        oidc ? tokens.openidConfiguration(`https://${deps.serverAddress()}/openid/v1/jwks`) : tokens.jwks(),
        {
          contentType: oidc ? 'application/json' : 'application/jwk-set+json',
          extraHeaders: { 'Cache-Control': 'public, max-age=3600' },
        },
      );
      return;
    }
    case '/metrics': {
      deps.metrics.cacheRevision.set(deps.cache.revision);
      const text = (await deps.metrics.registry.metrics()) + ((await deps.extraMetrics?.()) ?? '');
      res.writeHead(200, headers({ 'Content-Type': deps.metrics.registry.contentType }));
      res.end(text);
      return;
    }
    case '/openapi/v2': {
      const buf = deps.openapi.v2Protobuf();
      // Go's MIME parser chokes on the '@' of the protobuf media type; octet-stream is what works.
      res.writeHead(
        200,
        headers({ 'Content-Type': 'application/octet-stream', 'Content-Length': String(buf.length) }),
      );
      res.end(Buffer.from(buf));
      return;
    }
    case '/openapi/v3':
      writeJson(res, 200, deps.openapi.v3Index());
      return;
    case '/debug/svcplane/rangeallocations':
      if (deps.rangeAllocations === undefined) throw notFoundPath();
      writeJson(res, 200, await deps.rangeAllocations(), { yaml: negotiate(accept, {}).kind === 'yaml' });
      return;
    default:
      if (path.startsWith('/openapi/v3/')) {
        const doc = deps.openapi.v3Document(path.slice('/openapi/v3/'.length));
        if (doc === undefined) throw notFoundPath();
        writeRawJson(res, 200, doc, query.has('hash') ? { 'Cache-Control': 'public, immutable' } : {});
        return;
      }
      throw notFoundPath();
  }
}
