// The one place that loads @kubernetes/client-node: a kubeconfig (file, $KUBECONFIG or the default
// locations) becomes an HTTPS transport with its CA, client certificate, bearer token or exec plugin.
// Everything else in the runtime talks to the Transport interface, so the same controllers run against
// svcplane's apiserver, any real kube-apiserver, or an in-memory fake in tests.
import { KubeConfig } from '@kubernetes/client-node';
import { Agent, request as httpsRequest, type RequestOptions } from 'node:https';
import { request as httpRequest } from 'node:http';
import {
  requestHeaders,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from './transport.js';

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
  const server = new URL(cluster.server);
  const secure = server.protocol === 'https:';
  let agent: Agent | undefined;

  const send = async (req: TransportRequest): Promise<TransportResponse> => {
    const base: RequestOptions = {};
    await kc.applyToHTTPSOptions(base); // CA, client cert, token (exec plugins refresh theirs here)
    agent ??= new Agent({
      keepAlive: true,
      ...(base.ca === undefined ? {} : { ca: base.ca }),
      ...(base.cert === undefined ? {} : { cert: base.cert }),
      ...(base.key === undefined ? {} : { key: base.key }),
      ...(base.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: base.rejectUnauthorized }),
    });
    const u = new URL(req.path, server);
    const body = req.body === undefined ? undefined : Buffer.from(req.body);
    return new Promise((resolve, reject) => {
      const r = (secure ? httpsRequest : httpRequest)(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname + u.search,
          method: req.method,
          ...(secure ? { agent } : {}),
          headers: {
            ...(base.headers as Record<string, string> | undefined),
            ...requestHeaders(req, body),
          },
          ...(req.signal === undefined ? {} : { signal: req.signal }),
        },
        (res) => resolve({ status: res.statusCode ?? 0, body: res }),
      );
      r.on('error', reject);
      if (body !== undefined) r.write(body);
      r.end();
    });
  };
  const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace;
  return {
    server: server.origin,
    namespace: namespace === '' ? undefined : namespace,
    send,
    close: () => agent?.destroy(),
  };
}
