// A hook a benchmark preloads into a svcplane process (`--expose-gc --import GC_HOOK`, with
// SVCPLANE_BENCH_GC_OUT set): from its start it samples its RSS, V8 heap and external memory every 200 ms;
// on SIGUSR2 it runs three full GCs and writes its process.memoryUsage(), V8's heap spaces and the samples
// to SVCPLANE_BENCH_GC_OUT (and a heap snapshot beside it when SVCPLANE_BENCH_HEAP_SNAPSHOT is set).
import { readFileSync, rmSync } from 'node:fs';
import { sleep } from './process.js';

export const GC_HOOK =
  'data:text/javascript,import{writeFileSync}from"node:fs";' +
  'import{getHeapSpaceStatistics,writeHeapSnapshot}from"node:v8";' +
  'const t0=Date.now(),M=2**20,tl=[];setInterval(()=>{const m=process.memoryUsage();tl.push([(Date.now()-t0)/1e3,' +
  'Math.round(m.rss/M),Math.round(m.heapUsed/M),Math.round(m.heapTotal/M),' +
  'Math.round((m.external+m.arrayBuffers)/M)])},200).unref();' +
  'process.on("SIGUSR2",()=>{for(let i=0;i<3;i++)globalThis.gc();const f=process.env.SVCPLANE_BENCH_GC_OUT;' +
  'if(process.env.SVCPLANE_BENCH_HEAP_SNAPSHOT)writeHeapSnapshot(f+".heapsnapshot");writeFileSync(f,' +
  'JSON.stringify({...process.memoryUsage(),timeline:tl,spaces:getHeapSpaceStatistics().map(s=>[s.space_name,' +
  's.space_size,s.space_used_size])}))})';

/** What the hook writes. */
export interface GcReport {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** V8's heap spaces: name, committed bytes, used bytes. */
  spaces: Array<[string, number, number]>;
  /** Every 200 ms: seconds from the start, RSS, heap used, heap committed, external + array buffers (MiB). */
  timeline: Array<[number, number, number, number, number]>;
}

/** Signals the hooked process `pid` and waits for its report in `out` (up to a minute). */
export async function gcAndReport(pid: number, out: string, name: string): Promise<GcReport> {
  rmSync(out, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let t = 0; ; t++) {
    try {
      return JSON.parse(readFileSync(out, 'utf8')) as GcReport;
    } catch {
      if (t > 1200) throw new Error(`${name} never answered SIGUSR2 (the GC hook)`);
      await sleep(50);
    }
  }
}
