// HTTPS from inside a network namespace, for the suites whose servers listen there (a node's kubelet API
// on its InternalIP, a wrapper on the node's loopback): one GET, or a watch that keeps resuming from its
// last resourceVersion across server restarts, as an informer's reflector does. Each runs as a child Node
// process under `ip netns exec` (a socket cannot move between namespaces); credentials are file paths.
import { spawn, type ChildProcess } from 'node:child_process';
import { ipPath, nodeScriptInNetns } from '../../../src/demo/netns.js';

/** Files (and a token) a request authenticates and verifies its server with. */
export interface TlsFiles {
  /** The CA bundle the server's certificate must chain to. */
  readonly ca: string;
  /** A client certificate and its key. */
  readonly cert?: string;
  readonly key?: string;
  readonly token?: string;
}

const OPTIONS = `
const fs = require('node:fs');
const https = require('node:https');
const tls = JSON.parse(process.argv[2]);
const options = {
  ca: fs.readFileSync(tls.ca),
  ...(tls.cert ? { cert: fs.readFileSync(tls.cert), key: fs.readFileSync(tls.key) } : {}),
  headers: tls.token ? { Authorization: 'Bearer ' + tls.token } : {},
  agent: false,
};
`;

const GET = `${OPTIONS}
const req = https.get(process.argv[1], { ...options, timeout: 5000 }, (res) => {
  let body = '';
  res.setEncoding('utf8');
  res.on('data', (d) => (body += d));
  res.on('end', () => process.stdout.write(JSON.stringify({ status: res.statusCode, body })));
});
req.on('timeout', () => req.destroy(new Error('timeout')));
req.on('error', (e) => process.stdout.write(JSON.stringify({ status: 0, body: e.code || e.message })));
`;

export interface Got {
  /** The HTTP status; 0 when no answer came (the body then names the error: ECONNREFUSED, timeout...). */
  readonly status: number;
  readonly body: string;
}

/** One GET of `url` from inside `netns`. */
export async function getInNetns(netns: string, url: string, tls: TlsFiles): Promise<Got> {
  return JSON.parse(await nodeScriptInNetns(netns, GET, [url, JSON.stringify(tls)], `GET ${url}`)) as Got;
}

// A LIST, then watches from its resourceVersion; when a watch ends (the server stopped) it tries again
// every 200 ms from the last resourceVersion it saw; a 410 (as a status or an ERROR event) relists. One
// JSON line per event on stdout: the server's events as they came, and LIST (with its items), GONE and
// CONNECTED of its own, each with the time it arrived (`at`, epoch ms).
const WATCH = `${OPTIONS}
const base = process.argv[1];
const sep = base.includes('?') ? '&' : '?';
let rv = '';
const print = (e) => process.stdout.write(JSON.stringify({ ...e, at: Date.now() }) + '\\n');
const later = (f) => setTimeout(f, 200);
const list = () => {
  const req = https.get(base, options, (res) => {
    let body = '';
    res.setEncoding('utf8');
    res.on('data', (d) => (body += d));
    res.on('end', () => {
      if (res.statusCode !== 200) return later(list);
      const l = JSON.parse(body);
      rv = l.metadata.resourceVersion;
      print({ type: 'LIST', items: l.items, resourceVersion: rv });
      watch();
    });
  });
  req.on('error', () => later(list));
};
const watch = () => {
  const url = base + sep + 'watch=1&allowWatchBookmarks=true&resourceVersion=' + rv;
  const req = https.get(url, options, (res) => {
    if (res.statusCode === 410) { res.resume(); print({ type: 'GONE' }); return later(list); }
    if (res.statusCode !== 200) { res.resume(); return later(watch); }
    print({ type: 'CONNECTED', resourceVersion: rv });
    let buf = '';
    let gone = false;
    res.setEncoding('utf8');
    res.on('data', (d) => {
      buf += d;
      for (let i = buf.indexOf('\\n'); i >= 0; i = buf.indexOf('\\n')) {
        const line = buf.slice(0, i).trim();
        buf = buf.slice(i + 1);
        if (line === '') continue;
        const e = JSON.parse(line);
        if (e.type === 'ERROR') { if (e.object && e.object.code === 410) gone = true; print(e); continue; }
        rv = e.object.metadata.resourceVersion;
        print(e);
      }
    });
    res.on('close', () => { if (gone) { print({ type: 'GONE' }); later(list); } else later(watch); });
  });
  req.on('error', () => later(watch));
};
list();
`;

/** An event as the watch script printed it. */
export interface WatchLine {
  readonly type: string;
  /** When the watch client got it (epoch ms). */
  readonly at: number;
  readonly object?: { metadata: { name: string; namespace?: string; resourceVersion?: string } } & Record<
    string,
    unknown
  >;
  readonly items?: ReadonlyArray<Record<string, unknown>>;
}

export interface NetnsWatch {
  /** Every line so far, in order. */
  readonly lines: WatchLine[];
  readonly proc: ChildProcess;
  stop(): Promise<void>;
}

/** A LIST and resuming watch of `url` (a collection) from inside `netns`, until stop(). */
export function watchInNetns(netns: string, url: string, tls: TlsFiles): NetnsWatch {
  const proc = spawn(
    ipPath(),
    ['netns', 'exec', netns, process.execPath, '-e', WATCH, url, JSON.stringify(tls)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const lines: WatchLine[] = [];
  let buf = '';
  proc.stdout!.setEncoding('utf8');
  proc.stdout!.on('data', (d: string) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      lines.push(JSON.parse(buf.slice(0, i)) as WatchLine);
      buf = buf.slice(i + 1);
    }
  });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  return {
    lines,
    proc,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}
