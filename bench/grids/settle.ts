// A wait until the controllers are quiet (under 0.05 cores for a few seconds).
import { performance } from 'node:perf_hooks';
import { sleep } from '../lib/process.js';
import { type Sizes } from './shape.js';
import { type CpuReading } from './usage.js';
import { type Subject } from './subjects.js';

export interface Settle {
  /** Until the first of the quiet samples (the whole wait when never quiet). */
  busyS: number;
  quiet: boolean;
  cpu: CpuReading;
}

export const cpuDelta = (a: CpuReading, b: CpuReading): CpuReading => ({
  controllersS: b.controllersS - a.controllersS,
  apiserverS: b.apiserverS - a.apiserverS,
  totalS: b.totalS - a.totalS,
  benchS: b.benchS - a.benchS,
  machineS: b.machineS - a.machineS,
});

/** Waits until the subject's controllers use under 0.05 cores for `quietSeconds`. */
export async function waitQuiet(s: Subject, z: Sizes): Promise<Settle> {
  const c0 = s.cpu();
  const t0 = performance.now();
  let quietMs = 0;
  let last = s.quietCpuS();
  while (performance.now() - t0 < z.settleMaxSeconds * 1000 && quietMs < z.quietSeconds * 1000) {
    const ts = performance.now();
    await sleep(z.quietSampleMs);
    s.alive();
    const now = s.quietCpuS();
    const dt = performance.now() - ts;
    quietMs = (now - last) * 1000 < 0.05 * dt ? quietMs + dt : 0;
    last = now;
  }
  const quiet = quietMs >= z.quietSeconds * 1000;
  const waited = (performance.now() - t0) / 1000;
  return { busyS: quiet ? Math.max(0, waited - quietMs / 1000) : waited, quiet, cpu: cpuDelta(c0, s.cpu()) };
}
