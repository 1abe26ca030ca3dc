// The `default/kubernetes` Service and its Endpoints and EndpointSlice, in behaviour like
// kube-apiserver's kubernetesservice controller with the "lease" endpoint reconciler:
//   - the Service is created when missing (clusterIP = first address of the primary range, port 443
//     named https → the secure port) and otherwise left alone;
//   - every apiserver keeps a lease under /masterleases/ that it renews each pass (10 s) and that
//     expires after 15 s, so a dead apiserver drops out of the Endpoints;
//   - the Endpoints list the address of every live lease; the apiserver writes the EndpointSlice
//     itself, and marks the Endpoints skip-mirror.
// svcplane only ever listens on loopback, so the addresses are 127.0.0.0/8 addresses, which
// Endpoints validation refuses from clients. These two objects are the apiserver's own and are
// written to the store directly (with compare-and-swap), never through client-facing validation.
import { randomUUID } from 'node:crypto';
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import { StatusError } from '../../api/status.js';
import { parseAddress } from '../../core/allocator/cidr.js';
import { ipAt, type IPRange } from '../../core/allocator/ip-allocator.js';
import { LABEL_SERVICE_NAME } from '../../core/endpointslices/types.js';
import { isStoreError, type Store } from '../../storage/store.js';
import { decodeObject, encodeObject, objectKey } from '../codec.js';
import type { Logger } from '../../runtime/logger.js';
import { rfc3339 } from '../registry/object-meta.js';
import type { Registry, WriteContext } from '../registry/registry.js';

const SERVICES = mustFindResource('', 'services');
const ENDPOINTS = mustFindResource('', 'endpoints');
const SLICES = mustFindResource('discovery.k8s.io', 'endpointslices');
export const LEASE_PREFIX = '/masterleases/';
const NAME = 'kubernetes';
const NAMESPACE = 'default';

export interface KubernetesServiceOptions {
  readonly primaryRange: IPRange;
  /** The address other clients reach this apiserver at. */
  readonly advertiseAddress: string;
  readonly securePort: number;
  readonly intervalMs?: number;
  readonly leaseTTLSeconds?: number;
  readonly now?: () => number;
}

interface Lease {
  readonly address: string;
  readonly port: number;
  readonly expires: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The first usable address of the primary range (GetIndexedIP(range, 1)). */
export const kubernetesServiceIP = (r: IPRange): string => ipAt(r, 0);

export class KubernetesServiceController {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly now: () => number;

  constructor(
    private readonly registry: Registry,
    private readonly store: Store,
    private readonly o: KubernetesServiceOptions,
    private readonly log: Logger,
  ) {
    this.now = o.now ?? Date.now;
  }

  private get leaseKey(): string {
    return `${LEASE_PREFIX}${this.o.advertiseAddress}/${this.o.securePort}`;
  }

  start(): void {
    const tick = (): void => {
      if (this.stopped) return;
      this.running = this.reconcile()
        .catch((err: unknown) => this.log.warn('kubernetes service reconcile failed', { err: String(err) }))
        .finally(() => {
          if (this.stopped) return;
          this.timer = setTimeout(tick, this.o.intervalMs ?? 10_000);
          this.timer.unref();
        });
    };
    tick();
  }

  /** Stops the loop, gives up this apiserver's lease and drops it from the Endpoints. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
    try {
      const kv = await this.store.get(this.leaseKey);
      if (kv !== undefined) await this.store.delete(this.leaseKey, kv.modRevision);
      await this.reconcileEndpoints(await this.liveLeases());
    } catch (err) {
      this.log.warn('could not remove this apiserver from the kubernetes endpoints', { err: String(err) });
    }
  }

  /** One pass: the Service, this apiserver's lease, then the Endpoints and the EndpointSlice. */
  async reconcile(): Promise<void> {
    await this.ensureService();
    await this.renewLease();
    await this.reconcileEndpoints(await this.liveLeases());
  }

  private async ensureService(): Promise<void> {
    try {
      await this.registry.get(SERVICES, NAMESPACE, NAME);
      return;
    } catch (err) {
      if (!(err instanceof StatusError && err.code === 404)) throw err;
    }
    const ip = kubernetesServiceIP(this.o.primaryRange);
    const ctx: WriteContext = {
      dryRun: false,
      fieldManager: 'kube-apiserver',
      fieldValidation: 'Ignore',
      warnings: [],
    };
    try {
      await this.registry.create(
        SERVICES,
        NAMESPACE,
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: {
            name: NAME,
            namespace: NAMESPACE,
            labels: { provider: 'kubernetes', component: 'apiserver' },
          },
          spec: {
            type: 'ClusterIP',
            clusterIP: ip,
            clusterIPs: [ip],
            ipFamilyPolicy: 'SingleStack',
            sessionAffinity: 'None',
            ports: [{ name: 'https', protocol: 'TCP', port: 443, targetPort: this.o.securePort }],
          },
        },
        ctx,
      );
      this.log.info('created the kubernetes service', { key: `${NAMESPACE}/${NAME}`, clusterIP: ip });
    } catch (err) {
      if (err instanceof StatusError && err.code === 409) return;
      throw err;
    }
  }

