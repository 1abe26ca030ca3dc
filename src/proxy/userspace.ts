// The node proxy's userspace mode: one socket per planned listener (src/core/proxy/listen.ts), each
// forwarding to the Service port's endpoints. TCP connections are spliced with stream pipes; UDP keeps
// one connected backend socket per client address:port. Behaves like kube-proxy's removed userspace
// proxier (pkg/proxy/userspace/proxysocket.go and roundrobin.go): round robin, ClientIP affinity, a
// connect retry over the other endpoints, and no listener at all while a port has no endpoints, so
// clients see "connection refused" as iptables mode's REJECT gives them.
// Costs (as kube-proxy's userspace mode found before its removal in 1.26): every byte crosses the kernel
// twice, and Node has no splice (libuv reads every byte into a buffer), so this is for edge nodes
// without root and for tests; two sockets per proxied connection, nothing per byte beyond pipe().
import dgram from 'node:dgram';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { bound, quietly, splice } from './userspace-sockets.js';
import {
  listenerEndpoints,
  listenerId,
  plannedListeners,
  sourceFilter,
  type Listener,
} from '../core/proxy/listen.js';
import type { ProxyState } from '../core/proxy/types.js';
import { errText } from '../api/err-text.js';
import type { Logger } from '../runtime/logger.js';

export type { Listener };

export interface UserspaceOptions {
  /** `--userspace-cidr`: the loopback range standing for cluster IPs; absent means the cluster IPs. */
  cidr?: string;
  nodePortAddresses: readonly string[];
  /** `--userspace-port-offset` (see core/proxy/listen.ts). */
  portOffset?: number;
  log: Logger;
  /** ms to wait for a backend connect before trying the next; default 2000 */
  connectTimeoutMs?: number;
  /** UDP: idle ms before a client's backend socket is closed; default 60000 */
  udpIdleMs?: number;
}

export interface ApplyResult {
  opened: number;
  closed: number;
  updated: number;
  failed: Array<{ listener: Listener; error: string }>;
  conflicts: number;
}

export interface UserspaceStats {
  listeners: number;
  activeConnections: number;
  connectionsTotal: number;
  connectFailures: number;
  udpSessions: number;
}

interface Backend {
  readonly id: string; // `ip/port`
  readonly ip: string;
  readonly port: number;
}

/** What one socket serves. apply() replaces `backends` with a new array, never mutating the old one,
 * so a connection that took a snapshot keeps a consistent list for its retries. */
interface Wanted {
  listener: Listener;
  backends: readonly Backend[];
  affinityMs: number | undefined; // ClientIP affinity window; undefined without affinity
  allows: (client: string | undefined) => boolean; // loadBalancerSourceRanges (sourceFilter)
}

interface Route extends Wanted {
  next: number; // round-robin cursor
  readonly affinity: Map<string, { backend: string; at: number }>; // client IP → backend last used, when
}

interface UdpSession {
  readonly backend: string;
  readonly socket: dgram.Socket;
  last: number;
  queue: Buffer[] | undefined; // datagrams held until the backend socket connects
}

type TcpPort = Route & { readonly proto: 'tcp'; readonly server: net.Server };
/** Sessions by `clientAddress|clientPort`. */
type UdpPort = Route & {
  readonly proto: 'udp';
  readonly socket: dgram.Socket;
  sessions: Map<string, UdpSession>;
};
type Port = TcpPort | UdpPort;

/** Datagrams held per UDP session while its backend socket connects. */
const MAX_QUEUED = 64;
const noop = (): void => {};

export class UserspaceProxy {
  private readonly ports = new Map<string, Port>();
  /** Every open client and backend socket, so close() can end them. */
  private readonly sockets = new Set<net.Socket>();
  private readonly connectTimeoutMs: number;
  private readonly udpIdleMs: number;
  private queue: Promise<unknown> = Promise.resolve();
  private problems = new Set<string>();
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private closing: Promise<void> | undefined;
  private active = 0;
  private connectionsTotal = 0;
  private connectFailures = 0;

  constructor(private readonly o: UserspaceOptions) {
    this.connectTimeoutMs = o.connectTimeoutMs ?? 2000;
    this.udpIdleMs = o.udpIdleMs ?? 60_000;
  }

