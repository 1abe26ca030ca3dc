// Table tests of CertificateSigningRequest validation: each case's exact `<field>: <message>` texts,
// in kube-apiserver's order, through validateCreate and validateStatusUpdate.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeBytesField, type ParsedCertificateRequest } from '../certificate-request.js';
import { fieldErrorString } from '../field-errors.js';
import type { KObject } from '../object.js';
import { mustFindResource } from '../resources.js';
import { validateCreate, validateStatusUpdate } from './index.js';

const CSRS = mustFindResource('certificates.k8s.io', 'certificatesigningrequests');
const PEM = '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n';
const parsed: ParsedCertificateRequest = {
  commonName: 'x',
  organizations: [],
  dnsNames: [],
  emailAddresses: [],
  ipAddresses: [],
  uris: [],
};
const parse = (pem: string): ParsedCertificateRequest => {
  if (pem.includes('BROKEN')) throw new Error('x509: ECDSA verification failure');
  return parsed;
};

const csr = (spec: Record<string, unknown>, status?: Record<string, unknown>): KObject =>
  ({
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name: 'c', resourceVersion: '1' },
    spec: {
      request: encodeBytesField(PEM),
      signerName: 'example.com/signer',
      usages: ['client auth'],
      ...spec,
    },
    ...(status === undefined ? {} : { status }),
  }) as KObject;

const messages = (errs: ReturnType<typeof validateCreate>): string[] => errs.map(fieldErrorString);

describe('CertificateSigningRequest create', () => {
  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ['a valid request', {}, []],
    [
      'no request',
      { request: undefined },
      ['spec.request: Invalid value: "<request>": PEM block type must be CERTIFICATE REQUEST'],
    ],
    [
      'a certificate instead of a request',
      { request: encodeBytesField(CERT) },
      ['spec.request: Invalid value: "<request>": PEM block type must be CERTIFICATE REQUEST'],
    ],
    [
      'a request whose signature does not verify',
      { request: encodeBytesField(PEM.replace('AAAA', 'BROKEN')) },
      ['spec.request: Invalid value: "<request>": x509: ECDSA verification failure'],
    ],
    ['no usages', { usages: [] }, ['spec.usages: Required value: usages must be provided']],
    [
      'an unknown usage',
      { usages: ['client auth', 'flying'] },
      [
        'spec.usages[1]: Unsupported value: "flying": supported values: "any", "cert sign", "client auth", "code signing", "content commitment", "crl sign", "data encipherment", "decipher only", "digital signature", "email protection", "encipher only", "ipsec end system", "ipsec tunnel", "ipsec user", "key agreement", "key encipherment", "microsoft sgc", "netscape sgc", "ocsp signing", "s/mime", "server auth", "signing", "timestamping"',
      ],
    ],
    [
      'a usage twice',
      { usages: ['client auth', 'client auth'] },
      ['spec.usages[1]: Duplicate value: "client auth"'],
    ],
    ['no signerName', { signerName: '' }, ['spec.signerName: Required value']],
    [
      'a signerName without a path',
      { signerName: 'example.com' },
      [
        'spec.signerName: Invalid value: "example.com": must be a fully qualified domain and path of the form \'example.com/signer-name\'',
      ],
    ],
    [
      'a signerName whose domain has one label',
      { signerName: 'example/signer' },
      [
        'spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots',
      ],
    ],
    [
      'a signerName with a bad domain label',
      { signerName: 'Ex.com/signer' },
      [
        "spec.signerName: Invalid value: \"Ex.com\": validating label \"Ex\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      ],
    ],
    ['the kubelet client signer', { signerName: 'kubernetes.io/kube-apiserver-client-kubelet' }, []],
    [
      'expirationSeconds under ten minutes',
      { expirationSeconds: 599 },
      [
        'spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)',
      ],
    ],
    ['expirationSeconds of ten minutes', { expirationSeconds: 600 }, []],
  ];
  for (const [name, spec, want] of cases) {
    it(name, () => {
      const obj = csr(spec);
      if ('request' in spec && spec['request'] === undefined)
        delete (obj.spec as Record<string, unknown>)['request'];
      assert.deepEqual(messages(validateCreate(CSRS, obj, { parseCertificateRequest: parse })), want);
    });
  }
});

describe('CertificateSigningRequest status and approval updates', () => {
  const approved = { type: 'Approved', status: 'True', reason: 'R' };
  const denied = { type: 'Denied', status: 'True' };
  const cases: Array<[string, Record<string, unknown> | undefined, Record<string, unknown>, string[]]> = [
    ['approving', undefined, { conditions: [approved] }, []],
    [
      'approving and denying',
      undefined,
      { conditions: [approved, denied] },
      ['status.conditions: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive'],
    ],
    [
      'Approved twice',
      undefined,
      { conditions: [approved, approved] },
      ['status.conditions[1].type: Duplicate value: "Approved"'],
    ],
    [
      'Approved False',
      undefined,
      { conditions: [{ type: 'Approved', status: 'False' }] },
      ['status.conditions[0].status: Unsupported value: "False": supported values: "True"'],
    ],
    [
      'a condition without type',
      undefined,
      { conditions: [{ status: 'True' }] },
      ['status.conditions[0].type: Required value'],
    ],
    [
      'removing Approved',
      { conditions: [approved] },
      { conditions: [] },
      ['status.conditions: Forbidden: updates may not remove a condition of type "Approved"'],
    ],
    [
      'a certificate before approval',
      undefined,
      { certificate: encodeBytesField(CERT) },
      [
        'status.certificate: Forbidden: may only be set when the Approved condition is set and no Denied or Failed condition is',
      ],
    ],
    [
      'a certificate once approved',
      { conditions: [approved] },
      { conditions: [approved], certificate: encodeBytesField(CERT) },
      [],
    ],
    [
      'something other than a certificate',
      { conditions: [approved] },
      { conditions: [approved], certificate: encodeBytesField(PEM) },
      ['status.certificate: Invalid value: "<certificate data>": must contain only PEM CERTIFICATE blocks'],
    ],
    [
      'changing an issued certificate',
      { conditions: [approved], certificate: encodeBytesField(CERT) },
      { conditions: [approved], certificate: encodeBytesField(CERT.replace('AAAA', 'BBBB')) },
      ['status.certificate: Forbidden: updates may not modify existing certificate content'],
    ],
  ];
  for (const [name, before, after, want] of cases) {
    it(name, () => {
      assert.deepEqual(messages(validateStatusUpdate(CSRS, csr({}, after), csr({}, before))), want);
    });
  }
});
