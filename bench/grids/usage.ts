// CPU of one thread and of the machine, and the CPU and memory readings taken per phase.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticksPerSec = 100;
try {
  ticksPerSec = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  /* Linux default */
}

/** CPU seconds of one thread (tid = pid: the main thread). */
export function threadCpuSeconds(pid: number, tid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / ticksPerSec;
}

/** CPU seconds the whole machine has been busy (all CPUs: user, nice, system, irq, softirq, steal). */
export function machineBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return (user + nice + system + irq + softirq + steal) / ticksPerSec;
}

export interface CpuReading {
  /** The controllers' CPU: the controller-manager process; in up, every thread but the main one. */
  controllersS: number;
  /** The API server's: its process; in up, the main thread. */
  apiserverS: number;
  totalS: number;
  /** The benchmark's own processes: this one and the watcher. */
  benchS: number;
  /** Every process on the machine (busy time of /proc/stat): how much else competed for the CPUs. */
  machineS: number;
}

export interface MemoryReading {
  /** The controller-manager's VmRSS and VmHWM (null in up: a thread's memory is its process's). */
  controllersRssMiB: number | null;
  controllersPeakMiB: number | null;
  /** The server process: the API server alone, or up (API server + controllers). */
  serverRssMiB: number;
  serverPeakMiB: number;
}
