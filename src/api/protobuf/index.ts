// Kubernetes protobuf request bodies, decoded to the JSON objects the rest of the server works on.
//
// A body is the magic `k8s\0` followed by a runtime.Unknown {1 typeMeta {1 apiVersion, 2 kind}, 2 raw,
// 3 contentEncoding, 4 contentType}; `raw` is the object's own message, decoded with the table of its
// kind. Only kinds with a table are accepted, and only fields in the tables: anything else is a
// ProtobufError('Unsupported') so that no data is ever dropped silently.
import type { KObject } from '../object.js';
import { decodeMessage, type MessageType } from './decode.js';
import { ProtobufError, malformed, unsupported } from './errors.js';
import { deployment } from './tables/apps.js';
import { certificateSigningRequest } from './tables/certificates.js';
import { event as coreEvent, namespace, pod, service, serviceAccount } from './tables/core.js';
import { event as eventsEvent } from './tables/events.js';
import { deleteOptions } from './tables/meta.js';
import { clusterRole, clusterRoleBinding, role, roleBinding } from './tables/rbac.js';
import {
  selfSubjectAccessReview,
  selfSubjectReview,
  selfSubjectRulesReview,
  tokenRequest,
  tokenReview,
} from './tables/reviews.js';
import { WIRE_LEN, WireReader } from './wire.js';

export { ProtobufError, type ProtobufErrorReason } from './errors.js';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** The magic prefix of every non-stream Kubernetes protobuf object: "k8s\0". */
export const PROTOBUF_MAGIC: readonly number[] = [0x6b, 0x38, 0x73, 0x00];

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

const TABLES: ReadonlyMap<string, MessageType> = new Map([
  ['/v1/Namespace', namespace],
  ['/v1/Service', service],
  ['/v1/Pod', pod],
  ['/v1/Event', coreEvent],
  ['apps/v1/Deployment', deployment],
  ['events.k8s.io/v1/Event', eventsEvent],
  ['authorization.k8s.io/v1/SelfSubjectAccessReview', selfSubjectAccessReview],
  ['authorization.k8s.io/v1/SelfSubjectRulesReview', selfSubjectRulesReview],
  ['authentication.k8s.io/v1/SelfSubjectReview', selfSubjectReview],
  ['rbac.authorization.k8s.io/v1/Role', role],
  ['rbac.authorization.k8s.io/v1/ClusterRole', clusterRole],
  ['rbac.authorization.k8s.io/v1/RoleBinding', roleBinding],
  ['rbac.authorization.k8s.io/v1/ClusterRoleBinding', clusterRoleBinding],
  ['authentication.k8s.io/v1/TokenRequest', tokenRequest],
  ['authentication.k8s.io/v1/TokenReview', tokenReview],
  ['/v1/ServiceAccount', serviceAccount],
  ['certificates.k8s.io/v1/CertificateSigningRequest', certificateSigningRequest],
]);

