// A Kubernetes watch as a benchmark client sees it: newline-delimited JSON events, each stamped with the
// epoch time its bytes arrived (before it is parsed), on its own connection. Without a resourceVersion
// the server first sends the current state as ADDED events; when the stream ends (timeout) it resumes
// from the last resourceVersion seen, and after 410 Expired it starts over with the current state.
import https from 'node:https';
import { epochMs, type Conn } from './http.js';

export interface WatchEventLine {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  readonly object: {
    metadata?: { name?: string; namespace?: string; resourceVersion?: string };
    code?: number;
    [k: string]: unknown;
  };
}

export interface WatchStats {
  /** Watch requests made (the first one and every resume). */
  connects: number;
  /** Of those, restarts from the current state after 410 Expired or an error. */
  relists: number;
  events: number;
  bytes: number;
}

export class Watch {
  readonly stats: WatchStats = { connects: 0, relists: 0, events: 0, bytes: 0 };
  private rv: string | undefined;
  private req: ReturnType<typeof https.request> | undefined;
  private stopped = false;
  private readonly agent: https.Agent;
  private firstConnected: Promise<void>;
  private markConnected!: () => void;

  /**
   * `path` is the collection path (e.g. /apis/discovery.k8s.io/v1/endpointslices); `query` extra query
   * parameters (labelSelector …). `onEvent` gets every event but BOOKMARK, with its arrival time.
   */
  constructor(
    private readonly conn: Conn,
    private readonly path: string,
    private readonly onEvent: (ev: WatchEventLine, t: number) => void,
    private readonly query: Record<string, string> = {},
    private readonly onError: (err: Error) => void = () => {},
    /** Start after this resourceVersion (only changes) instead of with the current state. */
    resourceVersion?: string,
  ) {
    this.rv = resourceVersion;
    this.agent = new https.Agent({ keepAlive: false, ca: conn.ca });
    this.firstConnected = new Promise((r) => (this.markConnected = r));
    this.connect();
  }

  /** Resolves once the first watch response's headers arrived (the server is sending events). */
  connected(): Promise<void> {
    return this.firstConnected;
  }

  stop(): void {
    this.stopped = true;
    this.req?.destroy();
    this.agent.destroy();
  }

  private connect(): void {
    if (this.stopped) return;
    this.stats.connects++;
    let done = false;
    const finish = (err: Error | undefined, relist: boolean): void => {
      if (done) return;
      done = true;
      this.retry(err, relist);
    };
    const q = new URLSearchParams({
      watch: '1',
      allowWatchBookmarks: 'true',
      timeoutSeconds: '3600',
      ...this.query,
      ...(this.rv === undefined ? {} : { resourceVersion: this.rv }),
    });
    const req = https.request(
      {
        host: this.conn.host,
        port: this.conn.port,
        method: 'GET',
        path: `${this.path}?${q.toString()}`,
        agent: this.agent,
        headers: {
          Authorization: `Bearer ${this.conn.token}`,
          Accept: 'application/json',
          'User-Agent': 'svcplane-bench-watch/1.0',
        },
      },
      (res) => {
        if (res.statusCode !== 200) {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () =>
            finish(new Error(`watch ${this.path}: ${res.statusCode} ${body.slice(0, 300)}`), true),
          );
          return;
        }
        this.markConnected();
        let carry = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const t = epochMs();
          this.stats.bytes += chunk.length;
          const text = carry + chunk;
          let start = 0;
          for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
            const line = text.slice(start, nl);
            start = nl + 1;
            if (line.trim() !== '') this.line(line, t);
          }
          carry = text.slice(start);
        });
        res.on('error', () => {});
        res.on('close', () => finish(undefined, false));
      },
    );
    req.on('error', (err) => finish(err, false));
    req.end();
    this.req = req;
  }

  private line(line: string, t: number): void {
    let ev: WatchEventLine;
    try {
      ev = JSON.parse(line) as WatchEventLine;
    } catch (err) {
      this.onError(new Error(`watch ${this.path}: bad line ${line.slice(0, 200)}: ${String(err)}`));
      return;
    }
    if (ev.type === 'ERROR') {
      // 410 Expired (or another error): start over from the current state.
      this.rv = undefined;
      this.stats.relists++;
      this.onError(new Error(`watch ${this.path}: ERROR ${JSON.stringify(ev.object).slice(0, 300)}`));
      this.req?.destroy();
      return;
    }
    const rv = ev.object.metadata?.resourceVersion;
    if (rv !== undefined && rv !== '') this.rv = rv;
    if (ev.type === 'BOOKMARK') return;
    this.stats.events++;
    this.onEvent(ev, t);
  }

  private retry(err: Error | undefined, relist: boolean): void {
    if (this.stopped) return;
    if (err !== undefined) this.onError(err);
    if (relist) {
      this.rv = undefined;
      this.stats.relists++;
    }
    this.req = undefined;
    setTimeout(() => this.connect(), err === undefined ? 0 : 200);
  }
}
