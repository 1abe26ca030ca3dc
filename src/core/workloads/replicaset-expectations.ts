// Expectations (behaves like kube-controller-manager's controller.UIDTrackingControllerExpectations in
// pkg/controller/controller_utils.go): per controller key, how many creations and which deletions the
// controller has asked for and not yet seen in its informer cache. While some are outstanding the cache
// is stale for that key, and the controller must not create or delete again (it would do it twice);
// it only updates status. A record older than the TTL (5 minutes) counts as satisfied, so a lost watch
// event delays the controller at most that long. Pure: the time is passed in (milliseconds).

/** controller.ExpectationsTimeout. */
export const EXPECTATIONS_TTL_MS = 5 * 60 * 1000;

interface Record_ {
  add: number;
  del: number;
  /** Pod keys (`namespace/name`) whose deletion is expected. */
  readonly deleting: Set<string>;
  readonly timestamp: number;
}

export interface ExpectationsView {
  readonly add: number;
  readonly del: number;
  readonly deleting: readonly string[];
  readonly timestamp: number;
}

export class ControllerExpectations {
  private readonly records = new Map<string, Record_>();

  constructor(private readonly ttlMs = EXPECTATIONS_TTL_MS) {}

  /**
   * Whether the controller may act on `key`: no record, every expected creation and deletion
   * observed, or the record has expired.
   */
  satisfied(key: string, nowMs: number): boolean {
    const r = this.records.get(key);
    if (r === undefined) return true;
    if (r.add <= 0 && r.del <= 0) return true;
    return nowMs - r.timestamp > this.ttlMs;
  }

  /** Expects `count` creations (replacing the record: the caller acts only when satisfied). */
  expectCreations(key: string, count: number, nowMs: number): void {
    this.records.set(key, { add: count, del: 0, deleting: new Set(), timestamp: nowMs });
  }

  /** Expects the deletion of these pod keys (replacing the record). */
  expectDeletions(key: string, podKeys: readonly string[], nowMs: number): void {
    const deleting = new Set(podKeys);
    this.records.set(key, { add: 0, del: deleting.size, deleting, timestamp: nowMs });
  }

  /**
   * A creation was observed (a pod the controller owns appeared in the cache), or will never be (the
   * create failed or was skipped): lowers the expected creations by `n`.
   */
  creationObserved(key: string, n = 1): void {
    const r = this.records.get(key);
    if (r !== undefined) r.add -= n;
  }

  /**
   * The pod `podKey` was seen deleted (gone, or given a deletionTimestamp), or its delete failed. Each
   * expected pod lowers the count once, however often it is reported.
   */
  deletionObserved(key: string, podKey: string): void {
    const r = this.records.get(key);
    if (r === undefined || !r.deleting.delete(podKey)) return;
    r.del--;
  }

  /** Forgets `key` (its controller object is gone). */
  delete(key: string): void {
    this.records.delete(key);
  }

  /** The record, for tests and logs. */
  get(key: string): ExpectationsView | undefined {
    const r = this.records.get(key);
    return r === undefined
      ? undefined
      : { add: r.add, del: r.del, deleting: [...r.deleting], timestamp: r.timestamp };
  }
}
