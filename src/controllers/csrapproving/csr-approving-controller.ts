// The CSR approving controller (kube-controller-manager's csrapproving): auto-approves a kubelet's
// client certificate request when a SubjectAccessReview says its requester may create
// certificatesigningrequests/nodeclient (bootstrapping), or /selfnodeclient when the requester is the
// node the certificate names (renewal). Level-based: every change of a request is looked at again, and
// a request no review allows stays Pending for an administrator (`kubectl certificate approve`).
import type { CertificateRequestParser } from '../../api/certificate-request.js';
import type { KObject } from '../../api/object.js';
import { rfc3339 } from '../../core/nodes/node-object.js';
import {
  approvalReviews,
  autoApprovedCondition,
  csrView,
  subjectAccessReview,
  withCondition,
} from '../../core/certificates/csr.js';
import type { Client } from '../../runtime/client.js';
import type { SharedInformerFactory } from '../../runtime/informer.js';
import { CSRS, CsrController, type CsrControllerOptions } from '../csr-controller.js';

const SUBJECT_ACCESS_REVIEWS = '/apis/authorization.k8s.io/v1/subjectaccessreviews';

export interface CsrApprovingOptions extends CsrControllerOptions {
  /** Reads spec.request (the server's X.509 tooling, injected). */
  readonly parse: CertificateRequestParser;
}

export class CsrApprovingController extends CsrController {
  constructor(
    client: Client,
    factory: SharedInformerFactory,
    private readonly o: CsrApprovingOptions,
  ) {
    super(client, factory, 'csrapproving', o);
  }

  protected async syncCsr(csr: KObject): Promise<void> {
    const v = csrView(csr);
    if (v.approved || v.denied || v.issued || v.request === '') return;
    let parsed;
    try {
      parsed = this.o.parse(v.request);
    } catch {
      return; // not a request this controller can read (the API server refuses unparsable ones)
    }
    for (const review of approvalReviews(v, parsed)) {
      const answer = await this.client.post<{ status?: { allowed?: unknown } }>(
        SUBJECT_ACCESS_REVIEWS,
        subjectAccessReview(v, review),
      );
      if (answer.status?.allowed !== true) continue;
      await this.client.update(
        CSRS,
        withCondition(csr, autoApprovedCondition(review, rfc3339(this.now()))),
        'approval',
      );
      return;
    }
  }
}