const gvkKey = (gvk: GroupVersionKind): string => `${gvk.group}/${gvk.version}/${gvk.kind}`;
const apiVersionOf = (gvk: GroupVersionKind): string =>
  gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`;

/** Whether a kind's protobuf bodies can be decoded. */
export const hasProtobufTable = (gvk: GroupVersionKind): boolean => TABLES.has(gvkKey(gvk));

/** The kinds with a protobuf table, as `apps/v1 Deployment`. */
export const protobufKinds = (): string[] =>
  [...TABLES.keys()].map((k) => {
    const [group = '', version = '', kind = ''] = k.split('/');
    return `${group === '' ? version : `${group}/${version}`} ${kind}`;
  });

interface Envelope {
  readonly apiVersion: string;
  readonly kind: string;
  readonly raw: Uint8Array;
  readonly contentEncoding: string;
  readonly contentType: string;
}

function readEnvelope(bytes: Uint8Array): Envelope {
  if (bytes.length < PROTOBUF_MAGIC.length || PROTOBUF_MAGIC.some((b, i) => bytes[i] !== b)) {
    throw malformed('the body does not start with the Kubernetes protobuf prefix "k8s\\x00"');
  }
  const r = new WireReader(bytes, PROTOBUF_MAGIC.length);
  let apiVersion = '';
  let kind = '';
  let raw: Uint8Array = new Uint8Array(0);
  let contentEncoding = '';
  let contentType = '';
  while (!r.done) {
    const tag = r.tag();
    if (tag.field >= 1 && tag.field <= 4 && tag.wire !== WIRE_LEN) {
      throw malformed(`runtime.Unknown field ${tag.field} is not length-delimited`);
    }
    switch (tag.field) {
      case 1: {
        const tm = r.message();
        while (!tm.done) {
          const t = tm.tag();
          if (t.wire !== WIRE_LEN && (t.field === 1 || t.field === 2)) {
            throw malformed(`runtime.TypeMeta field ${t.field} is not length-delimited`);
          }
          if (t.field === 1) apiVersion = tm.string();
          else if (t.field === 2) kind = tm.string();
          else throw unsupported(`runtime.TypeMeta field ${t.field} is not supported`);
        }
        break;
      }
      case 2:
        raw = r.bytes();
        break;
      case 3:
        contentEncoding = r.string();
        break;
      case 4:
        contentType = r.string();
        break;
      default:
        throw unsupported(`runtime.Unknown field ${tag.field} is not supported`);
    }
  }
  return { apiVersion, kind, raw, contentEncoding, contentType };
}

/**
 * Decodes a `application/vnd.kubernetes.protobuf` object of the expected kind into its JSON form, with
 * apiVersion and kind set. Throws ProtobufError: Malformed (not valid protobuf), Mismatch (another
 * kind or version than the endpoint serves), Unsupported (a kind or field without a table here).
 */
export function decodeProtobufObject(bytes: Uint8Array, expected: GroupVersionKind): KObject {
  const apiVersion = apiVersionOf(expected);
  // As kube-apiserver, which has no protobuf serializer for custom resources: the kind decides first.
  const table = TABLES.get(gvkKey(expected));
  if (table === undefined) {
    throw unsupported(
      `protobuf bodies of ${apiVersion} ${expected.kind} are not supported (only of ${protobufKinds().join(', ')})`,
    );
  }
  const env = readEnvelope(bytes);
  if (env.apiVersion !== apiVersion || env.kind !== expected.kind) {
    const got =
      env.kind === '' && env.apiVersion === ''
        ? 'an object without apiVersion and kind'
        : `${env.apiVersion || '(no apiVersion)'} ${env.kind || '(no kind)'}`;
    throw new ProtobufError(
      'Mismatch',
      `the body holds ${got}, but this endpoint takes ${apiVersion} ${expected.kind}`,
    );
  }
  if (env.contentEncoding !== '') {
    throw unsupported(
      `runtime.Unknown contentEncoding ${JSON.stringify(env.contentEncoding)} is not supported`,
    );
  }
  if (env.contentType !== '' && env.contentType !== PROTOBUF_MEDIA_TYPE) {
    throw unsupported(`runtime.Unknown contentType ${JSON.stringify(env.contentType)} is not supported`);
  }
  const body = decodeMessage(new WireReader(env.raw), table);
  const metadata = body['metadata'];
  return {
    apiVersion,
    kind: expected.kind,
    ...body,
    metadata: typeof metadata === 'object' && metadata !== null ? (metadata as KObject['metadata']) : {},
  };
}

/**
 * Decodes a protobuf DeleteOptions (the body of a DELETE, as client-go's typed clients send it, e.g.
 * `kubectl drain`). DeleteOptions is registered in every group version, so any apiVersion is taken, as
 * kube-apiserver takes it; an envelope that names no type at all is read as DeleteOptions too. Throws
 * ProtobufError as decodeProtobufObject does.
 */
export function decodeProtobufDeleteOptions(bytes: Uint8Array): Record<string, unknown> {
  const env = readEnvelope(bytes);
  const untyped = env.kind === '' && env.apiVersion === '';
  if (env.kind !== 'DeleteOptions' && !untyped) {
    throw new ProtobufError(
      'Mismatch',
      `the body holds ${env.apiVersion || '(no apiVersion)'} ${env.kind || '(no kind)'}, but a DELETE takes a DeleteOptions`,
    );
  }
  if (env.contentEncoding !== '') {
    throw unsupported(
      `runtime.Unknown contentEncoding ${JSON.stringify(env.contentEncoding)} is not supported`,
    );
  }
  if (env.contentType !== '' && env.contentType !== PROTOBUF_MEDIA_TYPE) {
    throw unsupported(`runtime.Unknown contentType ${JSON.stringify(env.contentType)} is not supported`);
  }
  return {
    apiVersion: untyped ? 'meta.k8s.io/v1' : env.apiVersion,
    kind: 'DeleteOptions',
    ...decodeMessage(new WireReader(env.raw), deleteOptions),
  };
}
