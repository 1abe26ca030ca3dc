// certificates.k8s.io/v1 CertificateSigningRequest validation (kube's
// pkg/apis/certificates/validation: ValidateCertificateSigningRequestCreate and the status and approval
// update rules). spec.request is parsed by the server's CertificateRequestParser when it has one.
import { decodeBytesField, type CertificateRequestParser } from '../certificate-request.js';
import {
  FieldPath,
  duplicate,
  forbidden,
  invalid,
  notSupported,
  required,
  tooLong,
  type FieldError,
} from '../field-errors.js';
import { isPlainObject } from '../json.js';
import { In } from './json.js';
import {
  DNS1123_LABEL_MAX_LENGTH,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
  isDNS1123Label,
  isDNS1123Subdomain,
} from './names.js';

/** certificates.k8s.io's KeyUsage values. */
export const KEY_USAGES = [
  'any',
  'cert sign',
  'client auth',
  'code signing',
  'content commitment',
  'crl sign',
  'data encipherment',
  'decipher only',
  'digital signature',
  'email protection',
  'encipher only',
  'ipsec end system',
  'ipsec tunnel',
  'ipsec user',
  'key agreement',
  'key encipherment',
  'microsoft sgc',
  'netscape sgc',
  'ocsp signing',
  's/mime',
  'server auth',
  'signing',
  'timestamping',
];

const CONDITION_STATUSES = ['False', 'True', 'Unknown'];
const SIGNER_FORMAT = "must be a fully qualified domain and path of the form 'example.com/signer-name'";

/** signerName: `domain/path`, the domain of at least two DNS labels, the path DNS subdomains. */
export function validateSignerName(p: FieldPath, signerName: string): FieldError[] {
  if (signerName === '') return [required(p, '')];
  const segments = signerName.split('/');
  if (segments.length !== 2) return [invalid(p, signerName, SIGNER_FORMAT)];
  const [domain = '', path = ''] = segments;
  const errs: FieldError[] = [];
  if (domain.length > DNS1123_SUBDOMAIN_MAX_LENGTH) errs.push(tooLong(p, DNS1123_SUBDOMAIN_MAX_LENGTH));
  const labels = domain.split('.');
  for (const label of labels) {
    const bad = isDNS1123Label(label);
    if (bad.length === 0) continue;
    for (const m of bad) errs.push(invalid(p, domain, `validating label ${JSON.stringify(label)}: ${m}`));
    break;
  }
  if (labels.length < 2)
    errs.push(invalid(p, domain, 'should be a domain with at least two segments separated by dots'));
  for (const component of path.split('.')) {
    const bad = isDNS1123Subdomain(component);
    if (bad.length === 0) continue;
    for (const m of bad)
      errs.push(invalid(p, path, `validating component ${JSON.stringify(component)}: ${m}`));
    break;
  }
  const maxPath = DNS1123_SUBDOMAIN_MAX_LENGTH + DNS1123_LABEL_MAX_LENGTH + 1;
  if (path.length > maxPath) errs.push(tooLong(p, maxPath));
  return errs;
}

/** The rules of a new request's spec. */
export function validateCsrSpec(
  obj: Record<string, unknown>,
  parse?: CertificateRequestParser,
): FieldError[] {
  const errs: FieldError[] = [];
  const spec = In.at(obj['spec'], FieldPath.root('spec'), errs) ?? new In({}, FieldPath.root('spec'), errs);
  const request = decodeBytesField(spec.raw('request'));
  if (!request.includes('-----BEGIN CERTIFICATE REQUEST-----')) {
    errs.push(invalid(spec.p('request'), '<request>', 'PEM block type must be CERTIFICATE REQUEST'));
  } else if (parse !== undefined) {
    try {
      parse(request);
    } catch (err) {
      errs.push(invalid(spec.p('request'), '<request>', (err as Error).message));
    }
  }
  const usages = spec.strs('usages') ?? [];
  if (usages.length === 0) errs.push(required(spec.p('usages'), 'usages must be provided'));
  const seen = new Set<string>();
  usages.forEach((u, i) => {
    const p = spec.p('usages').index(i);
    if (!KEY_USAGES.includes(u)) errs.push(notSupported(p, u, KEY_USAGES));
    else if (seen.has(u)) errs.push(duplicate(p, u));
    seen.add(u);
  });
  errs.push(...validateSignerName(spec.p('signerName'), spec.s('signerName')));
  const expiration = spec.int('expirationSeconds');
  if (expiration !== undefined && expiration < 600)
    errs.push(
      invalid(
        spec.p('expirationSeconds'),
        expiration,
        'may not specify a duration less than 600 seconds (10 minutes)',
      ),
    );
  return errs;
}