  /** Makes the listeners and backends match `state`. Calls run one at a time, in call order. */
  apply(state: ProxyState): Promise<ApplyResult> {
    const run = this.queue.then(() => this.sync(state));
    this.queue = run.then(noop, noop);
    return run;
  }

  /** Where a service port is listening (for the demo and tests). */
  addresses(key: string): Listener[] {
    return [...this.ports.values()].filter((p) => p.listener.key === key).map((p) => p.listener);
  }

  stats(): UserspaceStats {
    let udpSessions = 0;
    for (const p of this.ports.values()) if (p.proto === 'udp') udpSessions += p.sessions.size;
    return {
      listeners: this.ports.size,
      activeConnections: this.active,
      connectionsTotal: this.connectionsTotal,
      connectFailures: this.connectFailures,
      udpSessions,
    };
  }

  /** Closes every listener and every proxied connection; resolves when their handles are closed. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.queue;
      if (this.sweeper !== undefined) clearInterval(this.sweeper);
      const waits: Array<Promise<void>> = [];
      for (const [id, p] of this.ports) {
        if (p.proto === 'tcp') waits.push(new Promise((resolve) => p.server.close(() => resolve())));
        else waits.push(this.closePort(id, p));
      }
      this.ports.clear();
      for (const s of this.sockets) {
        waits.push(new Promise((resolve) => s.once('close', () => resolve())));
        s.destroy();
      }
      await Promise.all(waits);
    })();
    return this.closing;
  }

  private async sync(state: ProxyState): Promise<ApplyResult> {
    if (this.closing !== undefined) throw new Error('UserspaceProxy is closed');
    const { listeners, conflicts } = plannedListeners(state, this.o);
    const problems = new Set<string>();
    const report = (msg: string, f: Record<string, unknown>): void => {
      const id = `${msg} ${JSON.stringify(f)}`;
      problems.add(id);
      if (!this.problems.has(id)) this.o.log.warn(msg, f);
    };
    for (const c of conflicts) {
      report('userspace proxy: listen address taken by another service port', {
        key: c.listener.key,
        listener: listenerId(c.listener),
        with: c.with,
      });
    }
    const wanted = new Map<string, Wanted>();
    for (const l of listeners) {
      const sp = state.get(l.key);
      if (sp === undefined) continue;
      if (l.protocol === 'SCTP') {
        report('userspace proxy: SCTP is not supported', { key: l.key });
        continue;
      }
      const backends = listenerEndpoints(sp, l.kind).map((e) => ({ id: `${e.ip}/${e.port}`, ...e }));
      // No endpoints: no listener, so clients get "connection refused" rather than a hang.
      if (backends.length === 0) continue;
      const t = sp.affinityTimeoutSeconds;
      const affinityMs = t !== undefined && t > 0 ? t * 1000 : undefined;
      wanted.set(listenerId(l), { listener: l, backends, affinityMs, allows: sourceFilter(l) });
    }

    let closed = 0;
    let updated = 0;
    const unbinding: Array<Promise<void>> = [];
    for (const [id, p] of this.ports) {
      const w = wanted.get(id);
      if (w === undefined) {
        unbinding.push(this.closePort(id, p));
        closed++;
      } else if (this.update(p, w)) {
        updated++;
      }
    }
    await Promise.all(unbinding);

    const failed: ApplyResult['failed'] = [];
    const opening = [...wanted].filter(([id]) => !this.ports.has(id));
    await Promise.all(
      opening.map(async ([id, w]) => {
        try {
          this.ports.set(id, await this.open(w));
        } catch (e) {
          let error = errText(e);
          if ((e as NodeJS.ErrnoException).code === 'EACCES' && w.listener.port < 1024)
            error += ' (ports below 1024 need root or CAP_NET_BIND_SERVICE: see --userspace-port-offset)';
          failed.push({ listener: w.listener, error });
          report('userspace proxy: cannot listen', { key: w.listener.key, listener: id, error });
        }
      }),
    );
    this.problems = problems;
    const opened = opening.length - failed.length;
    if (opened > 0 || closed > 0) this.o.log.info('userspace proxy: listeners changed', { opened, closed });
    if (this.ports.size > 0 && this.sweeper === undefined) {
      const every = Math.min(5000, Math.max(25, Math.floor(this.udpIdleMs / 4)));
      this.sweeper = setInterval(() => this.sweep(), every);
      this.sweeper.unref();
    }
    return { opened, closed, updated, failed, conflicts: conflicts.length };
  }

  /** Swaps an open port's backends in place; true when anything changed. */
  private update(p: Port, w: Wanted): boolean {
    const same =
      p.listener.key === w.listener.key &&
      p.listener.kind === w.listener.kind &&
      p.affinityMs === w.affinityMs &&
      String(p.listener.sourceRanges) === String(w.listener.sourceRanges) &&
      p.backends.length === w.backends.length &&
      p.backends.every((b, i) => b.id === w.backends[i]?.id);
    if (same) return false;
    const keep = new Set(w.backends.map((b) => b.id));
    p.listener = w.listener;
    p.backends = w.backends;
    p.affinityMs = w.affinityMs;
    p.allows = w.allows;
    if (w.affinityMs === undefined) p.affinity.clear();
    for (const [ip, a] of p.affinity) if (!keep.has(a.backend)) p.affinity.delete(ip);
    // TCP connections to a removed endpoint drain on their own; UDP has no end to wait for.
    if (p.proto === 'udp') {
      for (const [k, s] of p.sessions) if (!keep.has(s.backend)) this.endSession(p, k, s);
    }
    return true;
  }

