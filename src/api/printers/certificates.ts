// The CertificateSigningRequest printer (kube's printCertificateSigningRequest): NAME AGE SIGNERNAME
// REQUESTOR REQUESTEDDURATION CONDITION.
import { decodeBytesField } from '../certificate-request.js';
import { obj, objects, str } from './fields.js';
import { humanDuration, since } from './time.js';
import { AGE_COLUMN, NAME_COLUMN, column, type Printer } from './types.js';

/** `Denied`, else `Approved`, else `Pending`; then `,Failed` and `,Issued` when they apply. */
function csrCondition(statusValue: unknown): string {
  const status = obj(statusValue);
  const types = new Set(objects(status['conditions']).map((c) => str(c['type'])));
  let text = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) text += ',Failed';
  if (decodeBytesField(status['certificate']) !== '') text += ',Issued';
  return text;
}

export const csrPrinter: Printer = {
  columns: [
    NAME_COLUMN,
    AGE_COLUMN,
    column('SignerName', 'The signer the certificate is requested from.'),
    column('Requestor', 'Who created the request.'),
    column('RequestedDuration', 'The validity the request asks for.'),
    column('Condition', 'Approved, Denied or Pending; Failed and Issued when they apply.'),
  ],
  cells: (csr, nowMs) => {
    const spec = obj(csr['spec']);
    const seconds = spec['expirationSeconds'];
    return [
      csr.metadata.name ?? '',
      since(csr.metadata.creationTimestamp, nowMs),
      str(spec['signerName']),
      str(spec['username']),
      typeof seconds === 'number' ? humanDuration(seconds * 1000) : '<none>',
      csrCondition(csr['status']),
    ];
  },
};
