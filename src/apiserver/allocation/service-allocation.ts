// The Service strategy's allocation side: ClusterIPs and NodePorts are taken before a Service is
// written and given back if the write fails; what an update or a delete lets go of is released
// only after the write is stored. The decisions are core/allocator's (pure); this file performs
// them against the persisted allocators and maps failures to upstream's Status errors.
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import { statusErrors } from '../../api/status.js';
import { invalid } from '../../api/field-errors.js';
import type { JsonRecord } from '../../api/json.js';
import type { Random } from '../../core/allocator/bitmap.js';
import { canonicalIP, parseAddress, type IPFamily } from '../../core/allocator/cidr.js';
import {
  errFull,
  errIPAllocated,
  errIPNotInRange,
  errPortAllocated,
  errPortNotInRange,
  isAllocatorError,
} from '../../core/allocator/errors.js';
import { IPAllocator, ipAt, ipOffset, ipRange, type IPRange } from '../../core/allocator/ip-allocator.js';
import { PortAllocator, type PortRange } from '../../core/allocator/port-allocator.js';
import {
  assignClusterIPs,
  assignNodePorts,
  clusterIPRequests,
  heldValues,
  initIPFamilyFields,
  nodePortRequests,
  releasedByUpdate,
} from '../../core/allocator/service-alloc.js';
import type { Store } from '../../storage/store.js';
import type { Logger } from '../../runtime/logger.js';
import type { RegistryHooks, WriteContext } from '../registry/types.js';
import { KeyedAllocator, type Owner, type RangeView } from './keyed-allocator.js';
import type { AllocationMetrics } from './metrics.js';

export const SERVICES = mustFindResource('', 'services');
export const CLUSTER_IP_PREFIX = '/allocations/serviceips/';
export const NODE_PORT_PREFIX = '/allocations/servicenodeports/';

export interface AllocationConfig {
  /** --service-cluster-ip-range: one or two CIDRs, primary first. */
  readonly serviceClusterIPRange: readonly string[];
  /** --service-node-port-range. */
  readonly serviceNodePortRange: PortRange;
  readonly random?: Random;
}

const specOf = (obj: KObject): JsonRecord => {
  const spec = (obj as { spec?: unknown }).spec;
  return typeof spec === 'object' && spec !== null ? (spec as JsonRecord) : {};
};
const ownerOf = (obj: KObject): Owner => ({
  namespace: obj.metadata.namespace ?? '',
  name: obj.metadata.name ?? '',
  uid: obj.metadata.uid ?? '',
});

/** A range's hint view, on the in-memory allocator's own bitmap. */
function ipView(r: IPRange): RangeView<string> {
  const alloc = new IPAllocator(r);
  return {
    spec: r.spec,
    bitmap: alloc.bitmap,
    offsetOf: (ip) => ipOffset(r, ip),
    valueAt: (off) => ipAt(r, off),
  };
}

function portView(r: PortRange): RangeView<number> {
  const alloc = new PortAllocator(r);
  return {
    spec: alloc.spec,
    bitmap: alloc.bitmap,
    offsetOf: (p) => (alloc.contains(p) ? p - r.base : undefined),
    valueAt: (off) => r.base + off,
  };
}

/**
 * Like Promise.all, but waits for every promise before failing, so that nothing taken by a request
 * still in flight escapes the undo.
 */
async function settle<T>(promises: Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<T>).value);
}

/** The persisted ClusterIP and NodePort allocators of one apiserver, and the Service hooks over them. */
export class ServiceAllocators {
  readonly ipRanges: IPRange[];
  readonly families: IPFamily[];
  readonly portRange: PortRange;
  readonly ips: KeyedAllocator<string>;
  readonly ports: KeyedAllocator<number>;
  private readonly ipViews: Map<IPFamily, RangeView<string>>;

