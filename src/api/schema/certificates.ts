// certificates.k8s.io/v1 CertificateSigningRequest: a request for an X.509 certificate from a named
// signer (kubelets' client certificates, TLS bootstrapping).
import { always, atomicStrings, field, int32, keyedList, mapOf, named, str, time } from './build.js';
import { kindSchema } from './meta.js';
import type { Schema } from './schema.js';

const CERTIFICATES = 'io.k8s.api.certificates.v1';
const bytes = (description: string): Schema => str(description, { format: 'byte' });

const csrSpec: Schema = named(
  `${CERTIFICATES}.CertificateSigningRequestSpec`,
  {
    request: bytes('A PEM-encoded PKCS#10 CERTIFICATE REQUEST block.'),
    signerName: str('The signer asked to issue the certificate, as a qualified name (example.com/signer).'),
    expirationSeconds: int32(
      'Requested validity of the certificate, at least 600; the signer may shorten it.',
    ),
    usages: atomicStrings(
      'Key usages requested in the issued certificate (digital signature, client auth, …).',
    ),
    username: str('Who created the request; set by the API server.'),
    uid: str('The UID of who created the request; set by the API server.'),
    groups: atomicStrings('The groups of who created the request; set by the API server.'),
    extra: mapOf(atomicStrings(), 'Extra attributes of who created the request; set by the API server.'),
  },
  { required: ['request', 'signerName'] },
);

const csrCondition: Schema = named(
  `${CERTIFICATES}.CertificateSigningRequestCondition`,
  {
    type: str('Approved, Denied or Failed.'),
    status: str('True, False or Unknown; Approved and Denied are always True.'),
    reason: str('CamelCase reason for the condition.'),
    message: str('Human-readable detail.'),
    lastUpdateTime: time('When the condition was last updated.'),
    lastTransitionTime: time('When the status last changed.'),
  },
  { required: ['type', 'status'] },
);

const csrStatus: Schema = named(`${CERTIFICATES}.CertificateSigningRequestStatus`, {
  conditions: keyedList(csrCondition, ['type'], 'Approved, Denied and Failed, each at most once.', null),
  certificate: bytes('The issued certificate (PEM CERTIFICATE blocks), set by the signer once approved.'),
});

export const certificateSigningRequest: Schema = kindSchema(
  `${CERTIFICATES}.CertificateSigningRequest`,
  'A request for a certificate from a named signer, approved or denied, then issued by the signer.',
  {
    spec: always(field(csrSpec, 'What is requested; immutable once created.')),
    status: field(csrStatus, 'Approval and the issued certificate.'),
  },
);
