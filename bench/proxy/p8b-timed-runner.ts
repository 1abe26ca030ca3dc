// P8b's iptables runner that times its calls: restore, save, jump checks.
import { performance } from 'node:perf_hooks';
import { type IptablesRunner } from '../../src/proxy/iptables-runner.js';
import { type BenchNetns } from '../lib/netns.js';
import { median } from '../run.js';

interface CallTimes {
  restoreMs: number;
  saveMs: number;
  jumpsMs: number;
  restores: number;
}

/**
 * A runner that adds up the time spent in each kind of call, so an apply() can be split. Its restores give
 * up after `restoreTimeoutMs` (the program is killed). With `seeding` set, a restore runs `seedRestore`
 * instead: see seedTable.
 */
export function timedRunner(
  inner: IptablesRunner,
  restoreTimeoutMs: number,
  seedRestore: (text: string) => Promise<void>,
): { runner: IptablesRunner; take: () => CallTimes; seeding: { on: boolean } } {
  let t: CallTimes = { restoreMs: 0, saveMs: 0, jumpsMs: 0, restores: 0 };
  const seeding = { on: false };
  const timed = async <T>(k: 'restoreMs' | 'saveMs' | 'jumpsMs', f: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      return await f();
    } finally {
      t[k] += performance.now() - t0;
      if (k === 'restoreMs') t.restores++;
    }
  };
  return {
    runner: {
      ...inner,
      restore: (text, signal) =>
        timed('restoreMs', () =>
          seeding.on
            ? seedRestore(text)
            : inner.restore(text, signal ?? AbortSignal.timeout(restoreTimeoutMs)),
        ),
      save: (table, signal) => timed('saveMs', () => inner.save(table, signal)),
      ensureRule: (table, chain, args, target) =>
        timed('jumpsMs', () => inner.ensureRule(table, chain, args, target)),
    },
    take: () => {
      const out = t;
      t = { restoreMs: 0, saveMs: 0, jumpsMs: 0, restores: 0 };
      return out;
    },
    seeding,
  };
}

/**
 * `iptables-restore --wait` WITHOUT --noflush in the namespace: it replaces the whole of each table in the
 * input. Only for seeding the benchmark's own, otherwise empty, namespace when the product's --noflush
 * restore does not finish in time (iptables-nft at full size), so that the partial syncs can still be
 * measured against a full table. Not what the proxy does.
 */
export function flushRestore(ns: BenchNetns, program: string, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const c = ns.exec([program, '--wait'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    c.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    c.stdin!.on('error', () => {});
    c.on('error', reject);
    c.on('close', (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`${program} (flush mode): ${code ?? signal}: ${err.trim().split('\n')[0]}`)),
    );
    c.stdin!.end(text);
  });
}

export interface ApplyTiming extends CallTimes {
  totalMs: number;
  /** totalMs minus the programs' calls: the render, and this process's own work around it. */
  renderMs: number;
  rules: number;
}

export async function timeExec(ns: BenchNetns, reps: number): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve, reject) => {
      const c = ns.exec(['true'], { stdio: 'ignore' });
      c.on('error', reject);
      c.on('close', () => resolve());
    });
    xs.push(performance.now() - t0);
  }
  return median(xs);
}
