// k8s.io/api/certificates/v1 CertificateSigningRequest (field numbers from its generated.proto): what
// `kubectl certificate approve|deny` puts to /approval. spec.extra has no table: svcplane never sets it.
import { message } from '../decode.js';
import { objectMeta } from './meta.js';

const CERTIFICATES = 'k8s.io.api.certificates.v1';

const csrSpec = message(`${CERTIFICATES}.CertificateSigningRequestSpec`, {
  1: ['request', 'bytes', 'keep'],
  7: ['signerName', 'string', 'keep'],
  8: ['expirationSeconds', 'int32'],
  5: ['usages', 'string', 'repeated'],
  2: ['username', 'string'],
  3: ['uid', 'string'],
  4: ['groups', 'string', 'repeated'],
});

const csrCondition = message(`${CERTIFICATES}.CertificateSigningRequestCondition`, {
  1: ['type', 'string', 'keep'],
  6: ['status', 'string', 'keep'],
  2: ['reason', 'string'],
  3: ['message', 'string'],
  5: ['lastTransitionTime', 'time'],
  4: ['lastUpdateTime', 'time'],
});

const csrStatus = message(`${CERTIFICATES}.CertificateSigningRequestStatus`, {
  1: ['conditions', csrCondition, 'repeated'],
  2: ['certificate', 'bytes'],
});

export const certificateSigningRequest = message(`${CERTIFICATES}.CertificateSigningRequest`, {
  1: ['metadata', objectMeta],
  2: ['spec', csrSpec],
  3: ['status', csrStatus],
});
