// Writing responses: JSON (or YAML) bodies, Status errors, and the one place errors become Statuses.
import type { ServerResponse } from 'node:http';
import { stringify as toYaml } from 'yaml';
import { StatusError, statusErrors, type Status } from '../../api/status.js';
import { SelectorError } from '../../core/selectors/labels.js';
import { isStoreError } from '../../storage/store.js';
import type { Logger } from '../../runtime/logger.js';

export function headers(extra: Record<string, string | string[]> = {}): Record<string, string | string[]> {
  return { 'Cache-Control': 'no-cache, private', ...extra };
}

export function warningHeaders(warnings: readonly string[]): Record<string, string[]> {
  return warnings.length === 0 ? {} : { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`) };
}

export function writeJson(
  res: ServerResponse,
  code: number,
  body: unknown,
  opts: {
    yaml?: boolean;
    contentType?: string;
    extraHeaders?: Record<string, string | string[]>;
    head?: boolean;
  } = {},
): void {
  const text = opts.yaml === true ? toYaml(body) : JSON.stringify(body);
  const payload = Buffer.from(opts.yaml === true ? text : `${text}\n`);
  res.writeHead(
    code,
    headers({
      'Content-Type': opts.contentType ?? (opts.yaml === true ? 'application/yaml' : 'application/json'),
      'Content-Length': String(payload.length),
      ...opts.extraHeaders,
    }),
  );
  res.end(opts.head === true ? undefined : payload);
}

export function writeRawJson(
  res: ServerResponse,
  code: number,
  json: string,
  extra: Record<string, string | string[]> = {},
): void {
  const payload = Buffer.from(`${json}\n`);
  res.writeHead(
    code,
    headers({ 'Content-Type': 'application/json', 'Content-Length': String(payload.length), ...extra }),
  );
  res.end(payload);
}

/** The single mapping from anything thrown to a Kubernetes Status. */
export function toStatus(err: unknown, log: Logger): Status {
  if (err instanceof StatusError) return err.status;
  if (err instanceof SelectorError) return statusErrors.badRequest(err.message).status;
  if (isStoreError(err)) {
    switch (err.code) {
      case 'Compacted':
        return statusErrors.expired(err.message).status;
      case 'TooLarge':
        return {
          ...statusErrors.requestEntityTooLarge(0).status,
          message: 'Request entity too large: the object exceeds the storage limit of 1.5 MiB',
        };
      case 'InvalidArgument':
        return statusErrors.badRequest(err.message).status;
      case 'Unavailable':
      case 'Closed':
        log.warn('storage unavailable', { error: err.message });
        return statusErrors.serviceUnavailable('storage is unavailable; try again').status;
      default:
        break;
    }
  }
  log.error('internal error', { error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  return statusErrors.internal(err).status;
}

export function writeStatus(
  res: ServerResponse,
  status: Status,
  extra: Record<string, string | string[]> = {},
): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  writeJson(res, status.code, status, { extraHeaders: extra });
}