  private async renewLease(): Promise<void> {
    const lease: Lease = {
      address: this.o.advertiseAddress,
      port: this.o.securePort,
      expires: this.now() + (this.o.leaseTTLSeconds ?? 15) * 1000,
    };
    const value = encoder.encode(JSON.stringify(lease));
    const kv = await this.store.get(this.leaseKey);
    if (kv === undefined) await this.store.create(this.leaseKey, value);
    else await this.store.update(this.leaseKey, value, kv.modRevision);
  }

  /** The live leases; expired ones are deleted on the way. */
  async liveLeases(): Promise<Lease[]> {
    const { items } = await this.store.list(LEASE_PREFIX);
    const live: Lease[] = [];
    for (const kv of items) {
      let lease: Lease | undefined;
      try {
        lease = JSON.parse(decoder.decode(kv.value)) as Lease;
      } catch {
        lease = undefined;
      }
      if (lease !== undefined && typeof lease.expires === 'number' && lease.expires > this.now()) {
        live.push(lease);
        continue;
      }
      await this.store.delete(kv.key, kv.modRevision).catch(() => undefined);
    }
    return live;
  }

  private async reconcileEndpoints(leases: Lease[]): Promise<void> {
    if (leases.length === 0) {
      if (!this.stopped) {
        throw new Error(
          'no API server IP addresses were listed in storage, refusing to erase all endpoints for the kubernetes Service',
        );
      }
      return;
    }
    // One subset per port (normally one): addresses sorted, as RepackSubsets leaves them.
    const byPort = new Map<number, string[]>();
    for (const l of leases) byPort.set(l.port, [...(byPort.get(l.port) ?? []), l.address]);
    const groups = [...byPort.entries()]
      .map(([port, addrs]) => ({ port, addrs: [...new Set(addrs)].sort() }))
      .sort((a, b) => b.addrs.length - a.addrs.length || a.port - b.port);
    const subsets = [...groups]
      .sort((a, b) => a.port - b.port)
      .map((g) => ({
        addresses: g.addrs.map((ip) => ({ ip })),
        ports: [{ name: 'https', port: g.port, protocol: 'TCP' }],
      }));
    await this.put(ENDPOINTS, {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name: NAME,
        namespace: NAMESPACE,
        labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' },
      },
      subsets,
    });
    // A slice holds one port list: the biggest group (ties: the lowest port) speaks for the Service.
    const main = groups[0]!;
    await this.put(SLICES, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: NAME, namespace: NAMESPACE, labels: { [LABEL_SERVICE_NAME]: NAME } },
      addressType: parseAddress(main.addrs[0]!)?.family ?? 'IPv4',
      endpoints: main.addrs.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
      ports: [{ name: 'https', port: main.port, protocol: 'TCP' }],
    });
  }

  /** Writes an object unless the stored one already says the same; compare-and-swap on updates. */
  private async put(r: typeof ENDPOINTS, want: KObject): Promise<void> {
    const key = objectKey(r, NAMESPACE, NAME);
    for (let attempt = 0; attempt < 3; attempt++) {
      const kv = await this.store.get(key);
      const { metadata: _m, ...wantBody } = want;
      if (kv === undefined) {
        const obj: KObject = {
          ...want,
          metadata: { ...want.metadata, uid: randomUUID(), creationTimestamp: rfc3339(this.now()) },
        };
        try {
          await this.store.create(key, encodeObject(obj));
          return;
        } catch (err) {
          if (isStoreError(err, 'AlreadyExists')) continue;
          throw err;
        }
      }
      const have = decodeObject(kv.value, kv.modRevision);
      const { metadata: haveMeta, ...haveBody } = have;
      const sameLabels = JSON.stringify(haveMeta.labels ?? {}) === JSON.stringify(want.metadata.labels ?? {});
      if (sameLabels && JSON.stringify(haveBody) === JSON.stringify(wantBody)) return;
      this.log.info(`Resetting ${r.resource} for master service "kubernetes"`, {
        key: `${NAMESPACE}/${NAME}`,
      });
      const next: KObject = {
        ...wantBody,
        metadata: { ...haveMeta, labels: want.metadata.labels ?? {} },
      } as KObject;
      try {
        await this.store.update(key, encodeObject(next), kv.modRevision);
        return;
      } catch (err) {
        if (isStoreError(err, 'Conflict') || isStoreError(err, 'NotFound')) continue;
        throw err;
      }
    }
  }
}
