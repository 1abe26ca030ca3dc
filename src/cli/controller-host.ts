// The main-thread side of `svcplane up`'s controllers (controllers-worker.ts): starts the worker thread,
// restarts it with backoff when it dies (a controller crash is logged and never takes the API down),
// reports readiness (/readyz's "controllers" check) and its metrics (appended to /metrics), and stops it
// on shutdown.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../runtime/logger.js';
import type { ControllersWorkerData, FromWorker, ToWorker } from './controllers-worker.js';

export interface ControllerHostOptions {
  readonly data: ControllersWorkerData;
  readonly log: Logger;
  /** Restart backoff: doubles from the first to the last, back to the first after a minute up. */
  readonly backoffMs?: readonly [number, number];
  /** How the worker is made (tests substitute their own entry). */
  readonly spawn?: (data: ControllersWorkerData) => Worker;
}

/**
 * The worker entry beside this file: dist/cli/controllers-worker.js, or under tsx (tests and benchmarks
 * run from the sources) the .ts file, with tsx registered in the worker first (Node 20's workers do not
 * inherit the main thread's module hooks).
 */
export function spawnControllersWorker(data: ControllersWorkerData): Worker {
  const here = new URL(import.meta.url);
  if (!here.pathname.endsWith('.ts')) {
    return new Worker(new URL('./controllers-worker.js', here), { workerData: data });
  }
  const entry = new URL('./controllers-worker.ts', here).href;
  const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(boot, { eval: true, workerData: data });
}

export class ControllerHost {
  private worker: Worker | undefined;
  private readyNow = false;
  private stopped = false;
  private restarts = 0;
  private delayMs: number;
  private timer: NodeJS.Timeout | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, (text: string) => void>();

  constructor(private readonly o: ControllerHostOptions) {
    this.delayMs = o.backoffMs?.[0] ?? 1000;
  }

  get ready(): boolean {
    return this.readyNow;
  }

  /** How many times the worker has been restarted after dying. */
  get restartCount(): number {
    return this.restarts;
  }

  start(): void {
    if (this.stopped || this.worker !== undefined) return;
    const started = Date.now();
    const w = (this.o.spawn ?? spawnControllersWorker)(this.o.data);
    this.worker = w;
    w.on('message', (m: FromWorker) => {
      if (m.type === 'ready') {
        this.readyNow = true;
      } else if (m.type === 'metrics') {
        this.pending.get(m.id)?.(m.text);
        this.pending.delete(m.id);
      } else if (m.type === 'failed') {
        this.o.log.error('controllers failed to start', { err: m.error });
      } else if (m.type === 'lost') {
        this.o.log.error('controllers stopped: this instance lost the leader Lease; campaigning again', {});
      }
    });
    w.on('error', (err) => this.o.log.error('controllers crashed', { err: String(err.stack ?? err) }));
    w.once('exit', (code) => {
      this.worker = undefined;
      this.readyNow = false;
      for (const resolve of this.pending.values()) resolve('');
      this.pending.clear();
      if (this.stopped) return;
      const [first, last] = this.o.backoffMs ?? [1000, 30_000];
      if (Date.now() - started > 60_000) this.delayMs = first;
      this.o.log.error('controllers exited; restarting', { code, inMs: this.delayMs });
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.restarts++;
        this.start();
      }, this.delayMs);
      this.delayMs = Math.min(this.delayMs * 2, last);
    });
  }

  /** The worker's Prometheus text ('' while it is down or does not answer within a second). */
  metrics(): Promise<string> {
    const w = this.worker;
    if (w === undefined) return Promise.resolve('');
    const id = this.nextId++;
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.pending.delete(id);
        resolve('');
      }, 1000);
      this.pending.set(id, (text) => {
        clearTimeout(t);
        resolve(text);
      });
      w.postMessage({ type: 'metrics', id } satisfies ToWorker);
    });
  }

  /** Stops the controllers (their informers and workers end cleanly), at most `graceMs` before terminating. */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    const w = this.worker;
    if (w === undefined) return;
    const exited = new Promise<void>((resolve) => w.once('exit', () => resolve()));
    w.postMessage({ type: 'stop' } satisfies ToWorker);
    const t = setTimeout(() => void w.terminate(), graceMs);
    await exited;
    clearTimeout(t);
  }
}
