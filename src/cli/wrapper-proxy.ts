// `svcplane wrapper --proxy-upstream`: what the wrapper does not serve itself, and an authenticated
// client asks for, goes to the upstream API server over the wrapper's own connection, but as the client:
// the request carries Impersonate-User (the client's name) and Impersonate-Group (each of its groups but
// system:authenticated, which the upstream adds), so the upstream authorizes the client, never the
// wrapper. The client's own Authorization and Impersonate-* headers are dropped (the wrapper's
// credentials replace the first; a client must not choose whom the wrapper impersonates). Anonymous
// clients, and every client of the plain-HTTP port, are never forwarded. The upstream's answer (status,
// headers, body) streams back as it arrives, so watches work. Upgrades (exec, port-forward) are not
// forwarded.
import { validateHeaderValue, type IncomingMessage, type ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { statusErrors } from '../api/status.js';
import { isImpersonationHeader } from '../apiserver/auth/impersonation.js';
import { ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS_USER_NAME } from '../apiserver/auth/types.js';
import { writeStatus } from '../apiserver/http/respond.js';
import type { HandlerDeps, Identity } from '../apiserver/http/types.js';
import type { Logger } from '../runtime/logger.js';
import type { Transport } from '../runtime/transport.js';

/** Headers that describe one connection, not the request (RFC 9110 §7.6.1), plus Host and Expect. */
const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'expect',
]);

type Headers = Record<string, string | string[]>;

/** The headers named by Connection, which are hop-by-hop too. */
const connectionTokens = (headers: Readonly<Record<string, readonly string[] | undefined>>): Set<string> =>
  new Set((headers['connection'] ?? []).flatMap((v) => v.split(',').map((t) => t.trim().toLowerCase())));

/** Who the upstream is asked to treat the request as, or undefined for a client that is never forwarded. */
export function impersonationFor(who: Identity): Headers | undefined {
  if (who.name === ANONYMOUS_USER_NAME || who.name === '' || who.groups.includes(ALL_UNAUTHENTICATED))
    return undefined;
  // Header parsers trim surrounding whitespace: " " would arrive as no impersonation at all (the request
  // would run as the wrapper), " admin " as admin. Such identities are never forwarded.
  const untrimmed = (v: string) => v !== v.trim() || v === '';
  if (untrimmed(who.name) || who.groups.some(untrimmed)) return undefined;
  const groups = who.groups.filter((g) => g !== ALL_AUTHENTICATED);
  const headers: Headers = {
    'impersonate-user': who.name,
    ...(groups.length === 0 ? {} : { 'impersonate-group': groups }),
  };
  try {
    // A name or group that cannot travel in a header (control characters) is not forwarded.
    for (const [name, value] of Object.entries(headers))
      for (const v of [value].flat()) validateHeaderValue(name, v);
  } catch {
    return undefined;
  }
  return headers;
}

/** The client's request headers as sent upstream: no credentials, no impersonation, nothing hop-by-hop. */
export function upstreamRequestHeaders(
  incoming: Readonly<Record<string, readonly string[] | undefined>>,
  impersonation: Headers,
): Headers {
  const perConnection = connectionTokens(incoming);
  const out: Headers = {};
  for (const [name, values] of Object.entries(incoming)) {
    const n = name.toLowerCase();
    if (values === undefined || values.length === 0) continue;
    if (
      HOP_BY_HOP.has(n) ||
      perConnection.has(n) ||
      n === 'authorization' ||
      isImpersonationHeader(n) ||
      n.startsWith('x-remote-') // front-proxy identity headers: an upstream that trusts us must not read a client's
    )
      continue;
    out[n] = values.length === 1 ? values[0]! : [...values];
  }
  return { ...out, ...impersonation };
}

/** The upstream's response headers as sent to the client: nothing hop-by-hop. */
export function clientResponseHeaders(
  upstream: Readonly<Record<string, string | string[] | undefined>>,
): Headers {
  const perConnection = new Set(
    [upstream['connection'] ?? []].flat().flatMap((v) => v.split(',').map((t) => t.trim().toLowerCase())),
  );
  const out: Headers = {};
  for (const [name, value] of Object.entries(upstream)) {
    if (value === undefined || HOP_BY_HOP.has(name) || perConnection.has(name)) continue;
    out[name] = value;
  }
  return out;
}

