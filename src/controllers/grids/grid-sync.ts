// What the ServiceGrid and DeploymentGrid controllers share: carrying out a core/grids plan, writing
// the grid's status, and turning new problems into Events.
//
// Writes go to the API server as compare-and-swap updates of the live object's resourceVersion, never
// of a cached object (the plan builds fresh objects). An adoption first re-reads the grid: a grid
// deleted and re-created under the same name has a new UID, and must not adopt for the old one
// (controller-ref manager's recheck, as upstream). A failed write becomes a CreateError / UpdateError /
// DeleteError condition and a Warning Event; the reconcile then throws, so the key is retried with
// backoff. A write that finds the server ahead of the cache (AlreadyExists, Conflict) is not a failure:
// the newer object's event requeues the grid. Events are emitted when a condition appears or its
// message changes, not on every retry.
import type { KObject } from '../../api/object.js';
import type { ResourceInfo } from '../../api/resources.js';
import {
  canonical,
  conditionsOf,
  type Condition,
  type Grid,
  type WriteErrorType,
} from '../../core/grids/objects.js';
import type { GridAction } from '../../core/grids/service-grid.js';
import { isApiError, type Client } from '../../runtime/client.js';
import { regarding, type ClientEventRecorder } from '../../runtime/events.js';
import { errText } from '../../api/err-text.js';

export interface Failure {
  readonly type: WriteErrorType;
  readonly message: string;
}

export interface WriteResult {
  /** The server's answer to each create or update, by object name. */
  readonly written: Map<string, KObject>;
  /** Names deleted (or found gone). */
  readonly deleted: Set<string>;
  readonly failures: Failure[];
}

/**
 * A write that lost to a newer state the cache has not shown yet: the object already exists (created
 * by this controller a moment ago, its event still on the way), or its resourceVersion or UID
 * precondition no longer holds. Not a failure: the newer object's event requeues the grid, which is
 * then planned against it. (kube's ReplicaSet controller uses create expectations for the same gap.)
 */
const isStale = (err: unknown): boolean => isApiError(err, 409);

/** RFC 3339 to the second, as metav1.Time serializes. */
export const nowRFC3339 = (): string => `${new Date().toISOString().slice(0, 19)}Z`;

export class GridWriter {
  constructor(
    private readonly client: Client,
    private readonly gridResource: ResourceInfo,
    private readonly target: ResourceInfo,
    private readonly kind: string,
    private readonly events: ClientEventRecorder | undefined,
    /** Writes in flight at once within one grid's reconcile. */
    private readonly parallelism = 8,
  ) {}

  /** Carries out the plan's actions; failures are collected, not thrown. */
  async apply(grid: Grid, actions: readonly GridAction[]): Promise<WriteResult> {
    const result: WriteResult = { written: new Map(), deleted: new Set(), failures: [] };
    let adoptable: boolean | undefined;
    const canAdopt = async (): Promise<boolean> => {
      adoptable ??= await this.gridStillSame(grid);
      return adoptable;
    };
    const one = async (a: GridAction): Promise<void> => {
      const ns = grid.metadata.namespace ?? 'default';
      if (a.op === 'create') {
        try {
          result.written.set(
            a.object.metadata.name ?? '',
            await this.client.create(this.target, ns, a.object),
          );
        } catch (err) {
          if (isStale(err)) return;
          result.failures.push({
            type: 'CreateError',
            message: `create ${this.kind} ${a.object.metadata.name}: ${errText(err)}`,
          });
        }
        return;
      }
      if (a.op === 'update') {
        if (a.adopt && !(await canAdopt())) return;
        try {
          result.written.set(a.object.metadata.name ?? '', await this.client.update(this.target, a.object));
        } catch (err) {
          if (isStale(err)) return;
          result.failures.push({
            type: 'UpdateError',
            message: `update ${this.kind} ${a.object.metadata.name}: ${errText(err)}`,
          });
        }
        return;
      }
      const name = a.op === 'delete' ? a.name : (a.object.metadata.name ?? '');
      try {
        await this.client.delete(this.target, ns, name, { preconditions: { uid: a.uid } });
        result.deleted.add(name);
      } catch (err) {
        if (isApiError(err, 404)) result.deleted.add(name);
        else if (isStale(err)) return;
        else {
          result.failures.push({
            type: 'DeleteError',
            message: `delete ${this.kind} ${name}: ${errText(err)}`,
          });
          return;
        }
      }
      if (a.op === 'recreate') {
        try {
          result.written.set(name, await this.client.create(this.target, ns, a.object));
        } catch (err) {
          // The old object may still be finalizing; the next pass creates it.
          result.failures.push({
            type: 'CreateError',
            message: `create ${this.kind} ${name}: ${errText(err)}`,
          });
        }
      }
    };
    const queue = [...actions];
    const workers = Array.from({ length: Math.min(this.parallelism, queue.length) }, async () => {
      for (let a = queue.shift(); a !== undefined; a = queue.shift()) await one(a);
    });
    await Promise.all(workers);
    return result;
  }

