// Server-wide choices that change what validation accepts, set by flags of the API server.
import type { CertificateRequestParser } from '../certificate-request.js';

export interface ValidationOptions {
  /**
   * Accept 127.0.0.0/8 and ::1 in Endpoints and EndpointSlice addresses, which kube-apiserver refuses.
   * On by default in `svcplane up`, where simulated nodes give pods addresses on loopback
   * (`svcplane node --pod-cidr 127.10.0.0/16`, no root needed); off in `svcplane apiserver` unless
   * `--allow-loopback-endpoints` is given.
   */
  readonly allowLoopbackEndpoints?: boolean;
  /** Parses a CertificateSigningRequest's spec.request (the server's X.509 tooling); without it only the PEM type is checked. */
  readonly parseCertificateRequest?: CertificateRequestParser;
}
