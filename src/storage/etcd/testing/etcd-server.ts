// Starts a real, throwaway etcd for tests and benchmarks: loopback only, free ports, a temporary data
// directory, stopped (and its directory removed) afterwards. The binary comes from $ETCD_BIN, else
// scripts/ensure-deps.sh finds it or installs Debian's etcd-server (as root), or fails clearly.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface EtcdServer {
  readonly endpoint: string;
  readonly dataDir: string;
  /**
   * Freezes the process (SIGSTOP): it keeps its sockets open but answers nothing. Resolves once the
   * kernel reports it stopped, so no request can still be answered after this.
   */
  pause(): Promise<void>;
  resume(): void;
  stop(): Promise<void>;
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

/**
 * The path of an external program the tests use, from its environment variable when `npm test` (or a
 * caller) set it, else from scripts/ensure-deps.sh, which installs the Debian package that ships it (as
 * root) or fails with one line naming the package.
 */
function ensureDep(program: string, variable: string): string {
  const fromEnv = process.env[variable];
  if (fromEnv && existsSync(fromEnv)) return fromEnv;
  const r = spawnSync('bash', [path.join(repoRoot, 'scripts/ensure-deps.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, SVCPLANE_DEPS_ONLY: program },
  });
  const found = new RegExp(`^${variable}=(.+)$`, 'm').exec(r.stdout ?? '')?.[1];
  if (r.status !== 0 || found === undefined) {
    throw new Error(`${program} is required (scripts/ensure-deps.sh failed; see above)`);
  }
  process.env[variable] = found;
  return found;
}

export const findEtcd = (): string => ensureDep('etcd', 'ETCD_BIN');
export const findEtcdctl = (): string => ensureDep('etcdctl', 'ETCDCTL_BIN');

/** The state letter of /proc/<pid>/stat ('T' = stopped). */
function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function healthy(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1000) });
    const body = (await res.json()) as { health?: string };
    return body.health === 'true';
  } catch {
    return false;
  }
}

export async function startEtcd(opts: { extraArgs?: string[] } = {}): Promise<EtcdServer> {
  const bin = findEtcd();
  for (let attempt = 0; ; attempt++) {
    const [client, peer] = [await freePort(), await freePort()];
    const dataDir = mkdtempSync(path.join(tmpdir(), 'svcplane-etcd-'));
    const endpoint = `http://127.0.0.1:${client}`;
    const peerUrl = `http://127.0.0.1:${peer}`;
    const child: ChildProcess = spawn(
      bin,
      [
        '--name=svcplane-test',
        `--data-dir=${dataDir}`,
        `--listen-client-urls=${endpoint}`,
        `--advertise-client-urls=${endpoint}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=svcplane-test=${peerUrl}`,
        // Objects may be 1.5 MiB; etcd's default request limit is exactly that, leaving no room for the key.
        '--max-request-bytes=2097152',
        '--logger=zap',
        '--log-level=error',
        ...(opts.extraArgs ?? []),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
    let exited = false;
    child.once('exit', () => (exited = true));
    const deadline = Date.now() + 20_000;
    while (!exited && Date.now() < deadline && !(await healthy(endpoint))) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const stop = async (): Promise<void> => {
      if (!exited) {
        child.kill('SIGCONT');
        const done = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await done;
        clearTimeout(t);
      }
      rmSync(dataDir, { recursive: true, force: true });
    };
    if (!exited && (await healthy(endpoint))) {
      return {
        endpoint,
        dataDir,
        stop,
        pause: async () => {
          child.kill('SIGSTOP');
          const until = Date.now() + 5000;
          while (processState(child.pid!) !== 'T') {
            if (Date.now() > until) throw new Error(`etcd (pid ${child.pid}) did not stop`);
            await new Promise((r) => setTimeout(r, 5));
          }
        },
        resume: () => void child.kill('SIGCONT'),
      };
    }
    await stop();
    if (attempt >= 2) throw new Error(`etcd did not become healthy on ${endpoint}: ${stderr.trim()}`);
  }
}

export interface EtcdMember {
  readonly name: string;
  readonly endpoint: string;
  /** SIGKILL: its connections reset, its in-flight requests have an unknown outcome. */
  kill(): Promise<void>;
  /** Starts it again on its data directory; resolves once it is healthy (back in the cluster). */
  restart(): Promise<void>;
}

export interface EtcdCluster {
  readonly members: readonly EtcdMember[];
  /** The member that is the leader now (asked over etcd's JSON gateway). */
  leader(): Promise<EtcdMember>;
  stop(): Promise<void>;
}

/** A `size`-member etcd cluster on loopback, each member in its own temporary data directory. */
export async function startEtcdCluster(size = 3): Promise<EtcdCluster> {
  const bin = findEtcd();
  const ports = [];
  for (let i = 0; i < size; i++) ports.push([await freePort(), await freePort()] as const);
  const names = ports.map((_, i) => `m${i}`);
  const initialCluster = ports.map(([, peer], i) => `${names[i]}=http://127.0.0.1:${peer}`).join(',');
  const members = ports.map(([client, peer], i) => {
    const name = names[i]!;
    const dataDir = mkdtempSync(path.join(tmpdir(), 'svcplane-etcd-'));
    const endpoint = `http://127.0.0.1:${client}`;
    const peerUrl = `http://127.0.0.1:${peer}`;
    let child: ChildProcess | undefined;
    const spawnIt = (): void => {
      const c = spawn(
        bin,
        [
          `--name=${name}`,
          `--data-dir=${dataDir}`,
          `--listen-client-urls=${endpoint}`,
          `--advertise-client-urls=${endpoint}`,
          `--listen-peer-urls=${peerUrl}`,
          `--initial-advertise-peer-urls=${peerUrl}`,
          `--initial-cluster=${initialCluster}`,
          '--initial-cluster-state=new',
          '--max-request-bytes=2097152',
          '--logger=zap',
          '--log-level=error',
        ],
        { stdio: ['ignore', 'ignore', 'ignore'] },
      );
      child = c;
      c.once('exit', () => {
        if (child === c) child = undefined;
      });
    };
    const healthyWithin = async (ms: number): Promise<void> => {
      const deadline = Date.now() + ms;
      while (!(await healthy(endpoint))) {
        if (Date.now() > deadline)
          throw new Error(`etcd member ${name} did not become healthy on ${endpoint}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const kill = async (): Promise<void> => {
      const c = child;
      if (c === undefined) return;
      const done = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await done;
    };
    return {
      name,
      endpoint,
      dataDir,
      spawnIt,
      healthyWithin,
      kill,
      restart: async () => {
        spawnIt();
        await healthyWithin(20_000);
      },
      remove: async () => {
        await kill();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  });
  const stop = async (): Promise<void> => {
    await Promise.all(members.map((m) => m.remove()));
  };
  try {
    for (const m of members) m.spawnIt();
    await Promise.all(members.map((m) => m.healthyWithin(20_000)));
  } catch (err) {
    await stop();
    throw err;
  }
  const status = async (endpoint: string): Promise<{ header: { member_id: string }; leader: string }> => {
    const res = await fetch(`${endpoint}/v3/maintenance/status`, {
      method: 'POST',
      body: '{}',
      signal: AbortSignal.timeout(2000),
    });
    return (await res.json()) as { header: { member_id: string }; leader: string };
  };
  return {
    members,
    stop,
    leader: async () => {
      for (const m of members) {
        const s = await status(m.endpoint).catch(() => undefined);
        if (s !== undefined && s.leader === s.header.member_id) return m;
      }
      throw new Error('no etcd member is the leader');
    },
  };
}
