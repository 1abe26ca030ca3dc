// An event recorder for the apiserver's own controllers: Warning Events in core/v1, which is what
// `kubectl describe` and `kubectl get events` read. Repeats of the same problem on the same object
// bump `count` and `lastTimestamp` on one Event (as client-go's recorder aggregates), so a repair loop
// that reports a problem every pass does not grow the event list without end.
import { createHash } from 'node:crypto';
import type { KObject } from '../api/object.js';
import { mustFindResource } from '../api/resources.js';
import { StatusError } from '../api/status.js';
import type { Logger } from '../runtime/logger.js';
import type { Registry, WriteContext } from './registry/registry.js';

const EVENTS = mustFindResource('', 'events');

export interface Regarding {
  readonly kind: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export interface EventSink {
  warning(regarding: Regarding, reason: string, action: string, note: string): Promise<void>;
}

export class EventRecorder implements EventSink {
  constructor(
    private readonly registry: Registry,
    private readonly component: string,
    private readonly instance: string,
    private readonly log: Logger,
  ) {}

  private ctx(): WriteContext {
    return { dryRun: false, fieldManager: this.component, fieldValidation: 'Ignore', warnings: [] };
  }

  async warning(regarding: Regarding, reason: string, action: string, note: string): Promise<void> {
    const digest = createHash('sha256')
      .update(`${regarding.uid}\0${reason}\0${note}\0${this.component}`)
      .digest('hex')
      .slice(0, 16);
    const name = `${regarding.name}.${digest}`;
    const ns = regarding.namespace === '' ? 'default' : regarding.namespace;
    const now = this.registry.nowTime();
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        let existing: KObject | undefined;
        try {
          existing = await this.registry.get(EVENTS, ns, name);
        } catch (err) {
          if (!(err instanceof StatusError && err.code === 404)) throw err;
        }
        try {
          if (existing === undefined) {
            await this.registry.create(
              EVENTS,
              ns,
              {
                apiVersion: 'v1',
                kind: 'Event',
                metadata: { name, namespace: ns },
                involvedObject: { ...regarding },
                reason,
                message: note,
                action,
                type: 'Warning',
                count: 1,
                firstTimestamp: now,
                lastTimestamp: now,
                source: { component: this.component },
                reportingComponent: this.component,
                reportingInstance: this.instance,
              },
              this.ctx(),
            );
          } else {
            const e = existing as KObject & { count?: number };
            await this.registry.update(
              EVENTS,
              ns,
              name,
              { ...e, count: (typeof e.count === 'number' ? e.count : 1) + 1, lastTimestamp: now },
              this.ctx(),
            );
          }
          return;
        } catch (err) {
          if (err instanceof StatusError && (err.code === 409 || err.code === 404)) continue;
          throw err;
        }
      }
    } catch (err) {
      this.log.warn('could not record an event', { key: `${ns}/${name}`, reason, err: String(err) });
    }
  }
}
