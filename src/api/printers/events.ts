// `kubectl get events`: LAST SEEN, TYPE, REASON, OBJECT, MESSAGE, with the name only under `-o wide`.
// kube-apiserver prints events.k8s.io/v1 Events by converting them to the core Event first, so both
// APIs share one printer here, fed by a per-API view of the fields it reads.
import type { KObject } from '../object.js';
import { int, obj, objOrUndefined, str, type Json } from './fields.js';
import { parseTimestamp, since } from './time.js';
import { NAME_COLUMN, column, wide, type Printer } from './types.js';

/** The fields the event printer reads, named as in the core/v1 Event. */
interface EventView {
  readonly name: string;
  readonly type: string;
  readonly reason: string;
  readonly message: string;
  readonly involvedObject: Json;
  readonly source: Json;
  readonly reportingController: string;
  readonly reportingInstance: string;
  readonly firstTimestamp: unknown;
  readonly lastTimestamp: unknown;
  readonly eventTime: unknown;
  readonly series: Json | undefined;
  readonly count: number;
}

/** Where each field of the view lives in an Event of one API. */
interface EventFieldNames {
  readonly message: string;
  readonly involvedObject: string;
  readonly source: string;
  readonly reportingController: string;
  readonly firstTimestamp: string;
  readonly lastTimestamp: string;
  readonly count: string;
}

const CORE_V1_NAMES: EventFieldNames = {
  message: 'message',
  involvedObject: 'involvedObject',
  source: 'source',
  reportingController: 'reportingComponent',
  firstTimestamp: 'firstTimestamp',
  lastTimestamp: 'lastTimestamp',
  count: 'count',
};

/** events.k8s.io/v1 mapped onto core/v1 names, as kube's conversion between the two does. */
const EVENTS_V1_NAMES: EventFieldNames = {
  message: 'note',
  involvedObject: 'regarding',
  source: 'deprecatedSource',
  reportingController: 'reportingController',
  firstTimestamp: 'deprecatedFirstTimestamp',
  lastTimestamp: 'deprecatedLastTimestamp',
  count: 'deprecatedCount',
};

const viewWith =
  (n: EventFieldNames) =>
  (ev: KObject): EventView => ({
    name: ev.metadata.name ?? '',
    type: str(ev['type']),
    reason: str(ev['reason']),
    message: str(ev[n.message]),
    involvedObject: obj(ev[n.involvedObject]),
    source: obj(ev[n.source]),
    reportingController: str(ev[n.reportingController]),
    reportingInstance: str(ev['reportingInstance']),
    firstTimestamp: ev[n.firstTimestamp],
    lastTimestamp: ev[n.lastTimestamp],
    eventTime: ev['eventTime'],
    series: objOrUndefined(ev['series']),
    count: int(ev[n.count]),
  });

const coreView = viewWith(CORE_V1_NAMES);
const eventsV1View = viewWith(EVENTS_V1_NAMES);

/** `kubelet, node-1`: the component, then the host when there is one. */
function eventSource(e: EventView): string {
  const component = str(e.source['component']) || e.reportingController;
  const host = str(e.source['host']) || e.reportingInstance;
  return host === '' ? component : `${component}, ${host}`;
}

function eventCells(e: EventView, nowMs: number): unknown[] {
  const firstSeen =
    parseTimestamp(e.firstTimestamp) !== undefined
      ? since(e.firstTimestamp, nowMs)
      : since(e.eventTime, nowMs);
  let lastSeen = parseTimestamp(e.lastTimestamp) !== undefined ? since(e.lastTimestamp, nowMs) : firstSeen;
  let count = e.count;
  if (e.series !== undefined) {
    lastSeen = since(e.series['lastObservedTime'], nowMs);
    count = int(e.series['count']);
  } else if (count === 0) {
    // An event reported once through the new API carries no count.
    count = 1;
  }
  const kind = str(e.involvedObject['kind']).toLowerCase();
  const target = str(e.involvedObject['name']);
  return [
    lastSeen,
    e.type,
    e.reason,
    target === '' ? kind : `${kind}/${target}`,
    str(e.involvedObject['fieldPath']),
    eventSource(e),
    e.message.trim(),
    firstSeen,
    count,
    e.name,
  ];
}

const columns = [
  column('Last Seen', 'Time since the event was last observed.'),
  column('Type', 'The type of the event: Normal or Warning.'),
  column('Reason', 'Why the event was reported, in UpperCamelCase.'),
  column('Object', 'The kind and name of the object the event is about.'),
  wide('Subobject', 'The part of the object the event is about, such as one container of a pod.'),
  wide('Source', 'The component, and host, that reported the event.'),
  column('Message', 'A human-readable description of the event.'),
  wide('First Seen', 'Time since the event was first observed.'),
  wide('Count', 'How many times the event has occurred.'),
  { ...NAME_COLUMN, priority: 1 },
];

export const coreEventPrinter: Printer = {
  columns,
  cells: (ev, nowMs) => eventCells(coreView(ev), nowMs),
};

export const eventsV1Printer: Printer = {
  columns,
  cells: (ev, nowMs) => eventCells(eventsV1View(ev), nowMs),
};