/** The HandlerDeps.forward hook that passes refused requests upstream as the client. */
export function upstreamForwarder(transport: Transport, log: Logger): NonNullable<HandlerDeps['forward']> {
  const pass = passer(transport, log);
  return (req, res, who) => pass(req, res, who, undefined);
}

/**
 * How long a discovery request waits for the upstream's answer to begin before the wrapper answers it
 * itself (an upstream that drops packets would otherwise hold kubectl for the TCP timeout).
 */
export const DISCOVERY_UPSTREAM_WAIT_MS = 5_000;

/**
 * The HandlerDeps.forwardDiscovery hook (--proxy-upstream): discovery and OpenAPI documents come from the
 * upstream, as the client, so that kubectl finds the resources the wrapper forwards. When the upstream
 * does not answer (unreachable, or nothing within `waitMs`) or refuses (4xx, 5xx: a client the upstream
 * does not let read discovery, a group it lacks), false: the wrapper serves its own documents, which
 * every authenticated client may read.
 */
export function upstreamDiscovery(
  transport: Transport,
  log: Logger,
  waitMs = DISCOVERY_UPSTREAM_WAIT_MS,
): NonNullable<HandlerDeps['forwardDiscovery']> {
  const pass = passer(transport, log);
  let fallingBack = false;
  return async (req, res, who) => {
    const answered = await pass(req, res, who, waitMs, (reason) => {
      // One line per run of fallbacks: an operator seeing kubectl miss resources has the reason.
      if (!fallingBack)
        log.warn("discovery from the upstream failed; serving the wrapper's own documents", { reason });
      fallingBack = true;
    });
    if (answered && res.statusCode < 400) fallingBack = false;
    return answered;
  };
}

function passer(transport: Transport, log: Logger) {
  const stream = transport.stream?.bind(transport);
  if (stream === undefined) throw new Error('the upstream transport cannot pass requests through');
  return async (
    req: IncomingMessage,
    res: ServerResponse,
    who: Identity,
    /** Set: answer false (not a 503) when the upstream fails, refuses, or has not answered in this time. */
    fallbackAfterMs: number | undefined,
    fellBack: (reason: string) => void = () => undefined,
  ): Promise<boolean> => {
    const fallback = fallbackAfterMs !== undefined;
    const impersonation = impersonationFor(who);
    if (impersonation === undefined) return false;
    const aborted = new AbortController();
    let clientGone = false;
    res.once('close', () => {
      if (res.writableFinished) return;
      clientGone = true;
      aborted.abort();
    });
    const method = req.method ?? 'GET';
    const hasBody =
      req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;
    const path = req.url ?? '/';
    if (!path.startsWith('/') || path.startsWith('//')) return false; // never another host
    const slow = fallback ? setTimeout(() => aborted.abort(), fallbackAfterMs) : undefined;
    let up;
    try {
      up = await stream({
        method,
        path,
        headers: upstreamRequestHeaders(req.headersDistinct, impersonation),
        ...(hasBody ? { body: req } : {}),
        signal: aborted.signal,
      });
    } catch (err) {
      if (clientGone) return true;
      if (fallback) {
        fellBack(aborted.signal.aborted ? `no answer in ${fallbackAfterMs} ms` : String(err));
        return false;
      }
      log.warn('cannot pass a request to the upstream', { method, error: String(err) });
      if (!req.complete) req.resume();
      if (!res.headersSent)
        writeStatus(res, statusErrors.serviceUnavailable('the upstream API server is unavailable').status);
      return true;
    } finally {
      clearTimeout(slow);
    }
    if (fallback && up.status >= 400) {
      fellBack(`status ${up.status}`);
      up.body.destroy();
      return false;
    }
    if (!hasBody) req.resume();
    res.writeHead(up.status, clientResponseHeaders(up.headers));
    res.flushHeaders(); // a watch's headers go out before its first event
    pipeline(up.body, res, (err) => {
      if (err !== undefined && err !== null && !aborted.signal.aborted)
        log.warn('the upstream response ended early', { method, error: String(err) });
    });
    return true;
  };
}
