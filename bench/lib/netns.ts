// Network namespaces a benchmark makes for itself: `svcp-bench-<random hex>[-tag]`, with lo up and nothing
// else, removed at the end (remove()) and, whatever happens, when the benchmark exits (lib/cluster.ts
// atExit): the processes still inside are SIGKILLed first, then the namespace is deleted, which takes its
// iptables rules with it. Only namespaces made here are ever touched: names are random, never matched by a
// pattern, so another benchmark's namespaces are safe.
import { execFileSync, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { ipPath } from '../../src/demo/netns.js';
import { atExit } from './cluster.js';

export interface BenchNetns {
  readonly name: string;
  /** `ip netns exec <name> argv...` without a shell; the process is the caller's. */
  exec(argv: readonly string[], o?: SpawnOptions): ChildProcess;
  /** Kills what still runs inside and deletes the namespace. Idempotent. */
  remove(): void;
}

const ip = (args: readonly string[]): string =>
  execFileSync(ipPath(), args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

const exists = (name: string): boolean =>
  ip(['netns', 'list'])
    .split('\n')
    .some((l) => l.trim().split(/\s+/)[0] === name);

/** SIGKILLs every process in the namespace (`ip netns pids`), then deletes it; throws if it is still listed. */
function removeNow(name: string): void {
  if (!exists(name)) return;
  for (let round = 0; round < 3; round++) {
    const pids = ip(['netns', 'pids', name])
      .split('\n')
      .map((l) => Number(l.trim()))
      .filter((pid) => Number.isInteger(pid) && pid > 0 && pid !== process.pid);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone already */
      }
    }
    execFileSync('sleep', ['0.1']);
  }
  ip(['netns', 'del', name]);
  if (exists(name)) throw new Error(`network namespace ${name} is still there after ip netns del`);
}

/** A new, empty namespace (lo up), removed when the benchmark exits if not before. */
export function createNetns(tag = ''): BenchNetns {
  const name = `svcp-bench-${randomBytes(4).toString('hex')}${tag === '' ? '' : `-${tag}`}`;
  ip(['netns', 'add', name]);
  let removed = false;
  const unregister = atExit(() => {
    if (!removed) removeNow(name);
  });
  try {
    ip(['-n', name, 'link', 'set', 'lo', 'up']);
  } catch (err) {
    removeNow(name);
    unregister();
    throw err;
  }
  return {
    name,
    exec: (argv, o = {}) => spawn(ipPath(), ['netns', 'exec', name, ...argv], o),
    remove: () => {
      if (removed) return;
      removeNow(name);
      removed = true;
      unregister();
    },
  };
}
