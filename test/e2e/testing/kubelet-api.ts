// GET of a path of `svcplane node`'s kubelet API over HTTPS, trusting the node's serving CA, with a client
// certificate or a bearer token (or neither): the status and the JSON body.
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';

export interface KubeletGet {
  readonly host: string;
  readonly port: number;
  /** The node's kubelet CA file (ROOT/NAME/pki/kubelet-ca.crt). */
  readonly caFile: string;
  readonly path: string;
  readonly cert?: { readonly certPem: string; readonly keyPem: string };
  readonly token?: string;
}

export function kubeletGet<T>(o: KubeletGet): Promise<{ status: number; body: T }> {
  const ca = readFileSync(o.caFile, 'utf8');
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: o.host,
        port: o.port,
        path: o.path,
        ca,
        ...(o.cert === undefined ? {} : { cert: o.cert.certPem, key: o.cert.keyPem }),
        ...(o.token === undefined ? {} : { headers: { Authorization: `Bearer ${o.token}` } }),
        agent: false,
        timeout: 5000,
      },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(body) as T }));
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}