  constructor(
    store: Store,
    cfg: AllocationConfig,
    private readonly log: Logger,
    private readonly metrics?: AllocationMetrics,
  ) {
    this.ipRanges = cfg.serviceClusterIPRange.map((c) => ipRange(c));
    this.families = this.ipRanges.map((r) => r.family);
    this.portRange = cfg.serviceNodePortRange;
    this.ipViews = new Map(this.ipRanges.map((r) => [r.family, ipView(r)]));
    const random = cfg.random ?? Math.random;
    this.ips = new KeyedAllocator<string>({
      store,
      prefix: CLUSTER_IP_PREFIX,
      parse: (name) => (canonicalIP(name) === name ? name : undefined),
      format: (ip) => ip,
      views: [...this.ipViews.values()],
      random,
      log,
      errNotInRange: (ip) => errIPNotInRange(ip),
      errAllocated: errIPAllocated,
    });
    const pv = portView(this.portRange);
    this.ports = new KeyedAllocator<number>({
      store,
      prefix: NODE_PORT_PREFIX,
      parse: (name) => (/^[1-9][0-9]{0,4}$/.test(name) ? Number(name) : undefined),
      format: (p) => String(p),
      views: [pv],
      random,
      log,
      errNotInRange: () => errPortNotInRange(pv.spec),
      errAllocated: errPortAllocated,
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.ips.start(), this.ports.start()]);
    this.updateGauges();
  }

  async stop(): Promise<void> {
    await Promise.all([this.ips.stop(), this.ports.stop()]);
  }

  updateGauges(): void {
    if (this.metrics === undefined) return;
    for (const [, v] of this.ipViews) {
      this.metrics.ipAllocated.set({ cidr: v.spec }, v.bitmap.count);
      this.metrics.ipAvailable.set({ cidr: v.spec }, v.bitmap.free());
    }
    const pv = this.ports.views[0]!;
    this.metrics.portAllocated.set(pv.bitmap.count);
    this.metrics.portAvailable.set(pv.bitmap.free());
  }

  /** The hooks the registry calls around Service writes. */
  hooks(): RegistryHooks {
    return {
      prepare: (r, obj, old) => {
        if (r !== SERVICES) return;
        const errs = initIPFamilyFields(specOf(obj), old === undefined ? undefined : specOf(old), {
          families: this.families,
        });
        if (errs.length > 0)
          throw statusErrors.invalid({ group: '', kind: 'Service' }, obj.metadata.name ?? '', errs);
      },
      beforeCreate: async (r, obj, ctx) => (r === SERVICES ? this.take(obj, undefined, ctx) : undefined),
      beforeUpdate: async (r, obj, old, ctx) => (r === SERVICES ? this.take(obj, old, ctx) : undefined),
      afterUpdate: async (r, obj, old) => {
        if (r !== SERVICES) return;
        await this.release(releasedByUpdate(specOf(old), specOf(obj)), old);
      },
      afterDelete: async (r, obj) => {
        if (r !== SERVICES) return;
        await this.release(heldValues(specOf(obj)), obj);
      },
    };
  }

