// Namespace deletion, as kube's namespace controller does it: a namespace that is being deleted
// (deletionTimestamp set, phase Terminating) has all of its contents deleted; once nothing is left,
// its `kubernetes` finalizer is removed and the namespace itself goes. Objects held by their own
// finalizers keep the namespace Terminating until their owners let go.
import type { KObject } from '../api/object.js';
import { RESOURCES, mustFindResource } from '../api/resources.js';
import { StatusError } from '../api/status.js';
import type { Logger } from './logger.js';
import type { Registry, WriteContext } from './registry/registry.js';
import type { WatchCache } from './watch-cache/watch-cache.js';

const NAMESPACES = mustFindResource('', 'namespaces');
const SYSTEM_CTX = (): WriteContext => ({
  dryRun: false,
  fieldManager: 'namespace-controller',
  fieldValidation: 'Ignore',
  warnings: [],
});

export class NamespaceLifecycle {
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private again = false;
  private stopped = false;
  private stopWatch: (() => void) | undefined;

  constructor(
    private readonly registry: Registry,
    private readonly cache: WatchCache,
    private readonly log: Logger,
    private readonly intervalMs = 1_000,
  ) {}

  async start(): Promise<void> {
    await this.cache.ready;
    const kick = (): void => this.kick();
    const w = this.cache.watch(
      NAMESPACES,
      { label: { requirements: [] }, field: { requirements: [] } },
      { deliver: kick, expire: kick },
      { initial: true },
    );
    this.stopWatch = w.stop;
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    this.stopWatch?.();
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  /** Runs a pass soon; passes never overlap. */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    setImmediate(() => {
      void this.pass()
        .catch((err: unknown) => this.log.warn('namespace lifecycle pass failed', { error: String(err) }))
        .then((pending) => {
          this.running = false;
          if (this.again) {
            this.again = false;
            this.kick();
          } else if (pending === true && !this.stopped) {
            this.timer = setTimeout(() => this.kick(), this.intervalMs);
            this.timer.unref();
          }
        });
    });
  }

  /** One pass over every terminating namespace; true when some are still waiting. */
  private async pass(): Promise<boolean> {
    const all = this.cache.list(NAMESPACES, { label: { requirements: [] }, field: { requirements: [] } });
    let pending = false;
    for (const o of all.items) {
      const ns = JSON.parse(o.json) as KObject;
      if (ns.metadata.deletionTimestamp === undefined) continue;
      const done = await this.drain(o.name);
      if (!done) {
        pending = true;
        continue;
      }
      await this.finalize(o.name).catch((err: unknown) => {
        if (!(err instanceof StatusError && (err.reason === 'NotFound' || err.reason === 'Conflict')))
          throw err;
        pending = true;
      });
    }
    return pending;
  }

  /** Deletes everything in the namespace; true when it is empty. */
  private async drain(namespace: string): Promise<boolean> {
    let remaining = 0;
    for (const r of RESOURCES) {
      if (!r.namespaced) continue;
      const items = this.cache.list(r, {
        namespace,
        label: { requirements: [] },
        field: { requirements: [] },
      }).items;
      remaining += items.length;
      for (const item of items) {
        if (item.json.includes('"deletionTimestamp"')) continue;
        try {
          await this.registry.delete(
            r,
            namespace,
            item.name,
            { propagationPolicy: 'Background' },
            SYSTEM_CTX(),
          );
        } catch (err) {
          if (!(err instanceof StatusError && (err.reason === 'NotFound' || err.reason === 'Conflict')))
            throw err;
        }
      }
    }
    return remaining === 0;
  }

  private async finalize(name: string): Promise<void> {
    const ns = await this.registry.get(NAMESPACES, '', name);
    const spec = (ns.spec ?? {}) as { finalizers?: string[] };
    const finalizers = (spec.finalizers ?? []).filter((f) => f !== 'kubernetes');
    const next = { ...ns, spec: { ...spec, finalizers } };
    await this.registry.update(NAMESPACES, '', name, next, SYSTEM_CTX(), 'finalize');
    this.log.info('namespace deleted', { namespace: name });
  }
}

/** The namespaces kube-apiserver creates at start (kube-system, kube-public, kube-node-lease, default). */
export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;

export async function ensureSystemNamespaces(registry: Registry): Promise<void> {
  for (const name of SYSTEM_NAMESPACES) {
    try {
      await registry.create(
        NAMESPACES,
        '',
        { metadata: { name } },
        { ...SYSTEM_CTX(), fieldManager: 'kube-apiserver' },
      );
    } catch (err) {
      if (!(err instanceof StatusError && err.reason === 'AlreadyExists')) throw err;
    }
  }
}
