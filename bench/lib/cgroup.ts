// A memory cgroup for one benchmarked process, as a Kubernetes memory limit puts a container in one: what
// the kernel charges it (anonymous memory, and the page cache it caused), and whether the limit killed it.
// cgroup v2 (memory.max) or v1 (memory.limit_in_bytes), whichever this machine mounts and lets us write.
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseMilliValue } from '../../src/core/endpointslices/quantity.js';

const MiB = 2 ** 20;

export interface CgroupCharge {
  /** What the limit is compared against: anonymous memory plus page cache (reclaimable first). */
  readonly usageMiB: number;
  /** Anonymous memory: heaps, which only the OOM killer takes back. */
  readonly anonMiB: number;
  /** Page cache charged to it (its files' pages: SQLite's, and code first read by it). */
  readonly fileMiB: number;
  readonly peakMiB: number;
  /** Times the OOM killer ran in it. */
  readonly oomKills: number;
}

export class MemoryCgroup {
  private constructor(
    readonly dir: string,
    private readonly v2: boolean,
    readonly limitBytes: number | undefined,
  ) {}

  /** A new cgroup under this machine's memory hierarchy, or the reason there is none. */
  static create(name: string, limitBytes?: number): MemoryCgroup | string {
    const v2 =
      existsSync('/sys/fs/cgroup/cgroup.controllers') &&
      readFileSync('/sys/fs/cgroup/cgroup.controllers', 'utf8').split(/\s+/).includes('memory');
    const base = v2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/memory';
    if (!existsSync(base)) return 'no memory cgroup hierarchy is mounted';
    const dir = path.join(base, name);
    try {
      mkdirSync(dir);
      if (limitBytes !== undefined)
        writeFileSync(path.join(dir, v2 ? 'memory.max' : 'memory.limit_in_bytes'), String(limitBytes));
    } catch (err) {
      return `cannot make a memory cgroup at ${dir}: ${(err as Error).message}`;
    }
    return new MemoryCgroup(dir, v2, limitBytes);
  }

  /** The argv that runs `argv` inside this cgroup: a shell joins it, then execs in place (same pid). */
  wrap(argv: readonly string[]): string[] {
    return [
      '/bin/sh',
      '-c',
      `echo $$ > '${path.join(this.dir, 'cgroup.procs')}' && exec "$@"`,
      'sh',
      ...argv,
    ];
  }

  charge(): CgroupCharge {
    const read = (f: string): string => readFileSync(path.join(this.dir, f), 'utf8');
    const stat = new Map(
      read('memory.stat')
        .split('\n')
        .map((l) => l.split(' '))
        .map(([k, v]) => [k!, Number(v)] as const),
    );
    const events = new Map(
      read(this.v2 ? 'memory.events' : 'memory.oom_control')
        .split('\n')
        .map((l) => l.split(' '))
        .map(([k, v]) => [k!, Number(v)] as const),
    );
    const usage = Number(read(this.v2 ? 'memory.current' : 'memory.usage_in_bytes'));
    const peakFile = this.v2 ? 'memory.peak' : 'memory.max_usage_in_bytes';
    const peak = existsSync(path.join(this.dir, peakFile)) ? Number(read(peakFile)) : NaN;
    return {
      usageMiB: usage / MiB,
      anonMiB: (stat.get(this.v2 ? 'anon' : 'rss') ?? NaN) / MiB,
      fileMiB: (stat.get(this.v2 ? 'file' : 'cache') ?? NaN) / MiB,
      peakMiB: peak / MiB,
      oomKills: events.get('oom_kill') ?? 0,
    };
  }

  /** Removes the cgroup once its processes are gone (best effort: a leftover empty cgroup is harmless). */
  async remove(): Promise<void> {
    for (let i = 0; i < 20; i++) {
      try {
        rmdirSync(this.dir);
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 50)); // its last process may still be exiting
      }
    }
  }
}

/** "100Mi", "128M", "104857600": a Kubernetes memory quantity in bytes (the project's quantity parser). */
export function parseMemoryQuantity(raw: string): number {
  const milli = parseMilliValue(raw.trim());
  if (milli === undefined || milli <= 0n)
    throw new Error(`${JSON.stringify(raw)} is not a memory quantity such as 100Mi`);
  return Number((milli + 999n) / 1000n);
}
