// Namespace deletion, as kube's namespace controller does it: a namespace that is being deleted
// (deletionTimestamp set, phase Terminating) has all of its contents deleted; once nothing is left,
// its `kubernetes` finalizer is removed and the namespace itself goes. Objects held by their own
// finalizers keep the namespace Terminating until their owners let go.
//
// Pods are deleted gracefully, as kube's namespace controller does, so that a node's kubelet
// (`svcplane node`) can stop them and confirm. Unlike kube, which waits for the kubelet however long it
// takes, a pod still there when its grace period has run out, or one bound to a node that does not
// exist, is then deleted with grace 0: without a kubelet nothing else would ever remove it, and the
// namespace would stay Terminating for good.
import type { KObject } from '../api/object.js';
import { parseTimestamp } from '../api/printers/time.js';
import { objectKey } from './codec.js';
import { RESOURCES, mustFindResource } from '../api/resources.js';
import { StatusError } from '../api/status.js';
import type { Logger } from '../runtime/logger.js';
import type { Registry, WriteContext } from './registry/registry.js';
import type { WatchCache } from './watch-cache/watch-cache.js';

const NAMESPACES = mustFindResource('', 'namespaces');
const PODS = mustFindResource('', 'pods');
const NODES = mustFindResource('', 'nodes');
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
        let grace: number | undefined;
        if (r === PODS) {
          const g = this.podGrace(JSON.parse(item.json) as KObject);
          if (g === null) continue;
          grace = g;
        } else if (item.json.includes('"deletionTimestamp"')) continue;
        try {
          await this.registry.delete(
            r,
            namespace,
            item.name,
            {
              propagationPolicy: 'Background',
              ...(grace === undefined ? {} : { gracePeriodSeconds: grace }),
            },
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

  /**
   * The grace period to delete a pod with: undefined for its own (the first, graceful delete), 0 to
   * force it (its node is gone, or its grace period ran out), null to leave it alone for now.
   */
  private podGrace(pod: KObject): number | undefined | null {
    const node = (pod.spec as { nodeName?: unknown } | undefined)?.nodeName;
    const nodeGone =
      typeof node === 'string' &&
      node !== '' &&
      this.cache.get(NODES, objectKey(NODES, '', node)) === undefined;
    const meta = pod.metadata;
    if (meta.deletionTimestamp === undefined || meta.deletionTimestamp === null)
      return nodeGone ? 0 : undefined;
    if ((meta.deletionGracePeriodSeconds ?? 0) === 0) return null; // held by finalizers only
    const deadline = parseTimestamp(meta.deletionTimestamp) ?? 0;
    return nodeGone || deadline <= this.registry.now() ? 0 : null;
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