  /** The grid as the server has it now is the one the plan was made for (same UID, not deleting). */
  private async gridStillSame(grid: Grid): Promise<boolean> {
    try {
      const live = await this.client.get(
        this.gridResource,
        grid.metadata.namespace ?? '',
        grid.metadata.name ?? '',
      );
      return live.metadata.uid === grid.metadata.uid && live.metadata.deletionTimestamp === undefined;
    } catch (err) {
      if (isApiError(err, 404)) return false;
      throw err;
    }
  }

  /**
   * Writes the status when it differs from the cached grid's (a compare-and-swap on the cached
   * resourceVersion: a conflict means a newer grid is on its way, whose event requeues the key), and emits a
   * Warning Event for each False/True problem condition that is new or says something new.
   */
  async writeStatus(
    grid: Grid,
    status: Record<string, unknown>,
    warnings: readonly Condition[],
  ): Promise<void> {
    const before = conditionsOf(grid.status);
    if (this.events !== undefined) {
      for (const c of warnings) {
        const old = before.find((x) => x.type === c.type);
        if (old?.status === c.status && old.reason === c.reason && old.message === c.message) continue;
        void this.events.record(
          regarding(this.kindOfGrid(), 'superedge.io/v1', grid),
          'Warning',
          c.type === 'Ready' || c.type === 'UnitsFailed' ? eventReasonOf(c) : c.type,
          c.message,
        );
      }
    }
    if (JSON.stringify(canonical(grid.status ?? {})) === JSON.stringify(canonical(status))) return;
    const { managedFields: _m, ...metadata } = grid.metadata;
    try {
      await this.client.update(this.gridResource, { ...grid, metadata, status }, 'status');
    } catch (err) {
      // Gone: nothing to report. Conflict: a newer grid is on its way, and its event requeues the key.
      if (isApiError(err, 404) || isApiError(err, 409)) return;
      throw err;
    }
  }

  private kindOfGrid(): string {
    return this.gridResource.kind;
  }
}

/** SuperEdge names the empty-key Event `Empty`; the other reasons are the conditions' own. */
const eventReasonOf = (c: Condition): string => (c.reason === 'EmptyGridKey' ? 'Empty' : c.reason);

/** Ready=False reasons that need a person (the others are progress, or a failure with its own condition). */
const PROBLEM_REASONS = new Set(['EmptyGridKey', 'InvalidName', 'OwnedByAnotherController']);

/** The conditions worth a Warning Event: a problem that needs a person, a failed unit, a failed write. */
export function warningsOf(status: Record<string, unknown>): Condition[] {
  return conditionsOf(status).filter((c) =>
    c.type === 'Ready' ? c.status === 'False' && PROBLEM_REASONS.has(c.reason) : c.status === 'True',
  );
}
