// What the rest of a shared machine does while a benchmark measures: the cores every process busy on it
// used (/proc/stat), minus the benchmark's own processes, over a window.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { cpuSeconds } from './process.js';

/** Clock ticks per second of /proc/stat (USER_HZ; 100 on Linux). */
const TICKS = 100;

/** CPU seconds the whole machine has been busy (all CPUs: user, nice, system, irq, softirq, steal). */
export function machineBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return (user + nice + system + irq + softirq + steal) / TICKS;
}

/**
 * CPU seconds of this process and of every child it has reaped (with their reaped children in turn):
 * utime + stime + cutime + cstime of /proc/self/stat. A child that exits inside a window is counted there.
 */
const ownCpuSeconds = (): number => {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICKS;
};

/** CPU seconds of a process, 0 once it is gone (so a window over a process that exits still closes). */
const cpuOf = (pid: number): number => {
  try {
    return cpuSeconds(pid);
  } catch {
    return 0;
  }
};

export interface CoresUsed {
  seconds: number;
  /** Cores used by each named process of the benchmark. */
  by: Record<string, number>;
  /** This process (the orchestrator) and the children it reaped during the window. */
  bench: number;
  /** Everything else on the machine: busy time minus the above. */
  others: number;
  machine: number;
}

/** Starts a window; the returned function closes it and reports the cores used over it. */
export function coresWindow(pids: Record<string, number>): () => CoresUsed {
  const read = () => ({
    t: performance.now(),
    machine: machineBusySeconds(),
    bench: ownCpuSeconds(),
    by: Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuOf(pid)])),
  });
  const a = read();
  return () => {
    const b = read();
    const s = (b.t - a.t) / 1000;
    const by = Object.fromEntries(Object.keys(pids).map((k) => [k, (b.by[k]! - a.by[k]!) / s]));
    const bench = (b.bench - a.bench) / s;
    const machine = (b.machine - a.machine) / s;
    const ours = Object.values(by).reduce((x, y) => x + y, 0) + bench;
    return { seconds: s, by, bench, others: Math.max(0, machine - ours), machine };
  };
}
