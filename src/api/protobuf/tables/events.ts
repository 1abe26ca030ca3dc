// k8s.io/api/events/v1 Event (field numbers from its generated.proto): what client-go's event
// recorder (kube-proxy's birth cry among them) posts.
import { message } from '../decode.js';
import { eventSource, objectReference } from './core.js';
import { objectMeta } from './meta.js';

const EVENTS = 'k8s.io.api.events.v1';

const eventSeries = message(`${EVENTS}.EventSeries`, {
  1: ['count', 'int32', 'keep'],
  2: ['lastObservedTime', 'microTime'],
});

export const event = message(`${EVENTS}.Event`, {
  1: ['metadata', objectMeta],
  2: ['eventTime', 'microTime'],
  3: ['series', eventSeries],
  4: ['reportingController', 'string'],
  5: ['reportingInstance', 'string'],
  6: ['action', 'string'],
  7: ['reason', 'string'],
  8: ['regarding', objectReference],
  9: ['related', objectReference],
  10: ['note', 'string'],
  11: ['type', 'string'],
  12: ['deprecatedSource', eventSource],
  13: ['deprecatedFirstTimestamp', 'time'],
  14: ['deprecatedLastTimestamp', 'time'],
  15: ['deprecatedCount', 'int32'],
});