  private async open(w: Wanted): Promise<Port> {
    const { address, port } = w.listener;
    const route = { ...w, next: 0, affinity: new Map() };
    const logError = (p: Port) => (e: unknown) =>
      this.o.log.error('userspace proxy: listener error', {
        ...{ key: p.listener.key, listener: listenerId(p.listener) },
        error: e instanceof Error ? e.message : e,
      });
    if (w.listener.protocol === 'UDP') {
      const socket = dgram.createSocket(net.isIPv6(address) ? 'udp6' : 'udp4');
      const p: UdpPort = { ...route, proto: 'udp', socket, sessions: new Map() };
      socket.on('message', (msg, from) => this.onDatagram(p, msg, from));
      await bound(socket, (ok) => socket.bind({ address, port, exclusive: true }, ok)).catch((e: unknown) => {
        socket.close();
        throw e;
      });
      socket.on('error', logError(p));
      return p;
    }
    const server = net.createServer({ allowHalfOpen: true, pauseOnConnect: true, noDelay: true });
    const p: TcpPort = { ...route, proto: 'tcp', server };
    server.on('connection', (c) => this.onConnection(p, c));
    await bound(server, (ok) => server.listen({ host: address, port }, ok));
    server.on('error', logError(p));
    return p;
  }

  /** Stops taking new traffic on a port. TCP connections drain; UDP sessions end now. */
  private closePort(id: string, p: Port): Promise<void> {
    this.ports.delete(id);
    if (p.proto === 'tcp') {
      // Closing the listening handle frees the address at once; the server's own 'close' waits for
      // its connections, which are left to finish.
      p.server.close();
      return Promise.resolve();
    }
    for (const [k, s] of p.sessions) this.endSession(p, k, s);
    return new Promise((resolve) => p.socket.close(() => resolve()));
  }

  /** The backend to try first: the client's sticky one when still listed and fresh, else round robin. */
  private pick(r: Route, backends: readonly Backend[], client: string | undefined, now: number): number {
    if (r.affinityMs !== undefined && client !== undefined) {
      const a = r.affinity.get(client);
      if (a !== undefined && now - a.at <= r.affinityMs) {
        const i = backends.findIndex((b) => b.id === a.backend);
        if (i >= 0) return i;
      }
    }
    const i = r.next % backends.length;
    r.next = (i + 1) % backends.length;
    return i;
  }

  private stick(r: Route, client: string | undefined, b: Backend): void {
    if (r.affinityMs !== undefined && client !== undefined) {
      r.affinity.set(client, { backend: b.id, at: performance.now() });
    }
  }

