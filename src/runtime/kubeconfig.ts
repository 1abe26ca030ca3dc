// The one place that loads @kubernetes/client-node: a kubeconfig (file, $KUBECONFIG or the default
// locations) becomes an HTTPS transport with its CA, client certificate, bearer token or exec plugin.
// Everything else in the runtime talks to the Transport interface, so the same controllers run against
// svcplane's apiserver, any real kube-apiserver, or an in-memory fake in tests.
import { KubeConfig } from '@kubernetes/client-node';
import type { RequestOptions } from 'node:https';
import { httpTransport } from './http-transport.js';
import type { Transport } from './transport.js';

export interface KubeconfigTransportOptions {
  /** A kubeconfig file; default: $KUBECONFIG, then ~/.kube/config, then in-cluster. */
  readonly path?: string;
  /** Overrides the current context. */
  readonly context?: string;
}

export interface KubeconfigTransport extends Transport {
  /** The current context's namespace, when it names one (what kubectl uses without -n). */
  readonly namespace: string | undefined;
}

export function kubeconfigTransport(opts: KubeconfigTransportOptions = {}): KubeconfigTransport {
  const kc = new KubeConfig();
  if (opts.path !== undefined) kc.loadFromFile(opts.path);
  else kc.loadFromDefault();
  if (opts.context !== undefined) kc.setCurrentContext(opts.context);
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('the kubeconfig has no current cluster');
  const transport = httpTransport({
    server: cluster.server,
    credentials: async () => {
      const base: RequestOptions = {};
      await kc.applyToHTTPSOptions(base); // CA, client cert, token (exec plugins refresh theirs here)
      return {
        ...(base.ca === undefined ? {} : { ca: base.ca }),
        ...(base.cert === undefined ? {} : { cert: base.cert }),
        ...(base.key === undefined ? {} : { key: base.key }),
        ...(base.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: base.rejectUnauthorized }),
        ...(base.headers === undefined ? {} : { headers: base.headers as Record<string, string> }),
      };
    },
  });
  const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace;
  return { ...transport, namespace: namespace === '' ? undefined : namespace };
}
