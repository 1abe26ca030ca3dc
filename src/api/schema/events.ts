// events.k8s.io/v1 Event: the structured event API that controllers write.
import { field, int32, microTime, str, time, always } from './build.js';
import { eventSeries, eventSource, objectReference } from './core.js';
import { kindSchema } from './meta.js';
import type { Schema } from './schema.js';

const EVENTS = 'io.k8s.api.events.v1';

export const event: Schema = kindSchema(
  `${EVENTS}.Event`,
  'An Event reports something that happened to an object, in the structured form controllers write.',
  {
    eventTime: always(microTime('When the event was first observed.')),
    series: field(
      { ...eventSeries(`${EVENTS}.EventSeries`), required: ['count', 'lastObservedTime'] },
      'Data about a series of repeated events.',
    ),
    reportingController: str('Controller that emitted the event, such as kubernetes.io/kubelet.'),
    reportingInstance: str('Instance of the controller that emitted the event.'),
    action: str('What was done, or failed, about the regarding object.'),
    reason: str('Short CamelCase reason for the action, machine-readable.'),
    regarding: always(field(objectReference, 'Object the event is about.')),
    related: field(objectReference, 'A second object involved, if any.'),
    note: str('Human-readable description of what happened.'),
    type: str('Normal or Warning.'),
    deprecatedSource: always(field(eventSource, 'The core/v1 source, for compatibility.')),
    deprecatedFirstTimestamp: always(time('The core/v1 firstTimestamp, for compatibility.')),
    deprecatedLastTimestamp: always(time('The core/v1 lastTimestamp, for compatibility.')),
    deprecatedCount: int32('The core/v1 count, for compatibility.'),
  },
);
