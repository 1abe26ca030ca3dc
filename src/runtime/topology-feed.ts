// Feeds a node-local consumer's topology index from its upstream: the wrapper's reflectors
// (src/wrapper/sync.ts) and the proxy's informers (src/proxy/sync.ts) hand every upstream change of a
// Service, EndpointSlice, Endpoints or Node here and get back the Services whose view changed. Along the
// way it keeps what both say in the log: whether this node is in the upstream (host-node.ts), and when
// the upstream goes away and comes back (upstream-log.ts). It remembers the Service each slice was fed
// under, so a slice relabelled to another Service (on a watch event or a relist) leaves the old
// Service's view (core/topology/slice-service.ts).
import type { KObject } from '../api/object.js';
import { TopologyIndex } from '../core/topology/topology-index.js';
import { sliceMove, sliceService } from '../core/topology/slice-service.js';
import { HostNodePresence } from './host-node.js';
import type { ReflectorOptions } from './reflector.js';
import type { Logger } from './logger.js';
import { UpstreamLog, type UpstreamMessages } from './upstream-log.js';

export interface TopologyFeedOptions {
  /** The node the consumer serves: the index keeps every Service's view for it. */
  readonly node: string;
  readonly log: Logger;
  /** Whether every reflector of the consumer is watching. */
  readonly inSync: () => boolean;
  /** Whether the consumer's initial sync is done. */
  readonly synced: () => boolean;
  /** Whether the consumer has stopped. */
  readonly stopped: () => boolean;
  /** What the upstream lines say (default: the wrapper's). */
  readonly messages?: UpstreamMessages;
  /** Told when the upstream goes away (false) and is back (true), as the log lines say it. */
  readonly onUpstream?: (up: boolean) => void;
  /** Told how long each update of the index took, in seconds (not timed without it). */
  readonly recomputeSeconds?: (seconds: number) => void;
}

export class TopologyFeed {
  readonly index: TopologyIndex;
  /** For the consumer's reflectors: one line when the upstream goes and one when it is back. */
  readonly reflectorOptions: Pick<ReflectorOptions, 'onState' | 'onError'>;
  private readonly host: HostNodePresence;
  private readonly upstream: UpstreamLog;
  /** Slices by `namespace/name`: the Service each was last fed under (none: not held). */
  private readonly sliceServices = new Map<string, string>();

  constructor(private readonly o: TopologyFeedOptions) {
    this.index = new TopologyIndex(o.node, { targetRefs: false });
    this.host = new HostNodePresence(o.node, o.log);
    this.upstream = new UpstreamLog(
      o.log,
      o.inSync,
      () => o.synced() && !o.stopped(),
      () => !o.synced() && !o.stopped(),
      o.messages,
      o.onUpstream,
    );
    this.reflectorOptions = {
      onState: () => queueMicrotask(() => this.upstream.note()),
      onError: (err) => this.upstream.note(err),
    };
  }

  /** The initial sync is done: a missing node is reported, and the upstream is up. */
  initialSyncDone(): void {
    this.host.initialSyncDone();
    this.upstream.up();
  }

  /** A Service set (as the index should read it) or removed (undefined). */
  service(key: string, svc: KObject | undefined): string[] {
    return this.timed(() => this.index.setService(key, svc));
  }

  /** A Node set or removed (undefined). */
  node(name: string, node: KObject | undefined): string[] {
    this.host.observe(name, node !== undefined);
    return this.timed(() =>
      this.index.setNode(name, node === undefined ? undefined : (node.metadata.labels ?? {})),
    );
  }

  /** An Endpoints object set or removed (undefined). */
  endpoints(key: string, endpoints: KObject | undefined): string[] {
    return this.timed(() => this.index.setEndpoints(key, endpoints));
  }

  /**
   * An EndpointSlice (by `namespace/name`) set or removed (undefined). A slice that names another Service
   * than it was fed under, or none, leaves that Service's view first.
   */
  slice(key: string, slice: KObject | undefined): string[] {
    const name = key.slice(key.indexOf('/') + 1);
    const { leave, join } = sliceMove(
      this.sliceServices.get(key),
      slice === undefined ? undefined : sliceService(slice),
    );
    let changed: string[] = [];
    if (leave !== undefined) changed = this.timed(() => this.index.setSlice(leave, name, undefined));
    if (join === undefined) this.sliceServices.delete(key);
    else {
      this.sliceServices.set(key, join);
      changed = [...changed, ...this.timed(() => this.index.setSlice(join, name, slice))];
    }
    return changed;
  }

  /** The Service a slice was last fed under, or undefined. */
  serviceOf(sliceKey: string): string | undefined {
    return this.sliceServices.get(sliceKey);
  }

  /** A node's verdict from the health source: false drops its endpoints, undefined is no opinion. */
  health(node: string, healthy: boolean | undefined): string[] {
    return this.timed(() => this.index.setHealth(node, healthy));
  }

  private timed(f: () => string[]): string[] {
    const report = this.o.recomputeSeconds;
    if (report === undefined) return f();
    const t = performance.now();
    const changed = f();
    report((performance.now() - t) / 1000);
    return changed;
  }
}