type Condition = { type: string; status: string };

const conditionsOf = (status: In | undefined): { list: Condition[]; at: In[] } => {
  const at = status?.objs('conditions') ?? [];
  return { list: at.map((c) => ({ type: c.s('type'), status: c.s('status') })), at };
};

const has = (list: readonly Condition[], type: string): boolean => list.some((c) => c.type === type);

/**
 * The status a write leaves (through /status, /approval, or a create's empty one): conditions typed,
 * once each for Approved, Denied and Failed, Approved and Denied True and never both; a certificate
 * only of PEM CERTIFICATE blocks, and only once approved. With `old`, the update rules: an Approved or
 * Denied condition is never removed, an issued certificate never changes.
 */
export function validateCsrStatus(obj: Record<string, unknown>, old?: Record<string, unknown>): FieldError[] {
  const errs: FieldError[] = [];
  const statusPath = FieldPath.root('status');
  const status = In.at(obj['status'], statusPath, errs);
  const { list, at } = conditionsOf(status);
  const seen = new Set<string>();
  at.forEach((c, i) => {
    const type = list[i]!.type;
    const st = list[i]!.status;
    if (type === '') errs.push(required(c.p('type'), ''));
    else if ((type === 'Approved' || type === 'Denied' || type === 'Failed') && seen.has(type))
      errs.push(duplicate(c.p('type'), type));
    seen.add(type);
    if (type === 'Approved' || type === 'Denied') {
      if (st !== 'True') errs.push(notSupported(c.p('status'), st, ['True']));
    } else if (!CONDITION_STATUSES.includes(st))
      errs.push(notSupported(c.p('status'), st, CONDITION_STATUSES));
  });
  if (has(list, 'Approved') && has(list, 'Denied'))
    errs.push(
      invalid(
        statusPath.child('conditions'),
        'Denied',
        'Approved and Denied conditions are mutually exclusive',
      ),
    );
  const certificate = decodeBytesField(status?.raw('certificate'));
  const certPath = statusPath.child('certificate');
  if (certificate !== '') {
    const blocks = [...certificate.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----/g)].map((m) => m[1]);
    if (blocks.length === 0 || blocks.some((b) => b !== 'CERTIFICATE'))
      errs.push(invalid(certPath, '<certificate data>', 'must contain only PEM CERTIFICATE blocks'));
    if (!has(list, 'Approved') || has(list, 'Denied') || has(list, 'Failed'))
      errs.push(
        forbidden(
          certPath,
          'may only be set when the Approved condition is set and no Denied or Failed condition is',
        ),
      );
  }
  if (old !== undefined) {
    const before = conditionsOf(In.at(old['status'], statusPath, []));
    for (const type of ['Approved', 'Denied'])
      if (has(before.list, type) && !has(list, type))
        errs.push(
          forbidden(statusPath.child('conditions'), `updates may not remove a condition of type "${type}"`),
        );
    const oldCert = decodeBytesField(isPlainObject(old['status']) ? old['status']['certificate'] : undefined);
    if (oldCert !== '' && oldCert !== certificate)
      errs.push(forbidden(certPath, 'updates may not modify existing certificate content'));
  }
  return errs;
}
