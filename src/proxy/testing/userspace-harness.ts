// Test harness of the userspace proxy: real sockets, loopback only. Backends on 127.77.200.x, listeners on
// 127.77.0.x (the CIDR mapping of 10.96.0.x), one fresh listen address per service so tests never share a
// socket. A test file calls runCleanups() after each test.
import dgram from 'node:dgram';
import { once } from 'node:events';
import net from 'node:net';
import type { ProxyState, ServicePortState } from '../../core/proxy/types.js';
import type { Logger } from '../../runtime/logger.js';
import { UserspaceProxy } from '../userspace.js';

export const CIDR = '127.77.0.0/16';
export const BACKEND_IP = '127.77.200.1';
let host = 1;
/** A number no other service of this process has had (the last byte of its listen address). */
export const nextHost = (): number => host++;
export const cleanups: Array<() => Promise<void>> = [];
/** Closes what the last test opened, newest first. */
export async function runCleanups(): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c();
}

export interface Backend {
  readonly name: string;
  readonly ip: string;
  readonly port: number;
}

/** TCP backend: answers every chunk with `name:chunk` and ends when the client does. */
export async function tcpBackend(name: string): Promise<Backend> {
  const open = new Set<net.Socket>();
  const server = net.createServer({ allowHalfOpen: true }, (s) => {
    open.add(s);
    s.on('close', () => open.delete(s));
    s.on('error', () => {});
    s.on('data', (d) => s.write(`${name}:${String(d)}`));
    s.on('end', () => s.end());
  });
  server.listen({ host: BACKEND_IP, port: 0 });
  await once(server, 'listening');
  cleanups.push(async () => {
    for (const s of open) s.destroy();
    await new Promise((r) => server.close(r));
  });
  return { name, ip: BACKEND_IP, port: (server.address() as net.AddressInfo).port };
}

/** UDP backend: answers every datagram with `name:datagram`. */
export async function udpBackend(name: string): Promise<Backend> {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (m, from) => socket.send(`${name}:${String(m)}`, from.port, from.address));
  socket.bind({ address: BACKEND_IP, port: 0 });
  await once(socket, 'listening');
  cleanups.push(() => new Promise((r) => socket.close(() => r())));
  return { name, ip: BACKEND_IP, port: socket.address().port };
}

/** A port whose TCP and UDP sockets are both free on `address`; tries random high ports on EADDRINUSE. */
export async function freePort(address: string): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20000 + Math.floor(Math.random() * 40000);
    if (await isFree(address, port)) return port;
  }
  throw new Error(`no free port on ${address}`);
}

export async function isFree(address: string, port: number): Promise<boolean> {
  const tcp = net.createServer();
  const udp = dgram.createSocket('udp4');
  try {
    tcp.listen({ host: address, port });
    await once(tcp, 'listening');
    udp.bind({ address, port });
    await once(udp, 'listening');
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw e;
    return false;
  } finally {
    tcp.close();
    udp.close();
  }
}

export interface Svc {
  key: string;
  clusterIP: string;
  address: string;
  port: number;
  of(backends: readonly Backend[], o?: Partial<ServicePortState>): ProxyState;
}

/** A fresh service: its cluster IP, its listen address under CIDR and a free port there. */
export async function service(name: string, protocol: 'TCP' | 'UDP' = 'TCP'): Promise<Svc> {
  const n = nextHost();
  const address = `127.77.0.${n}`;
  const port = await freePort(address);
  const key = `default/${name}`;
  const clusterIP = `10.96.0.${n}`;
  const of = (backends: readonly Backend[], o: Partial<ServicePortState> = {}): ProxyState => {
    const eps = backends.map((b) => ({ ip: b.ip, port: b.port, local: true, ready: true }));
    const sp: ServicePortState = {
      ...{ key, namespace: 'default', name, portName: '', protocol, clusterIPs: [clusterIP], port },
      ...{ externalIPs: [], loadBalancerIPs: [], internal: eps, external: eps },
      ...{ externalLocal: false, internalLocal: false },
      ...o,
    };
    return new Map([[key, sp]]);
  };
  return { key, clusterIP, address, port, of };
}

export function proxy(o: { udpIdleMs?: number; nodePortAddresses?: string[] } = {}): {
  p: UserspaceProxy;
  logs: string[];
} {
  const logs: string[] = [];
  const rec = (level: string) => (msg: string) => void logs.push(`${level} ${msg}`);
  const log: Logger = { info: rec('info'), warn: rec('warn'), error: rec('error') };
  const p = new UserspaceProxy({ cidr: CIDR, nodePortAddresses: [], log, ...o });
  cleanups.push(() => p.close());
  return { p, logs };
}

/** One request on a new connection: sends `msg`, half-closes, returns everything the server sent. */
export function ask(s: Svc, msg = 'x', localAddress?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const local = localAddress === undefined ? {} : { localAddress };
    const c = net.connect({ host: s.address, port: s.port, ...local });
    let out = '';
    c.setEncoding('utf8');
    c.on('data', (d) => (out += d));
    c.on('end', () => resolve(out));
    c.on('error', reject);
    c.on('connect', () => c.end(msg));
  });
}

/** A long-lived connection: say() sends one message and resolves with the reply. */
export async function conversation(s: Svc): Promise<{ say(m: string): Promise<string>; socket: net.Socket }> {
  const socket = net.connect({ host: s.address, port: s.port });
  socket.setEncoding('utf8');
  await once(socket, 'connect');
  cleanups.push(async () => void socket.destroy());
  const say = (m: string): Promise<string> =>
    new Promise((resolve) => {
      socket.once('data', (d: string) => resolve(d));
      socket.write(m);
    });
  return { say, socket };
}

/** A UDP client bound on loopback (never the wildcard address). */
export async function udpClient(): Promise<dgram.Socket> {
  const c = dgram.createSocket('udp4');
  c.bind({ address: '127.77.100.9', port: 0 });
  await once(c, 'listening');
  cleanups.push(() => new Promise((r) => c.close(() => r())));
  return c;
}

/** Sends one datagram and resolves with the reply; a one-off client unless `client` is given. */
export async function udpAsk(s: Svc, msg: string, client?: dgram.Socket): Promise<string> {
  const c = client ?? (await udpClient());
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no UDP reply')), 2000);
    c.once('message', (m) => {
      clearTimeout(timer);
      resolve(String(m));
    });
    c.send(msg, s.port, s.address);
  });
}

export const tally = (answers: string[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const a of answers) {
    const name = a.split(':')[0] ?? '';
    out[name] = (out[name] ?? 0) + 1;
  }
  return out;
};

export async function sequential<T>(n: number, f: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(await f());
  return out;
}
