// CPU of the processes under test and of the rest of the machine, forced GCs, bytes on disk.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';
import vm from 'node:vm';
import { cpuSeconds } from '../lib/process.js';
import { machineBusySeconds } from '../lib/machine.js';

const ownCpuSeconds = (): number => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1e6;
};

/**
 * Cores used over a window: by the processes under test, by this benchmark's own, and by everything else
 * on the machine (/proc/stat busy time minus those), since the machine may be shared.
 */
export function cpuWindow(pids: { wrapper: number; up: number }, extra: () => number = () => 0) {
  const read = () => ({
    t: performance.now(),
    machine: machineBusySeconds(),
    wrapper: cpuSeconds(pids.wrapper),
    up: cpuSeconds(pids.up),
    bench: ownCpuSeconds() + extra(),
  });
  const a = read();
  return () => {
    const b = read();
    const s = (b.t - a.t) / 1000;
    const wrapper = (b.wrapper - a.wrapper) / s;
    const up = (b.up - a.up) / s;
    const bench = (b.bench - a.bench) / s;
    const machine = (b.machine - a.machine) / s;
    return { seconds: s, wrapper, up, bench, others: Math.max(0, machine - wrapper - up - bench), machine };
  };
}

/** A full, forced GC in this process (so the model's garbage is not collected while timing a relabel). */
export function gcFunction(): () => void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === 'function') return g;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

export function dirBytes(dir: string): number {
  let n = 0;
  for (const f of readdirSync(dir)) {
    const s = statSync(path.join(dir, f));
    n += s.isDirectory() ? dirBytes(path.join(dir, f)) : s.size;
  }
  return n;
}
