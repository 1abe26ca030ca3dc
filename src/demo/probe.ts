// "curl <cluster-ip> | grep 'node name'" from a node, several times: each request on a new connection
// (so the proxy chooses an endpoint for each), the echo server's `node name:` line kept, a failure kept as
// what the client saw (refused, timeout, reset).
import { request } from 'node:http';
import { nodeScriptInNetns } from './netns.js';

export type Answer = string; // a node name, or "refused" / "timeout" / "error: ..."

/** One GET on a new connection; the `node name:` of the pod that answered, or what went wrong. */
export function getNodeName(host: string, port: number, timeoutMs = 2000): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request({ host, port, path: '/', agent: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(/node name:\s*(\S+)/.exec(body)?.[1] ?? `error: HTTP ${res.statusCode}`));
      res.on('error', (e) => resolve(`error: ${e.message}`));
    });
    req.on('timeout', () => {
      req.destroy();
      resolve('timeout');
    });
    req.on('error', (e: NodeJS.ErrnoException) =>
      resolve(
        e.code === 'ECONNREFUSED'
          ? 'refused'
          : e.code === 'ECONNRESET'
            ? 'reset'
            : `error: ${e.code ?? e.message}`,
      ),
    );
    req.end();
  });
}

export async function sample(host: string, port: number, count: number): Promise<Answer[]> {
  const out: Answer[] = [];
  for (let i = 0; i < count; i++) out.push(await getNodeName(host, port));
  return out;
}

// The same, run by a child Node process inside a network namespace (`ip netns exec NS node -e ...`):
// a process cannot move one socket into another namespace, so the request must start there. It keeps the
// echo's line named by its fourth argument (`node name` by default; `pod IP` tells which address answered).
const SCRIPT = `
const http = require('node:http');
const [host, port, count, field] = process.argv.slice(1);
const line = new RegExp(field + ':\\\\s*(\\\\S+)');
const one = () => new Promise((resolve) => {
  const req = http.request({ host, port: Number(port), path: '/', agent: false, timeout: 2000 }, (res) => {
    let body = ''; res.setEncoding('utf8');
    res.on('data', (d) => (body += d));
    res.on('end', () => { const m = line.exec(body); resolve(m ? m[1] : 'error: HTTP ' + res.statusCode); });
  });
  req.on('timeout', () => { req.destroy(); resolve('timeout'); });
  req.on('error', (e) => resolve(e.code === 'ECONNREFUSED' ? 'refused' : e.code === 'ECONNRESET' ? 'reset' : 'error: ' + (e.code || e.message)));
  req.end();
});
(async () => { const out = []; for (let i = 0; i < Number(count); i++) out.push(await one()); process.stdout.write(JSON.stringify(out)); })();
`;

/** `count` GETs to host:port from inside `netns`: the echo's `field` line of each answer, or what went wrong. */
export function sampleInNetns(
  netns: string,
  host: string,
  port: number,
  count: number,
  field: 'node name' | 'pod IP' = 'node name',
): Promise<Answer[]> {
  return nodeScriptInNetns(netns, SCRIPT, [host, String(port), String(count), field], 'probe').then(
    (out) => JSON.parse(out) as Answer[],
  );
}
