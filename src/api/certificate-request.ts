// What the server and its controllers read from a PKCS#10 CERTIFICATE REQUEST (spec.request of a
// certificates.k8s.io/v1 CertificateSigningRequest). The parsing itself needs X.509 tooling, which lives
// in one file of the API server (apiserver/auth/pki.ts); the rest of the code takes it as a function.

export interface ParsedCertificateRequest {
  /** The subject's commonName ('' when none). */
  readonly commonName: string;
  /** The subject's organization values, in order. */
  readonly organizations: readonly string[];
  /** subjectAltName entries requested through the extensionRequest attribute. */
  readonly dnsNames: readonly string[];
  readonly emailAddresses: readonly string[];
  readonly ipAddresses: readonly string[];
  readonly uris: readonly string[];
}

/** Parses a PEM CERTIFICATE REQUEST and checks its signature; throws an Error saying what is wrong. */
export type CertificateRequestParser = (pem: string) => ParsedCertificateRequest;

/** The signers of kube-controller-manager's csrsigning controller that svcplane's signer serves. */
export const KUBELET_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';

/** spec.request and status.certificate travel as base64 in JSON ([]byte); '' when absent or not base64. */
export function decodeBytesField(v: unknown): string {
  if (typeof v !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(v) || v.length % 4 !== 0) return '';
  return atobText(v);
}

/** The base64 text of a string's UTF-8 bytes (PEM is ASCII). */
export function encodeBytesField(text: string): string {
  let bin = '';
  for (const b of new TextEncoder().encode(text)) bin += String.fromCharCode(b);
  return btoa(bin);
}

function atobText(v: string): string {
  const bin = atob(v);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return new TextDecoder().decode(bytes);
}
