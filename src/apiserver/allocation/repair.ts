// The ClusterIP and NodePort repair controllers, in behaviour like kube-apiserver's
// ipallocator/controller/repair.go and portallocator/controller/repair.go. One pass reads the
// allocation records and every Service at one store revision, asks core/allocator's repair plan what
// is wrong, records what Services use but nobody recorded, frees leaks on their 3rd consecutive pass,
// and reports each problem as a Warning Event on the Service and in the metrics. A pass that finds a
// full range writes nothing and fails. Writes are per key and conditional (create-if-absent, delete
// only the version that was read), so passes in several apiservers at once cannot undo each other.
import { mustFindResource } from '../../api/resources.js';
import {
  planClusterIPRepair,
  planNodePortRepair,
  type RepairPlan,
  type RepairService,
} from '../../core/allocator/repair-plan.js';
import { canonicalIP } from '../../core/allocator/cidr.js';
import type { Store } from '../../storage/store.js';
import { decodeObject } from '../codec.js';
import type { EventSink } from '../events.js';
import type { Logger } from '../../runtime/logger.js';
import type { KeyedAllocator, Owner, StoredValue } from './keyed-allocator.js';
import type { AllocationMetrics } from './metrics.js';
import type { ServiceAllocators } from './service-allocation.js';

const SERVICES = mustFindResource('', 'services');
const PAGE = 5_000;

export interface RepairPassResult {
  readonly recorded: number;
  readonly freed: number;
  readonly leaks: number;
  readonly problems: { readonly reason: string; readonly message: string; readonly service: string }[];
}