  /**
   * Takes what the write needs and fills it into obj's spec. Returns the undo that gives it all back.
   * A dry run takes nothing: it checks specific values and shows the values a real write would try.
   */
  private async take(
    obj: KObject,
    old: KObject | undefined,
    ctx: WriteContext,
  ): Promise<() => Promise<void>> {
    const spec = specOf(obj);
    const oldSpec = old === undefined ? undefined : specOf(old);
    const owner = ownerOf(obj);
    const takenIPs: string[] = [];
    const takenPorts: number[] = [];
    const undo = async (): Promise<void> => {
      if (ctx.dryRun) return;
      await Promise.all([
        ...takenIPs.map((ip) => this.ips.release(ip, owner.uid)),
        ...takenPorts.map((p) => this.ports.release(p, owner.uid)),
      ]).catch((err: unknown) =>
        this.log.warn('releasing after a failed write failed; repair will free it', { err: String(err) }),
      );
      this.updateGauges();
    };
    try {
      const byFamily = new Map<IPFamily, string>();
      const clusterIPs = (spec['clusterIPs'] as string[] | undefined) ?? [];
      // The addresses and the node ports are taken at once: one round of store writes, not two.
      const plan = nodePortRequests(spec, oldSpec);
      if (plan.error !== undefined) throw statusErrors.internal(new Error(plan.error));
      const ipPhase = settle(
        clusterIPRequests(spec, oldSpec).map(async (req) => {
          const view = this.ipViews.get(req.family);
          const cidr = view?.spec ?? '';
          if (req.ip !== undefined) {
            const ip = canonicalIP(req.ip) ?? req.ip;
            try {
              if (ctx.dryRun) await this.ips.check(ip);
              else {
                await this.ips.allocate(ip, owner);
                takenIPs.push(ip);
              }
              this.metrics?.ipAllocations.inc({ cidr, scope: 'static' });
            } catch (err) {
              if (!isAllocatorError(err)) throw err;
              this.metrics?.ipAllocationErrors.inc({ cidr, scope: 'static' });
              throw statusErrors.invalid({ group: '', kind: 'Service' }, obj.metadata.name ?? '', [
                invalid('spec.clusterIPs', clusterIPs, `failed to allocate IP ${req.ip}: ${err.message}`),
              ]);
            }
            return;
          }
          try {
            if (view === undefined) throw errFull(); // initIPFamilyFields admits configured families only
            let ip: string | undefined;
            if (ctx.dryRun) {
              ip = this.ips.peekNext(view);
              if (ip === undefined) throw errFull();
            } else {
              ip = await this.ips.allocateNext(view, owner);
              takenIPs.push(ip);
            }
            byFamily.set(req.family, ip);
            this.metrics?.ipAllocations.inc({ cidr, scope: 'dynamic' });
          } catch (err) {
            if (!isAllocatorError(err)) throw err;
            this.metrics?.ipAllocationErrors.inc({ cidr, scope: 'dynamic' });
            throw statusErrors.internal(new Error(`failed to allocate a serviceIP: ${err.message}`));
          }
        }),
      );
      const portPhase = settle(
        plan.requests.map(async (req, i) => {
          const hc = i === plan.healthCheck;
          if (req.kind === 'specific') {
            try {
              if (ctx.dryRun) await this.ports.check(req.port);
              else {
                await this.ports.allocate(req.port, owner);
                takenPorts.push(req.port);
              }
              this.metrics?.portAllocations.inc({ scope: 'static' });
              return req.port;
            } catch (err) {
              if (!isAllocatorError(err)) throw err;
              this.metrics?.portAllocationErrors.inc({ scope: 'static' });
              if (hc) {
                throw statusErrors.internal(
                  new Error(`failed to allocate requested HealthCheck NodePort ${req.port}: ${err.message}`),
                );
              }
              throw statusErrors.invalid({ group: '', kind: 'Service' }, obj.metadata.name ?? '', [
                invalid(req.field, req.port, err.message),
              ]);
            }
          }
          const view = this.ports.views[0]!;
          try {
            let port: number | undefined;
            if (ctx.dryRun) {
              port = this.ports.peekNext(view);
              if (port === undefined) throw errFull();
            } else {
              port = await this.ports.allocateNext(view, owner);
              takenPorts.push(port);
            }
            this.metrics?.portAllocations.inc({ scope: 'dynamic' });
            return port;
          } catch (err) {
            if (!isAllocatorError(err)) throw err;
            this.metrics?.portAllocationErrors.inc({ scope: 'dynamic' });
            throw statusErrors.internal(
              new Error(
                hc
                  ? `failed to allocate a HealthCheck NodePort 0: ${err.message}`
                  : `failed to allocate a nodePort: ${err.message}`,
              ),
            );
          }
        }),
      );
      const [, results] = await settle<unknown>([ipPhase, portPhase]);
      assignClusterIPs(spec, byFamily);
      assignNodePorts(spec, plan, results as number[]);
      this.updateGauges();
      return undo;
    } catch (err) {
      await undo();
      throw err;
    }
  }

  private async release(held: { ips: string[]; ports: number[] }, obj: KObject): Promise<void> {
    const uid = obj.metadata.uid;
    try {
      await Promise.all([
        ...held.ips.map((ip) => (parseAddress(ip) === undefined ? undefined : this.ips.release(ip, uid))),
        ...held.ports.map((p) => this.ports.release(p, uid)),
      ]);
    } catch (err) {
      // The Service is already written; what could not be freed now, the repair loop frees later.
      this.log.warn('releasing service allocations failed; repair will free them', {
        key: `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`,
        err: String(err),
      });
    }
    this.updateGauges();
  }
}
