// Latency distributions of the flips, and the CPU and memory samples for the timeline.
import { percentile } from '../run.js';
import { type Flip } from './watcher.js';

/** CPU and memory of the processes under test, sampled every second for the timeline. */
export interface Sample {
  t: number;
  cmCpuS?: number;
  cmRssMiB?: number;
  apiCpuS: number;
  apiRssMiB: number;
}

export interface LatencyFigures {
  flips: number;
  seen: number;
  lost: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export function latencyFigures(
  flips: Flip[],
  seen: Array<number | undefined>,
  timeoutMs: number,
): LatencyFigures {
  const lat: number[] = [];
  let lost = 0;
  flips.forEach((f, i) => {
    const t = seen[i];
    if (t === undefined || t - f.acceptedAt > timeoutMs) lost++;
    else lat.push(t - f.acceptedAt);
  });
  return {
    flips: flips.length,
    seen: lat.length,
    lost,
    p50Ms: lat.length === 0 ? NaN : percentile(lat, 50),
    p99Ms: lat.length === 0 ? NaN : percentile(lat, 99),
    maxMs: lat.length === 0 ? NaN : Math.max(...lat),
  };
}