export class AllocationRepair {
  private ipLeaks = new Map<string, number>();
  private portLeaks = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly allocators: ServiceAllocators,
    private readonly ipEvents: EventSink,
    private readonly portEvents: EventSink,
    private readonly log: Logger,
    private readonly metrics?: AllocationMetrics,
  ) {}

  /** Every Service at `revision`, read in pages. */
  private async services(revision: number): Promise<RepairService[]> {
    const out: RepairService[] = [];
    let cont: string | undefined;
    do {
      const page = await this.store.list(`/${SERVICES.storagePath}/`, {
        limit: PAGE,
        ...(cont === undefined ? { revision } : { continue: cont }),
      });
      for (const kv of page.items) {
        try {
          const obj = decodeObject(kv.value, kv.modRevision);
          const spec = (obj as { spec?: Record<string, unknown> }).spec ?? {};
          out.push({
            namespace: obj.metadata.namespace ?? '',
            name: obj.metadata.name ?? '',
            uid: obj.metadata.uid ?? '',
            ...(typeof spec['clusterIP'] === 'string' ? { clusterIP: spec['clusterIP'] } : {}),
            ...(Array.isArray(spec['clusterIPs']) ? { clusterIPs: spec['clusterIPs'] as string[] } : {}),
            ...(Array.isArray(spec['ports'])
              ? { ports: spec['ports'] as { nodePort?: number; protocol?: string }[] }
              : {}),
            ...(typeof spec['healthCheckNodePort'] === 'number'
              ? { healthCheckNodePort: spec['healthCheckNodePort'] }
              : {}),
          });
        } catch {
          this.log.warn('repair: a stored Service does not decode; skipping it', { key: kv.key });
        }
      }
      cont = page.continue;
    } while (cont !== undefined);
    return out;
  }

  /** One pass of both repairs. Throws when either finds its range full (nothing is written then). */
  async runOnce(): Promise<{ clusterIPs: RepairPassResult; nodePorts: RepairPassResult }> {
    const revision = await this.store.currentRevision();
    const [services, ips, ports] = await Promise.all([
      this.services(revision),
      this.allocators.ips.list(revision),
      this.allocators.ports.list(revision),
    ]);
    const users = (values: (s: RepairService) => (string | number)[]): Map<string | number, Owner> => {
      const m = new Map<string | number, Owner>();
      for (const s of services) for (const v of values(s)) if (!m.has(v)) m.set(v, s);
      return m;
    };

    let ipResult: RepairPassResult;
    try {
      const ipPlan = planClusterIPRepair(this.allocators.ipRanges, known(ips.items), services, this.ipLeaks);
      ipResult = await this.apply(
        ipPlan,
        ips.items,
        this.allocators.ips,
        this.ipEvents,
        'ip',
        users((s) => (s.clusterIPs ?? []).map((ip) => canonicalIP(ip) ?? ip)),
      );
      this.ipLeaks = ipPlan.leaks;
    } catch (err) {
      this.metrics?.ipRepairReconcileErrors.inc();
      throw err;
    }
    let portResult: RepairPassResult;
    try {
      const portPlan = planNodePortRepair(
        this.allocators.portRange,
        known(ports.items),
        services,
        this.portLeaks,
      );
      portResult = await this.apply(
        portPlan,
        ports.items,
        this.allocators.ports,
        this.portEvents,
        'port',
        users((s) => (s.ports ?? []).map((p) => p.nodePort ?? 0).concat(s.healthCheckNodePort ?? 0)),
      );
      this.portLeaks = portPlan.leaks;
    } catch (err) {
      this.metrics?.portRepairReconcileErrors.inc();
      throw err;
    }
    this.allocators.updateGauges();
    return { clusterIPs: ipResult, nodePorts: portResult };
  }

  private async apply<V extends string | number>(
    plan: RepairPlan<V>,
    stored: StoredValue<V>[],
    alloc: KeyedAllocator<V>,
    events: EventSink,
    kind: 'ip' | 'port',
    users: Map<string | number, Owner>,
  ): Promise<RepairPassResult> {
    const counter = kind === 'ip' ? this.metrics?.ipRepairErrors : this.metrics?.portRepairErrors;
    for (const line of plan.logs) this.log.info(line);
    await Promise.all(
      plan.problems.map(async (p) => {
        counter?.inc({ type: p.metric });
        await events.warning(
          { kind: 'Service', apiVersion: 'v1', ...p.service },
          p.reason,
          p.action,
          p.message,
        );
      }),
    );
    const problems = plan.problems.map((p) => ({
      reason: p.reason,
      message: p.message,
      service: `${p.service.namespace}/${p.service.name}`,
    }));
    if (plan.abort !== undefined) throw new Error(plan.abort);
    let recorded = 0;
    for (const v of plan.record) if (await alloc.record(v, users.get(v))) recorded++;
    // Records whose key names no value at all (a stray key) are freed along with the leaks.
    const byValue = new Map(stored.filter((s) => s.value !== undefined).map((s) => [s.value!, s]));
    const doomed = [
      ...plan.free.map((v) => byValue.get(v)).filter((s): s is StoredValue<V> => s !== undefined),
      ...stored.filter((s) => s.value === undefined),
    ];
    let freed = 0;
    for (const s of doomed) {
      if (await alloc.forget(s.key, s.modRevision)) {
        freed++;
        counter?.inc({ type: 'leak' });
      }
    }
    return { recorded, freed, leaks: plan.leaks.size, problems };
  }

  /** Runs a pass every `intervalMs` until stopped; a failed pass is logged and retried next time. */
  start(intervalMs: number): void {
    const tick = (): void => {
      if (this.stopped) return;
      this.running = this.runOnce()
        .catch((err: unknown) => this.log.error('allocation repair pass failed', { err: String(err) }))
        .finally(() => {
          if (!this.stopped) {
            this.timer = setTimeout(tick, intervalMs);
            this.timer.unref();
          }
        });
    };
    this.timer = setTimeout(tick, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
  }
}

/** The values of the records that name one (stray keys are handled apart). */
function known<V>(items: StoredValue<V>[]): V[] {
  return items.flatMap((s) => (s.value === undefined ? [] : [s.value]));
}
