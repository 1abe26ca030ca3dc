// TLS bootstrapping of one node (nodes/tls-bootstrap.ts with the pki this command gives it) against an API server without CSR controllers: the node's request is
// created with the bootstrap identity and waited for; an issued certificate is saved (0600) and used
// again while valid; a denied request, and one nobody issues in time, fail with their name.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startInProcessApiServer, type InProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { decodeBytesField, encodeBytesField } from '../api/certificate-request.js';
import type { KObject } from '../api/object.js';
import { mustFindResource } from '../api/resources.js';
import { createCertificateRequest, generateCA, signCertificateRequest } from '../apiserver/auth/pki.js';
import { BootstrapError, bootstrapNodeCertificate, CLIENT_CERT_FILE } from '../nodes/tls-bootstrap.js';

const CSRS = mustFindResource('certificates.k8s.io', 'certificatesigningrequests');
const ca = generateCA('bootstrap-test');

describe('bootstrapNodeCertificate', () => {
  let api: InProcessApiServer;
  const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-tls-bootstrap-'));
  before(async () => {
    api = await startInProcessApiServer();
  });
  after(async () => {
    await api.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Acts as approver and signer for the next request that appears (or denies it). */
  async function decide(verdict: 'issue' | 'deny'): Promise<void> {
    for (;;) {
      const pending = (await api.client.list(CSRS)).items.find((c) => c.status === undefined);
      if (pending !== undefined) {
        const condition = {
          type: verdict === 'issue' ? 'Approved' : 'Denied',
          status: 'True',
          message: 'by test',
        };
        const decided: KObject = await api.client.update(
          CSRS,
          { ...pending, status: { conditions: [condition] } },
          'approval',
        );
        if (verdict === 'deny') return;
        const spec = decided.spec as { request: string; usages: string[] };
        const cert = signCertificateRequest(ca, decodeBytesField(spec.request), {
          usages: spec.usages,
          durationSeconds: 3600,
          nowMs: Date.now(),
        });
        await api.client.update(
          CSRS,
          { ...decided, status: { ...(decided.status as object), certificate: encodeBytesField(cert) } },
          'status',
        );
        return;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const opts = (nodeName: string, timeoutMs = 10_000) => ({
    client: api.client,
    nodeName,
    certDir: dir,
    createRequest: createCertificateRequest,
    timeoutMs,
  });

  it('requests, waits, saves; the next start reuses the certificate', async () => {
    const [cert] = await Promise.all([bootstrapNodeCertificate(opts('n1')), decide('issue')]);
    assert.match(cert.requestName ?? '', /^node-csr-/);
    const csr = await api.client.get(CSRS, '', cert.requestName!);
    assert.equal(
      (csr.spec as { signerName: string }).signerName,
      'kubernetes.io/kube-apiserver-client-kubelet',
    );
    assert.deepEqual((csr.spec as { usages: string[] }).usages, ['digital signature', 'client auth']);
    assert.equal(statSync(path.join(dir, 'n1', CLIENT_CERT_FILE)).mode & 0o777, 0o600);
    const again = await bootstrapNodeCertificate(opts('n1'));
    assert.equal(again.requestName, undefined);
    assert.equal(again.certPem, cert.certPem);
    assert.equal(again.keyPem, cert.keyPem);
  });

  it('fails on a denied request, naming it', async () => {
    await assert.rejects(
      Promise.all([bootstrapNodeCertificate(opts('n2')), decide('deny')]),
      (err: unknown) =>
        err instanceof BootstrapError && /node-csr-\w+" was denied: by test/.test(err.message),
    );
  });

  it('gives up after the timeout, naming the request and how to approve it', async () => {
    await assert.rejects(bootstrapNodeCertificate(opts('n3', 300)), (err: unknown) => {
      assert.ok(err instanceof BootstrapError);
      assert.match(
        err.message,
        /^timed out after 300ms waiting for CertificateSigningRequest "(node-csr-\w+)" to be approved and issued \(kubectl get csr; kubectl certificate approve \1\)$/,
      );
      return true;
    });
  });
});
