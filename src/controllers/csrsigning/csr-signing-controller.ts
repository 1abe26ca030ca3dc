// The CSR signing controller (kube-controller-manager's csrsigning, its local signer): issues approved
// requests of kubernetes.io/kube-apiserver-client-kubelet and kubernetes.io/kube-apiserver-client
// with the cluster CA (--cluster-signing-cert-file/--cluster-signing-key-file), valid for
// min(spec.expirationSeconds, --cluster-signing-duration), writing status.certificate through /status;
// a request that asks for what the signer does not issue gets a Failed condition. Level-based.
import type { CertificateRequestParser, ParsedCertificateRequest } from '../../api/certificate-request.js';
import { encodeBytesField } from '../../api/certificate-request.js';
import type { KObject } from '../../api/object.js';
import { rfc3339 } from '../../core/nodes/node-object.js';
import { csrView, signerFailedCondition, signingPlan, withCondition } from '../../core/certificates/csr.js';
import type { Client } from '../../runtime/client.js';
import type { SharedInformerFactory } from '../../runtime/informer.js';
import { CSRS, CsrController, type CsrControllerOptions } from '../csr-controller.js';

/** kube-controller-manager's --cluster-signing-duration default: one year. */
export const DEFAULT_SIGNING_DURATION_SECONDS = 365 * 24 * 60 * 60;

/** Issues a certificate for a PEM CERTIFICATE REQUEST (the cluster CA, injected): its PEM. */
export type CsrSigner = (
  csrPem: string,
  opts: { usages: readonly string[]; durationSeconds: number; nowMs: number },
) => string;

export interface CsrSigningOptions extends CsrControllerOptions {
  readonly parse: CertificateRequestParser;
  readonly sign: CsrSigner;
  /** --cluster-signing-duration in seconds (default one year). */
  readonly maxDurationSeconds?: number;
}

export class CsrSigningController extends CsrController {
  constructor(
    client: Client,
    factory: SharedInformerFactory,
    private readonly o: CsrSigningOptions,
  ) {
    super(client, factory, 'csrsigning', o);
  }

  protected async syncCsr(csr: KObject): Promise<void> {
    const v = csrView(csr);
    let parsed: ParsedCertificateRequest | Error;
    try {
      parsed = this.o.parse(v.request);
    } catch (err) {
      parsed = err instanceof Error ? err : new Error(String(err));
    }
    const plan = signingPlan(v, parsed, this.o.maxDurationSeconds ?? DEFAULT_SIGNING_DURATION_SECONDS);
    if (plan.kind === 'skip') return;
    const nowMs = this.now();
    let next: KObject;
    if (plan.kind === 'fail') {
      next = withCondition(csr, signerFailedCondition(plan.message, rfc3339(nowMs)));
    } else {
      const certPem = this.o.sign(v.request, {
        usages: v.usages,
        durationSeconds: plan.durationSeconds,
        nowMs,
      });
      next = { ...csr, status: { ...(csr.status as object), certificate: encodeBytesField(certPem) } };
    }
    await this.client.update(CSRS, next, 'status');
  }
}
