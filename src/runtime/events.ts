// An event recorder for controllers that talk to an API server through the Client: core/v1 Events, which
// `kubectl describe` and `kubectl get events` read. Like client-go's recorder, a repeat of the same event
// (same object, type, reason, message) bumps `count` and `lastTimestamp` on the Event already written
// instead of writing a new one. Recording never throws: an event that cannot be written is reported to
// onError and dropped, so a failing event write never fails a reconcile.
import type { KObject } from '../api/object.js';
import { mustFindResource } from '../api/resources.js';
import { isApiError, type Client } from './client.js';

const EVENTS = mustFindResource('', 'events');
const MAX_REMEMBERED = 4096;

export interface EventRecorderOptions {
  /** `source.component` and `reportingComponent`, e.g. "endpoint-slice-controller". */
  readonly component: string;
  readonly instance?: string;
  readonly now?: () => Date;
  readonly onError?: (err: unknown) => void;
}

/** The object an Event is about. Listed objects carry no kind, so it is given explicitly. */
export interface EventRegarding {
  readonly kind: string;
  readonly apiVersion: string;
  readonly namespace?: string;
  readonly name: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
}

export const regarding = (kind: string, apiVersion: string, obj: KObject): EventRegarding => ({
  kind,
  apiVersion,
  name: obj.metadata.name ?? '',
  ...(obj.metadata.namespace === undefined ? {} : { namespace: obj.metadata.namespace }),
  ...(obj.metadata.uid === undefined ? {} : { uid: obj.metadata.uid }),
  ...(obj.metadata.resourceVersion === undefined ? {} : { resourceVersion: obj.metadata.resourceVersion }),
});

interface Seen {
  readonly name: string;
  readonly namespace: string;
  count: number;
}

export class ClientEventRecorder {
  private readonly seen = new Map<string, Seen>();
  private readonly now: () => Date;
  /**
   * Makes each Event name of this recorder unique within its millisecond (client-go uses nanoseconds).
   * It starts at random, so recorders of one process (one per controller) do not walk the same suffixes.
   */
  private seq = Math.floor(Math.random() * 1_000_000);

  constructor(
    private readonly client: Client,
    private readonly o: EventRecorderOptions,
  ) {
    this.now = o.now ?? (() => new Date());
  }

  async record(
    about: EventRegarding,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void> {
    const namespace = about.namespace === undefined || about.namespace === '' ? 'default' : about.namespace;
    const key = `${about.uid ?? ''}\0${namespace}/${about.name}\0${type}\0${reason}\0${message}`;
    const now = this.now();
    const timestamp = `${now.toISOString().slice(0, 19)}Z`;
    try {
      const seen = this.seen.get(key);
      if (seen !== undefined) {
        try {
          await this.client.patch(EVENTS, seen.namespace, seen.name, 'merge', {
            count: seen.count + 1,
            lastTimestamp: timestamp,
          });
          seen.count++;
          this.seen.delete(key); // most recently used last
          this.seen.set(key, seen);
          return;
        } catch (err) {
          if (!isApiError(err, 404)) throw err;
          this.seen.delete(key); // the Event expired or was deleted: write a new one
        }
      }
      // The suffix was once the number of remembered events: several events recorded in one millisecond
      // before any of their writes came back (a ReplicaSet's burst of pod creations) got one name, and all
      // but the first were refused as AlreadyExists and lost. A name another recorder (another process)
      // took first is retried once with the next suffix.
      const event = (name: string): KObject => ({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: { ...about },
        reason,
        message,
        type,
        count: 1,
        firstTimestamp: timestamp,
        lastTimestamp: timestamp,
        source: { component: this.o.component },
        reportingComponent: this.o.component,
        reportingInstance: this.o.instance ?? '',
      });
      let name = this.nameFor(about.name, now);
      try {
        await this.client.create(EVENTS, namespace, event(name));
      } catch (err) {
        if (!isApiError(err, 409) || err.reason !== 'AlreadyExists') throw err;
        name = this.nameFor(about.name, now);
        await this.client.create(EVENTS, namespace, event(name));
      }
      this.seen.set(key, { name, namespace, count: 1 });
      if (this.seen.size > MAX_REMEMBERED) this.seen.delete(this.seen.keys().next().value!);
    } catch (err) {
      this.o.onError?.(err);
    }
  }

  private nameFor(objectName: string, now: Date): string {
    this.seq = (this.seq + 1) % 1_000_000;
    return `${objectName}.${(BigInt(now.getTime()) * 1_000_000n + BigInt(this.seq)).toString(16)}`;
  }
}
