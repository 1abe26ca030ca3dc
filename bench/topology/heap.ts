// Heap figures after forced full GCs.
import v8 from 'node:v8';
import vm from 'node:vm';

/** A full, forced GC: --expose-gc's gc() if the process has it, else turned on at run time. */
export function gcFunction(): { gc: () => void; how: string } {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === 'function') return { gc: g, how: '--expose-gc' };
  v8.setFlagsFromString('--expose-gc');
  return { gc: vm.runInNewContext('gc') as () => void, how: "v8.setFlagsFromString('--expose-gc')" };
}

export function settledHeap(gc: () => void): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}
