// The one error type of the API: a StatusError carries the Kubernetes Status the HTTP layer returns.
// Constructors produce kube-apiserver's reasons, codes, messages and details, because kubectl and
// client libraries print and branch on them: kubectl prints `Error from server (<reason>)` and rebuilds
// an Invalid error's text from details.causes; apimachinery's errors.IsNotFound and friends test the
// reason.
import { aggregate, errorBody, fieldErrorString, type FieldError } from './field-errors.js';
import { errText } from './err-text.js';

export type StatusReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Invalid'
  | 'BadRequest'
  | 'Expired'
  | 'Gone'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'Forbidden'
  | 'Unauthorized'
  | 'TooManyRequests'
  | 'Timeout'
  | 'ServiceUnavailable'
  | 'InternalError';

export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

export interface StatusDetails {
  readonly name?: string;
  readonly group?: string;
  /** The lower-case plural resource for NotFound/AlreadyExists/Conflict, the Kind for Invalid. */
  readonly kind?: string;
  readonly uid?: string;
  readonly causes?: readonly StatusCause[];
  readonly retryAfterSeconds?: number;
}

export interface Status {
  readonly kind: 'Status';
  readonly apiVersion: 'v1';
  readonly metadata: Record<string, never>;
  readonly status: 'Failure' | 'Success';
  readonly message: string;
  readonly reason?: StatusReason;
  readonly details?: StatusDetails;
  readonly code: number;
}

/** Which resource an error is about: `{ group: '', resource: 'services' }`. */
export interface GroupResource {
  readonly group: string;
  readonly resource: string;
}

/** Which kind an Invalid error is about: `{ group: 'superedge.io', kind: 'ServiceGrid' }`. */
export interface GroupKind {
  readonly group: string;
  readonly kind: string;
}

export class StatusError extends Error {
  override readonly name = 'StatusError';
  constructor(
    readonly status: Status,
    options?: { cause?: unknown },
  ) {
    super(status.message, options);
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): StatusReason | undefined {
    return this.status.reason;
  }
}

export const isStatusError = (err: unknown, reason?: StatusReason): err is StatusError =>
  err instanceof StatusError && (reason === undefined || err.status.reason === reason);

function failure(
  code: number,
  reason: StatusReason | undefined,
  message: string,
  details?: StatusDetails,
  cause?: unknown,
): StatusError {
  const status: Status = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    ...(reason === undefined ? {} : { reason }),
    ...(details === undefined ? {} : { details }),
    code,
  };
  return new StatusError(status, cause === undefined ? undefined : { cause });
}

/** `services` for the core group, `servicegrids.superedge.io` otherwise. */
export const qualifiedResource = (gr: GroupResource): string =>
  gr.group === '' ? gr.resource : `${gr.resource}.${gr.group}`;

const qualifiedKind = (gk: GroupKind): string => (gk.group === '' ? gk.kind : `${gk.kind}.${gk.group}`);

const resourceDetails = (gr: GroupResource, name: string): StatusDetails => ({
  name,
  ...(gr.group === '' ? {} : { group: gr.group }),
  kind: gr.resource,
});

export const CONFLICT_MODIFIED =
  'the object has been modified; please apply your changes to the latest version and try again';

export const statusErrors = {
  notFound: (gr: GroupResource, name: string): StatusError =>
    failure(
      404,
      'NotFound',
      `${qualifiedResource(gr)} ${JSON.stringify(name)} not found`,
      resourceDetails(gr, name),
    ),

  alreadyExists: (gr: GroupResource, name: string): StatusError =>
    failure(
      409,
      'AlreadyExists',
      `${qualifiedResource(gr)} ${JSON.stringify(name)} already exists`,
      resourceDetails(gr, name),
    ),

  conflict: (
    gr: GroupResource,
    name: string,
    detail: string = CONFLICT_MODIFIED,
    causes?: StatusCause[],
  ): StatusError =>
    failure(
      409,
      'Conflict',
      `Operation cannot be fulfilled on ${qualifiedResource(gr)} ${JSON.stringify(name)}: ${detail}`,
      {
        ...resourceDetails(gr, name),
        ...(causes === undefined ? {} : { causes }),
      },
    ),

  /** 422: kubectl rebuilds its text from details.kind, details.name and each cause's field and message. */
  invalid: (gk: GroupKind, name: string, errs: readonly FieldError[]): StatusError =>
    failure(
      422,
      'Invalid',
      `${qualifiedKind(gk)} ${JSON.stringify(name)} is invalid: ${aggregate(errs.map(fieldErrorString))}`,
      {
        name,
        ...(gk.group === '' ? {} : { group: gk.group }),
        kind: gk.kind,
        causes: errs.map((e) => ({ reason: e.type, message: errorBody(e), field: e.field })),
      },
    ),

  badRequest: (message: string): StatusError => failure(400, 'BadRequest', message),

  /** A path nothing serves (kube-apiserver's answer, with empty details). */
  pathNotFound: (): StatusError =>
    failure(404, 'NotFound', 'the server could not find the requested resource', {}),

  /** 410 for a watch or list from a resourceVersion older than the history kept. */
  expired: (message: string): StatusError => failure(410, 'Expired', message),

  gone: (message: string): StatusError => failure(410, 'Gone', message),

  methodNotSupported: (gr: GroupResource, verb: string): StatusError =>
    failure(
      405,
      'MethodNotAllowed',
      `${verb} is not supported on resources of kind ${JSON.stringify(qualifiedResource(gr))}`,
      {
        ...(gr.group === '' ? {} : { group: gr.group }),
        kind: gr.resource,
      },
    ),

  notAcceptable: (accepted: readonly string[]): StatusError =>
    failure(406, 'NotAcceptable', `only the following media types are accepted: ${accepted.join(', ')}`),

  unsupportedMediaType: (accepted: readonly string[]): StatusError =>
    failure(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
    ),

  requestEntityTooLarge: (limitBytes: number): StatusError =>
    failure(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limitBytes}`),

  forbidden: (gr: GroupResource, name: string, why: string): StatusError =>
    failure(
      403,
      'Forbidden',
      name === ''
        ? `${qualifiedResource(gr)} is forbidden: ${why}`
        : `${qualifiedResource(gr)} ${JSON.stringify(name)} is forbidden: ${why}`,
      resourceDetails(gr, name),
    ),

  unauthorized: (message = 'Unauthorized'): StatusError => failure(401, 'Unauthorized', message),

  tooManyRequests: (message: string, retryAfterSeconds: number): StatusError =>
    failure(429, 'TooManyRequests', message, { retryAfterSeconds }),

  timeout: (message: string, retryAfterSeconds?: number): StatusError =>
    failure(504, 'Timeout', message, retryAfterSeconds === undefined ? undefined : { retryAfterSeconds }),

  serviceUnavailable: (message: string, cause?: unknown): StatusError =>
    failure(503, 'ServiceUnavailable', message, undefined, cause),

  internal: (err: unknown): StatusError => {
    const message = errText(err);
    return failure(
      500,
      'InternalError',
      `Internal error occurred: ${message}`,
      { causes: [{ message }] },
      err,
    );
  },
} as const;
