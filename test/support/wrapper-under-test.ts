// A wrapper in this process over an in-process API server (test/support/in-process-apiserver.ts), with
// its plain-HTTP port open (anonymous readers), for tests and benchmarks that hit it with real sockets.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { generateCA, issueServingCert } from '../../src/apiserver/auth/pki.js';
import { parseTokenFile } from '../../src/apiserver/auth/token-file.js';
import { startWrapper, type RunningWrapper } from '../../src/cli/wrapper-server.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { MemoryStore } from '../../src/storage/memory/memory-store.js';
import { startInProcessApiServer, type InProcessApiServer } from './in-process-apiserver.js';
import { mustFindResource } from '../../src/api/resources.js';

export interface WrapperUnderTest {
  readonly api: InProcessApiServer;
  readonly wrapper: RunningWrapper;
  /** The plain-HTTP port. */
  readonly port: number;
  stop(): Promise<void>;
}

/** Starts the upstream (with `services` Services in "default") and a wrapper for node "n1" over it. */
export async function startWrapperUnderTest(services = 20): Promise<WrapperUnderTest> {
  const api = await startInProcessApiServer();
  const svc = mustFindResource('', 'services');
  for (let i = 0; i < services; i++)
    await api.client.create(svc, 'default', {
      metadata: { name: `s${i}`, labels: { app: 'web' } },
      spec: { ports: [{ port: 80 }] },
    });
  const ca = generateCA('svcplane-fuzz-ca');
  const cert = issueServingCert(ca, { commonName: 'wrapper', ipAddresses: ['127.0.0.1'], dnsNames: [] });
  const store = new MemoryStore();
  const wrapper = await startWrapper({
    upstream: api.client,
    store,
    hostname: 'n1',
    bindAddress: '127.0.0.1',
    port: 0,
    tls: { cert: cert.certPem, key: cert.keyPem, clientCA: ca.certPem },
    tokens: parseTokenFile(''),
    insecure: { bindAddress: '127.0.0.1', port: 0 },
    version: { major: '1', minor: '33', gitVersion: 'v1.33.0+svcplane.test' },
    log: silentLogger,
    minRequestTimeoutSeconds: 5,
  });
  const port = Number(new URL(wrapper.insecureUrl!).port);
  return {
    api,
    wrapper,
    port,
    stop: async () => {
      await wrapper.shutdown();
      await store.close();
      await api.stop();
    },
  };
}

/** The heap in use after a full collection (the collector exposed on first use). */
export function heapAfterGc(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
