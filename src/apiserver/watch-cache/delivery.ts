// What the watch cache hands its watchers: one event per change that passes a watcher's filter, with
// an object that enters or leaves the filter as ADDED or DELETED, as kube-apiserver's cacher does.
import type { ResourceInfo } from '../../api/resources.js';
import type { FieldSelector } from '../../core/selectors/fields.js';
import { matchesFields } from '../../core/selectors/fields.js';
import { matchesLabels } from '../../api/label-match.js';
import type { LabelSelector } from '../../core/selectors/labels.js';
import { restamp, type CachedObject } from './cached-object.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface CacheEvent {
  readonly revision: number;
  readonly resource: ResourceInfo;
  readonly type: 'PUT' | 'DELETE';
  /** PUT: the new object. DELETE: the last state, re-stamped with the delete's revision. */
  readonly cur: CachedObject;
  readonly prev: CachedObject | undefined;
  /** prev re-stamped with this event's revision: what a watcher gets when the object leaves its filter. */
  prevAtRevision?: CachedObject;
}

export interface WatchFilter {
  readonly namespace?: string;
  readonly label: LabelSelector;
  readonly field: FieldSelector;
}

export interface WatchSink {
  /**
   * One event for this watcher. Must not throw. `more`: further events of the same store batch follow in
   * this turn, so the sink may hold this one back and write them together.
   */
  deliver(type: WatchEventType, obj: CachedObject, more?: boolean): void;
  /** The cache can no longer serve this watcher (re-initialised); the client must relist. */
  expire(message: string): void;
}

export interface Watcher {
  readonly resource: ResourceInfo;
  readonly filter: WatchFilter;
  readonly sink: WatchSink;
}

export const matches = (f: WatchFilter, o: CachedObject): boolean =>
  (f.namespace === undefined || f.namespace === '' || o.namespace === f.namespace) &&
  matchesLabels(f.label, o.labels) &&
  matchesFields(f.field, o.fields);

export function deliverTo(w: Watcher, ev: CacheEvent, more = false): void {
  const f = w.filter;
  if (f.namespace !== undefined && f.namespace !== '' && ev.cur.namespace !== f.namespace) return;
  const prevPasses = ev.prev !== undefined && matches(f, ev.prev);
  if (ev.type === 'DELETE') {
    if (prevPasses) w.sink.deliver('DELETED', ev.cur, more);
    return;
  }
  const curPasses = matches(f, ev.cur);
  if (curPasses) w.sink.deliver(prevPasses ? 'MODIFIED' : 'ADDED', ev.cur, more);
  else if (prevPasses) {
    ev.prevAtRevision ??= restamp(ev.resource, ev.prev!, ev.revision);
    w.sink.deliver('DELETED', ev.prevAtRevision, more);
  }
}
