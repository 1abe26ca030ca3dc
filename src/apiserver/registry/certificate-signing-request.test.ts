// The CertificateSigningRequest strategies: the requester comes from the authenticated user, never
// from the body; the spec never changes; /status cannot touch Approved or Denied, /approval nothing else.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import {
  admitCsr,
  fillRequester,
  prepareCsrUpdate,
  signerPermission,
} from './certificate-signing-request.js';
import type { RequestAttributes } from '../auth/types.js';
import { objectForUpdate } from './update-object.js';

const CSRS = mustFindResource('certificates.k8s.io', 'certificatesigningrequests');
const approved = { type: 'Approved', status: 'True' };
const failed = { type: 'Failed', status: 'True' };

const csr = (spec: Record<string, unknown>, status?: Record<string, unknown>): KObject =>
  ({
    metadata: { name: 'c', uid: 'u', resourceVersion: '5' },
    spec,
    ...(status ? { status } : {}),
  }) as KObject;

describe('CertificateSigningRequest strategies', () => {
  it('names the authenticated requester, whatever the body says', () => {
    const obj = csr({
      signerName: 's',
      username: 'mallory',
      uid: 'x',
      groups: ['system:masters'],
      extra: { a: ['b'] },
    });
    fillRequester(CSRS, obj, { name: 'system:bootstrap:abc', uid: '', groups: ['system:bootstrappers'] });
    assert.deepEqual(obj.spec, {
      signerName: 's',
      username: 'system:bootstrap:abc',
      groups: ['system:bootstrappers'],
    });
  });

  it('other kinds are left alone', () => {
    const nodes = mustFindResource('', 'nodes');
    const obj = csr({ username: 'x' });
    fillRequester(nodes, obj, { name: 'y', uid: '', groups: [] });
    assert.deepEqual(obj.spec, { username: 'x' });
    prepareCsrUpdate(nodes, obj, csr({ username: 'z' }), '');
    assert.deepEqual(obj.spec, { username: 'x' });
  });

  const old = csr({ signerName: 's', usages: ['client auth'] }, { conditions: [failed] });
  const cases: Array<[string, '' | 'status' | 'approval', Record<string, unknown>, unknown]> = [
    [
      'the main resource keeps spec and status',
      '',
      { conditions: [approved], certificate: 'Y2VydA==' },
      { conditions: [failed] },
    ],
    [
      '/approval takes only Approved and Denied',
      'approval',
      { conditions: [approved], certificate: 'Y2VydA==' },
      { conditions: [approved, failed] },
    ],
    [
      '/status cannot approve',
      'status',
      { conditions: [approved], certificate: 'Y2VydA==' },
      { certificate: 'Y2VydA==' },
    ],
  ];
  for (const [name, sub, status, want] of cases) {
    it(name, () => {
      const incoming = csr({ signerName: 'other', usages: ['server auth'] }, status);
      const next = objectForUpdate(CSRS, old, incoming, sub);
      assert.deepEqual(next.spec, old.spec);
      assert.deepEqual(next.status, want);
    });
  }
});

describe('CertificateSigningRequest admission', () => {
  const user = { name: 'alice', uid: '', groups: ['system:authenticated'] };
  const asked: string[] = [];
  // alice may approve for example.com's signers (the wildcard) and sign for nobody.
  const may = signerPermission((a: RequestAttributes) => {
    asked.push(`${a.verb} ${a.resource}/${a.name}`);
    return a.verb === 'approve' && a.name === 'example.com/*';
  });
  const parse = (pem: string) => ({
    commonName: 'x',
    organizations: pem === 'masters' ? ['system:masters'] : ['devs'],
    dnsNames: [],
    emailAddresses: [],
    ipAddresses: [],
    uris: [],
  });
  const req = (signerName: string, request: string, status?: Record<string, unknown>): KObject =>
    csr({ signerName, request: Buffer.from(request).toString('base64') }, status);
  const client = 'kubernetes.io/kube-apiserver-client';

  it('refuses a kube-apiserver-client request for system:masters (CertificateSubjectRestriction)', () => {
    assert.throws(
      () => admitCsr(CSRS, req(client, 'masters'), undefined, user, { may, parse }),
      /use of kubernetes.io\/kube-apiserver-client signer with system:masters group is not allowed/,
    );
    admitCsr(CSRS, req(client, 'devs'), undefined, user, { may, parse });
    admitCsr(CSRS, req('example.com/x', 'masters'), undefined, user, { may, parse });
  });

  it('wants approve on the signer to approve, sign to set the certificate', () => {
    const pending = req('example.com/x', 'devs');
    admitCsr(CSRS, req('example.com/x', 'devs', { conditions: [approved] }), pending, user, { may });
    assert.deepEqual(asked.slice(-2), ['approve signers/example.com/x', 'approve signers/example.com/*']);
    assert.throws(
      () =>
        admitCsr(CSRS, req(client, 'devs', { conditions: [approved] }), req(client, 'devs'), user, { may }),
      /user not permitted to approve requests with signerName "kubernetes.io\/kube-apiserver-client"/,
    );
    assert.throws(
      () =>
        admitCsr(
          CSRS,
          req('example.com/x', 'devs', { conditions: [approved], certificate: 'Y2VydA==' }),
          req('example.com/x', 'devs', { conditions: [approved] }),
          user,
          { may },
        ),
      /user not permitted to sign requests with signerName "example.com\/x"/,
    );
    // The server's own writes (no user) are not checked.
    admitCsr(CSRS, req(client, 'devs', { conditions: [approved] }), req(client, 'devs'), undefined, { may });
  });

  it('wants approve on the signer for every write to /approval, even one that adds no condition', () => {
    const approvedCsr = req(client, 'devs', { conditions: [approved] });
    const reworded = req(client, 'devs', { conditions: [{ ...approved, message: 'changed' }] });
    assert.throws(
      () => admitCsr(CSRS, reworded, approvedCsr, user, { may, subresource: 'approval' }),
      /user not permitted to approve requests with signerName "kubernetes.io\/kube-apiserver-client"/,
    );
    // The same change through /status is not an approval (validation keeps conditions apart there).
    admitCsr(CSRS, reworded, approvedCsr, user, { may, subresource: 'status' });
  });
});
