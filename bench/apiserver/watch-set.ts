// Raw watch streams in a client worker: each event's write → delivery latency from the timestamp annotation
// set before its POST, and the events each watcher lost or got twice.
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { performance } from 'node:perf_hooks';
import { epochMs, type Conn } from '../lib/http.js';
import { SENT } from './shape.js';
import { type WatchOpenReply, type WatchFinishReply } from './worker.js';

interface Watch {
  sock: TLSSocket | undefined;
  counts: Uint8Array;
  distinct: number;
  /** The start of an event line whose end has not arrived yet. */
  pending: Buffer;
  ended: boolean;
  /** Response head bytes until the blank line; undefined once the body started. */
  head: Buffer | undefined;
  /** Chunked transfer decoding: data bytes left in the current chunk, CRLF bytes to skip, a partial size line. */
  left: number;
  crlf: number;
  sizeLine: string;
}

const EMPTY = Buffer.alloc(0);
const TYPE_MARK = Buffer.from('{"type":"');
const META_MARK = Buffer.from('"metadata":{');
const NAME_MARK = Buffer.from('"name":"');
const SENT_MARK = Buffer.from(`"${SENT}":"`);

export class WatchSet {
  readonly watches: Watch[] = [];
  latencies = new Float64Array(1 << 16);
  n = 0;
  events = 0;
  unexpected = 0;
  errorEvents = 0;
  cpu0 = process.cpuUsage();

  constructor(
    private readonly conn: Conn,
    private readonly prefix: string,
    private readonly maxWrites: number,
  ) {}

  async open(p: string, count: number): Promise<WatchOpenReply> {
    let failed = 0;
    let firstError: string | undefined;
    let next = 0;
    await Promise.all(
      Array.from({ length: 25 }, async () => {
        for (let k = next++; k < count; k = next++) {
          try {
            await this.openOne(p);
          } catch (err) {
            failed++;
            firstError ??= String(err);
          }
        }
      }),
    );
    this.cpu0 = process.cpuUsage();
    return { opened: this.watches.length, failed, ...(firstError === undefined ? {} : { firstError }) };
  }