  private onConnection(p: TcpPort, client: net.Socket): void {
    // Outside the load-balancer source ranges: iptables mode drops the SYN; a listener has already
    // accepted, so the closest it can do is a reset.
    if (!p.allows(client.remoteAddress)) {
      client.on('error', noop);
      client.resetAndDestroy();
      return;
    }
    this.connectionsTotal++;
    this.active++;
    this.sockets.add(client);
    let pending: net.Socket | undefined;
    client.on('error', noop); // 'close' follows, with hadError
    client.once('close', () => {
      this.active--;
      this.sockets.delete(client);
      pending?.destroy();
    });
    const backends = p.backends; // never empty: a port without endpoints is closed
    const from = client.remoteAddress;
    const start = this.pick(p, backends, from, performance.now());
    let tries = 0;
    const attempt = (): void => {
      if (client.destroyed) return;
      const b = backends[(start + tries) % backends.length];
      if (tries++ === backends.length || b === undefined) {
        // Every endpoint failed: a reset tells the client at once.
        client.resetAndDestroy();
        return;
      }
      const s = net.connect({
        host: b.ip,
        port: b.port,
        allowHalfOpen: true,
        noDelay: true,
        timeout: this.connectTimeoutMs,
      });
      pending = s;
      this.sockets.add(s);
      s.once('close', () => this.sockets.delete(s));
      let settled = false;
      const failed = (): void => {
        if (settled) return;
        settled = true;
        pending = undefined;
        s.destroy();
        this.connectFailures++;
        attempt();
      };
      s.on('error', failed);
      s.once('timeout', failed);
      s.once('connect', () => {
        settled = true;
        pending = undefined;
        s.off('error', failed);
        s.off('timeout', failed);
        s.on('error', noop);
        s.setTimeout(0);
        this.stick(p, from, b);
        splice(client, s);
      });
    };
    attempt();
  }

  private onDatagram(p: UdpPort, msg: Buffer, from: dgram.RemoteInfo): void {
    if (!p.allows(from.address)) return; // outside the source ranges: dropped, as in iptables mode
    const k = `${from.address}|${from.port}`;
    let s = p.sessions.get(k);
    if (s === undefined) {
      const backends = p.backends;
      const b = backends[this.pick(p, backends, from.address, performance.now())];
      if (b === undefined) return;
      this.stick(p, from.address, b);
      s = this.openSession(p, k, b, from);
    }
    s.last = performance.now();
    if (s.queue === undefined) quietly(() => s.socket.send(msg));
    else if (s.queue.length < MAX_QUEUED) s.queue.push(msg);
  }

  private openSession(p: UdpPort, k: string, b: Backend, from: dgram.RemoteInfo): UdpSession {
    const socket = dgram.createSocket(net.isIPv6(b.ip) ? 'udp6' : 'udp4');
    const s: UdpSession = { backend: b.id, socket, last: performance.now(), queue: [] };
    p.sessions.set(k, s);
    socket.on('message', (reply) => {
      s.last = performance.now();
      quietly(() => p.socket.send(reply, from.port, from.address));
    });
    socket.on('error', () => {
      // Typically ECONNREFUSED from an ICMP port-unreachable: forget the session and the client's
      // stickiness, so its next datagram picks again.
      this.connectFailures++;
      if (p.affinity.get(from.address)?.backend === b.id) p.affinity.delete(from.address);
      this.endSession(p, k, s);
    });
    socket.connect(b.port, b.ip, () => {
      const queued = s.queue ?? [];
      s.queue = undefined;
      for (const m of queued) quietly(() => socket.send(m));
    });
    return s;
  }

  private endSession(p: UdpPort, k: string, s: UdpSession): void {
    if (p.sessions.get(k) === s) p.sessions.delete(k);
    quietly(() => s.socket.close());
  }

  /** Ends idle UDP sessions and forgets expired affinity. */
  private sweep(): void {
    const now = performance.now();
    for (const p of this.ports.values()) {
      if (p.affinityMs !== undefined) {
        for (const [ip, a] of p.affinity) if (now - a.at > p.affinityMs) p.affinity.delete(ip);
      }
      if (p.proto === 'udp') {
        for (const [k, s] of p.sessions) if (now - s.last > this.udpIdleMs) this.endSession(p, k, s);
      }
    }
  }
}
