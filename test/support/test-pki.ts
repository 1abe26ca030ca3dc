// Certificates for tests that run TLS servers outside the API server (the kubelet API): a CA, a serving
// certificate for some IPs, and client certificates (CN = user, O = groups), all from src/apiserver/auth/pki.ts.
import {
  generateCA,
  issueClientCert,
  issueServingCert,
  type CertKeyPair,
} from '../../src/apiserver/auth/pki.js';

export interface TestPki {
  readonly ca: CertKeyPair;
  readonly serving: CertKeyPair;
  client(user: string, groups?: readonly string[]): CertKeyPair;
}

export function testPki(ips: readonly string[]): TestPki {
  const ca = generateCA('svcplane-test-ca');
  return {
    ca,
    serving: issueServingCert(ca, { commonName: 'test-server', ipAddresses: [...ips], dnsNames: [] }),
    client: (user, groups = []) => issueClientCert(ca, { commonName: user, organizations: groups }),
  };
}
