// The CSR controllers' decisions as tables: which requests the approver asks a SubjectAccessReview
// about (and which review), and what the signer does with a request.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeBytesField, type ParsedCertificateRequest } from '../../api/certificate-request.js';
import type { KObject } from '../../api/object.js';
import { approvalReviews, csrView, signingPlan, subjectAccessReview } from './csr.js';

const KUBELET = 'kubernetes.io/kube-apiserver-client-kubelet';
const node = (over: Partial<ParsedCertificateRequest> = {}): ParsedCertificateRequest => ({
  commonName: 'system:node:n1',
  organizations: ['system:nodes'],
  dnsNames: [],
  emailAddresses: [],
  ipAddresses: [],
  uris: [],
  ...over,
});

const csr = (spec: Record<string, unknown> = {}, status: Record<string, unknown> = {}): KObject =>
  ({
    metadata: { name: 'c' },
    spec: {
      request: encodeBytesField('pem'),
      signerName: KUBELET,
      usages: ['digital signature', 'client auth'],
      username: 'system:bootstrap:abc',
      groups: ['system:bootstrappers', 'system:authenticated'],
      ...spec,
    },
    status,
  }) as KObject;

const approved = { conditions: [{ type: 'Approved', status: 'True' }] };

describe('approvalReviews', () => {
  const cases: Array<[string, KObject, ParsedCertificateRequest, string[]]> = [
    ['a bootstrap request', csr(), node(), ['nodeclient']],
    [
      'key encipherment is optional',
      csr({ usages: ['key encipherment', 'digital signature', 'client auth'] }),
      node(),
      ['nodeclient'],
    ],
    [
      'a renewal by the node itself',
      csr({ username: 'system:node:n1', groups: ['system:nodes'] }),
      node(),
      ['selfnodeclient', 'nodeclient'],
    ],
    ['another signer', csr({ signerName: 'kubernetes.io/kube-apiserver-client' }), node(), []],
    ['no system:node: prefix', csr(), node({ commonName: 'n1' }), []],
    ['only the prefix', csr(), node({ commonName: 'system:node:' }), []],
    ['another organization', csr(), node({ organizations: ['system:masters'] }), []],
    ['an extra organization', csr(), node({ organizations: ['system:nodes', 'system:masters'] }), []],
    ['a DNS name', csr(), node({ dnsNames: ['n1'] }), []],
    ['an IP address', csr(), node({ ipAddresses: ['10.0.0.1'] }), []],
    ['server auth', csr({ usages: ['digital signature', 'client auth', 'server auth'] }), node(), []],
    ['no digital signature', csr({ usages: ['client auth'] }), node(), []],
    ['already approved', csr({}, approved), node(), []],
    ['denied', csr({}, { conditions: [{ type: 'Denied', status: 'True' }] }), node(), []],
  ];
  for (const [name, obj, req, want] of cases)
    it(name, () => assert.deepEqual(approvalReviews(csrView(obj), req), want));

  it('asks about the requester, exactly as recorded', () => {
    assert.deepEqual(subjectAccessReview(csrView(csr({ uid: 'u1' })), 'nodeclient')['spec'], {
      user: 'system:bootstrap:abc',
      uid: 'u1',
      groups: ['system:bootstrappers', 'system:authenticated'],
      resourceAttributes: {
        group: 'certificates.k8s.io',
        resource: 'certificatesigningrequests',
        verb: 'create',
        subresource: 'nodeclient',
      },
    });
  });
});

describe('signingPlan', () => {
  const YEAR = 365 * 24 * 3600;
  const cases: Array<[string, KObject, ParsedCertificateRequest | Error, unknown]> = [
    ['pending', csr(), node(), { kind: 'skip' }],
    ['approved', csr({}, approved), node(), { kind: 'sign', durationSeconds: YEAR }],
    [
      'a shorter expirationSeconds',
      csr({ expirationSeconds: 3600 }, approved),
      node(),
      { kind: 'sign', durationSeconds: 3600 },
    ],
    [
      'a longer one is capped',
      csr({ expirationSeconds: 2 * YEAR }, approved),
      node(),
      { kind: 'sign', durationSeconds: YEAR },
    ],
    ['issued', csr({}, { ...approved, certificate: encodeBytesField('x') }), node(), { kind: 'skip' }],
    [
      'failed',
      csr({}, { conditions: [...approved.conditions, { type: 'Failed', status: 'True' }] }),
      node(),
      { kind: 'skip' },
    ],
    ['an unknown signer', csr({ signerName: 'example.com/x' }, approved), node(), { kind: 'skip' }],
    [
      'a kubelet request naming another group',
      csr({}, approved),
      node({ organizations: ['system:masters'] }),
      { kind: 'fail', message: 'subject organization must be exactly ["system:nodes"]' },
    ],
    [
      'an API client request for server auth',
      csr({ signerName: 'kubernetes.io/kube-apiserver-client', usages: ['server auth'] }, approved),
      node({ commonName: 'alice', organizations: [] }),
      {
        kind: 'fail',
        message: 'usages must be "client auth", optionally with "digital signature" and "key encipherment"',
      },
    ],
    [
      'an API client request',
      csr({ signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] }, approved),
      node({ commonName: 'alice', organizations: [] }),
      { kind: 'sign', durationSeconds: YEAR },
    ],
    [
      'an unreadable request',
      csr({}, approved),
      new Error('bad'),
      { kind: 'fail', message: 'unable to parse csr: bad' },
    ],
  ];
  for (const [name, obj, req, want] of cases)
    it(name, () => assert.deepEqual(signingPlan(csrView(obj), req, YEAR), want));
});
