// The CertificateSigningRequest strategies: the requester comes from the authenticated user, never
// from the body; the spec never changes; /status cannot touch Approved or Denied, /approval nothing else.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import { fillRequester, prepareCsrUpdate } from './certificate-signing-request.js';
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