  /**
   * One watch on its own TLS connection, spoken as raw HTTP/1.1 with a minimal chunked decoder: the
   * watch clients share the CPUs with the server, so they skip node:http's per-event response stream.
   */
  private openOne(p: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const w: Watch = {
        sock: undefined,
        counts: new Uint8Array(this.maxWrites),
        distinct: 0,
        pending: EMPTY,
        ended: false,
        head: EMPTY,
        left: 0,
        crlf: 0,
        sizeLine: '',
      };
      const timer = setTimeout(() => {
        w.sock?.destroy();
        reject(new Error('watch: no response head within 30 s'));
      }, 30_000);
      const sock = tlsConnect({ host: this.conn.host, port: this.conn.port, ca: this.conn.ca });
      w.sock = sock;
      sock.on('secureConnect', () => {
        sock.write(
          `GET ${p} HTTP/1.1\r\nHost: ${this.conn.host}:${this.conn.port}\r\n` +
            `Authorization: Bearer ${this.conn.token}\r\nAccept: application/json\r\n` +
            'User-Agent: svcplane-bench/1.0\r\n\r\n',
        );
      });
      sock.on('data', (chunk: Buffer) => {
        if (w.head === undefined) {
          this.receive(w, chunk);
          return;
        }
        const head = Buffer.concat([w.head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) {
          w.head = head;
          return;
        }
        clearTimeout(timer);
        const text = head.toString('latin1', 0, end);
        w.head = undefined;
        if (!/^HTTP\/1\.1 200 /.test(text)) {
          sock.destroy();
          reject(new Error(`watch: ${text.split('\r\n')[0]}`));
          return;
        }
        if (!/^transfer-encoding:\s*chunked\s*$/im.test(text)) w.left = Infinity; // delimited by close
        this.watches.push(w);
        resolve();
        if (head.length > end + 4) this.receive(w, head.subarray(end + 4));
      });
      sock.on('close', () => (w.ended = true));
      sock.on('error', (err) => {
        w.ended = true;
        clearTimeout(timer);
        reject(err);
      });
    });
  }

  /** Body bytes: undoes the chunked framing, then splits event lines. */
  private receive(w: Watch, buf: Buffer): void {
    const now = epochMs();
    let i = 0;
    while (i < buf.length) {
      if (w.left > 0) {
        const n = Math.min(w.left, buf.length - i);
        this.lines(w, buf.subarray(i, i + n), now);
        i += n;
        w.left -= n;
        if (w.left === 0) w.crlf = 2;
      } else if (w.crlf > 0) {
        i++;
        w.crlf--;
      } else {
        const nl = buf.indexOf(10, i);
        if (nl < 0) {
          w.sizeLine += buf.toString('latin1', i);
          return;
        }
        const size = parseInt(w.sizeLine + buf.toString('latin1', i, nl), 16);
        w.sizeLine = '';
        i = nl + 1;
        if (!(size > 0)) {
          w.ended = true; // the last chunk: the server ended the watch
          return;
        }
        w.left = size;
      }
    }
  }

  private lines(w: Watch, data: Buffer, now: number): void {
    const buf = w.pending.length > 0 ? Buffer.concat([w.pending, data]) : data;
    let start = 0;
    for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10, start)) {
      this.line(w, buf, start, nl, now);
      start = nl + 1;
    }
    w.pending = start < buf.length ? Buffer.from(buf.subarray(start)) : EMPTY;
  }

  /**
   * Reads the type, the name and the send stamp of one event line without decoding or parsing it, so
   * the clients (which share the CPUs with the server) stay cheap.
   */
  private line(w: Watch, buf: Buffer, from: number, to: number, now: number): void {
    // Every line is {"type":"<TYPE>","object":{...}}.
    if (buf.indexOf(TYPE_MARK, from) !== from) {
      this.unexpected++;
      return;
    }
    const t = buf[from + TYPE_MARK.length];
    if (t === 0x42 /* BOOKMARK */) return;
    if (t === 0x45 /* ERROR */) {
      this.errorEvents++;
      return;
    }
    // Each create must reach each watcher once, as ADDED; a controller's later write to a pod (none is
    // expected, see podBody) is not a create measured here.
    if (t !== 0x41 /* ADDED */) return;
    this.events++;
    const meta = buf.indexOf(META_MARK, from);
    const nameAt = buf.indexOf(NAME_MARK, meta) + NAME_MARK.length;
    const name = buf.toString('latin1', nameAt, buf.indexOf(0x22, nameAt));
    const sentAt = buf.indexOf(SENT_MARK, from) + SENT_MARK.length;
    const sent = Number(buf.toString('latin1', sentAt, buf.indexOf(0x22, sentAt)));
    const i = name.startsWith(this.prefix) ? Number(name.slice(this.prefix.length)) : NaN;
    if (
      meta < 0 ||
      meta > to ||
      sentAt < SENT_MARK.length ||
      sentAt > to ||
      !Number.isInteger(i) ||
      i < 0 ||
      i >= this.maxWrites ||
      !Number.isFinite(sent)
    ) {
      this.unexpected++;
      return;
    }
    if (w.counts[i]! === 0) w.distinct++;
    if (w.counts[i]! < 255) w.counts[i]!++;
    if (this.n === this.latencies.length) {
      const grown = new Float64Array(this.latencies.length * 2);
      grown.set(this.latencies);
      this.latencies = grown;
    }
    this.latencies[this.n++] = now - sent;
  }

  async finish(ok: number[], graceMs: number): Promise<WatchFinishReply> {
    const t0 = performance.now();
    const done = (): boolean => this.watches.every((w) => w.distinct >= ok.length || w.ended);
    while (!done() && performance.now() - t0 < graceMs) await new Promise((r) => setTimeout(r, 20));
    const waitedMs = performance.now() - t0;
    const cpu = process.cpuUsage(this.cpu0);
    let lost = 0;
    let duplicates = 0;
    let complete = 0;
    let endedEarly = 0;
    const okSet = new Uint8Array(this.maxWrites);
    for (const i of ok) okSet[i] = 1;
    for (const w of this.watches) {
      if (w.ended) endedEarly++;
      let missing = 0;
      for (const i of ok) {
        const c = w.counts[i]!;
        if (c === 0) missing++;
        else if (c > 1) duplicates += c - 1;
      }
      for (let i = 0; i < this.maxWrites; i++) if (okSet[i] === 0 && w.counts[i]! > 0) this.unexpected++;
      lost += missing;
      if (missing === 0) complete++;
      w.sock?.destroy();
    }
    return {
      latencies: this.latencies.slice(0, this.n),
      events: this.events,
      lost,
      duplicates,
      unexpected: this.unexpected,
      errorEvents: this.errorEvents,
      endedEarly,
      complete,
      watchers: this.watches.length,
      waitedMs,
      clientCpuMs: (cpu.user + cpu.system) / 1000,
    };
  }
}
