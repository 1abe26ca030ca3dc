// Event validation for both APIs (pkg/apis/core/validation/events.go). Core v1 events get only the
// legacy rules; events.k8s.io/v1 events also the strict ones. Paths use the internal field names, as
// kube-apiserver reports them for both APIs (`involvedObject.namespace`, `message`), because both
// convert to one internal Event before validation.
import { FieldPath, type FieldError, invalid, required } from '../field-errors.js';
import { In, byteLength, isObj, jsonEqual } from './json.js';
import { isDNS1123Subdomain, isQualifiedName } from './names.js';
import { MICRO_TIME_MESSAGE, TIME_MESSAGE, isMicroTime, isRFC3339 } from './time.js';

const REPORTING_INSTANCE_LIMIT = 128;
const ACTION_LIMIT = 128;
const REASON_LIMIT = 128;
const NOTE_LIMIT = 1024;

/** The internal Event fields validation reads, taken from either API's JSON. */
interface EventView {
  readonly namespace: string;
  readonly involvedObject: unknown;
  readonly involvedNamespace: string;
  readonly eventTime: string;
  readonly reportingController: string;
  readonly reportingInstance: string;
  readonly action: string;
  readonly reason: string;
  readonly message: string;
  readonly type: string;
  readonly firstTimestamp: string;
  readonly lastTimestamp: string;
  readonly count: number;
  readonly source: unknown;
  readonly series: unknown;
  readonly related: unknown;
}

const root = (): FieldPath => FieldPath.root('');

function checkTime(r: In, key: string, micro: boolean, errs: FieldError[]): string {
  const v = r.s(key);
  if (v !== '' && !(micro ? isMicroTime(v) : isRFC3339(v))) {
    errs.push(invalid(r.p(key), v, micro ? MICRO_TIME_MESSAGE : TIME_MESSAGE));
  }
  return v;
}

function view(obj: Record<string, unknown>, v1: boolean, errs: FieldError[]): EventView {
  const r = new In(obj, root(), errs);
  const meta = In.at(obj['metadata'], FieldPath.root('metadata'), []);
  const regardingKey = v1 ? 'regarding' : 'involvedObject';
  const involved = r.obj(regardingKey);
  const sourceKey = v1 ? 'deprecatedSource' : 'source';
  const source = r.obj(sourceKey);
  const series = r.obj('series');
  if (series !== undefined) {
    series.int('count');
    checkTime(series, 'lastObservedTime', true, errs);
  }
  return {
    namespace: meta?.s('namespace') ?? '',
    involvedObject: r.raw(regardingKey) ?? null,
    involvedNamespace: involved?.s('namespace') ?? '',
    eventTime: checkTime(r, 'eventTime', true, errs),
    reportingController: r.s(v1 ? 'reportingController' : 'reportingComponent'),
    reportingInstance: r.s('reportingInstance'),
    action: r.s('action'),
    reason: r.s('reason'),
    message: r.s(v1 ? 'note' : 'message'),
    type: r.s('type'),
    firstTimestamp: checkTime(r, v1 ? 'deprecatedFirstTimestamp' : 'firstTimestamp', false, errs),
    lastTimestamp: checkTime(r, v1 ? 'deprecatedLastTimestamp' : 'lastTimestamp', false, errs),
    count: r.int(v1 ? 'deprecatedCount' : 'count') ?? 0,
    source: source === undefined ? null : source.v,
    series: series === undefined ? null : series.v,
    related: r.raw('related') ?? null,
  };
}

function legacy(e: EventView): FieldError[] {
  const errs: FieldError[] = [];
  const nsPath = FieldPath.root('involvedObject', 'namespace');
  if (e.eventTime === '') {
    if (e.involvedNamespace === '') {
      if (e.namespace !== '' && e.namespace !== 'default') {
        errs.push(invalid(nsPath, e.involvedNamespace, 'does not match event.namespace'));
      }
    } else if (e.namespace !== e.involvedNamespace) {
      errs.push(invalid(nsPath, e.involvedNamespace, 'does not match event.namespace'));
    }
  } else {
    if (e.involvedNamespace === '' && e.namespace !== 'default' && e.namespace !== 'kube-system') {
      errs.push(invalid(nsPath, e.involvedNamespace, 'does not match event.namespace'));
    }
    if (e.reportingController === '') errs.push(required('reportingController', ''));
    for (const m of isQualifiedName(e.reportingController))
      errs.push(invalid('reportingController', e.reportingController, m));
    const limited: [string, string, number][] = [
      ['reportingInstance', e.reportingInstance, REPORTING_INSTANCE_LIMIT],
      ['action', e.action, ACTION_LIMIT],
      ['reason', e.reason, REASON_LIMIT],
    ];
    for (const [path, value, limit] of limited) {
      if (value === '') errs.push(required(path, ''));
      if (byteLength(value) > limit) errs.push(invalid(path, '', `can have at most ${limit} characters`));
    }
    if (byteLength(e.message) > NOTE_LIMIT)
      errs.push(invalid('message', '', `can have at most ${NOTE_LIMIT} characters`));
  }
  if (e.namespace !== '')
    for (const m of isDNS1123Subdomain(e.namespace)) errs.push(invalid('namespace', e.namespace, m));
  return errs;
}

function validateSeries(e: EventView): FieldError[] {
  if (!isObj(e.series)) return [];
  const errs: FieldError[] = [];
  const count = typeof e.series['count'] === 'number' ? e.series['count'] : 0;
  if (count < 2) errs.push(invalid('series.count', '', 'should be at least 2'));
  const last = e.series['lastObservedTime'];
  if (typeof last !== 'string' || last === '') errs.push(required('series.lastObservedTime', ''));
  return errs;
}

/** Create: core v1 (`v1` false) gets the legacy rules only; events.k8s.io/v1 the strict ones too. */
export function validateEventCreate(obj: Record<string, unknown>, v1: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const e = view(obj, v1, errs);
  errs.push(...legacy(e));
  if (!v1) return errs;
  errs.push(...validateSeries(e));
  if (e.eventTime === '') errs.push(required('eventTime', ''));
  if (e.type !== 'Normal' && e.type !== 'Warning')
    errs.push(invalid('type', '', `has invalid value: ${e.type}`));
  if (e.firstTimestamp !== '') errs.push(invalid('firstTimestamp', '', 'needs to be unset'));
  if (e.lastTimestamp !== '') errs.push(invalid('lastTimestamp', '', 'needs to be unset'));
  if (e.count !== 0) errs.push(invalid('count', '', 'needs to be unset'));
  if (isObj(e.source) && ((e.source['component'] ?? '') !== '' || (e.source['host'] ?? '') !== '')) {
    errs.push(invalid('source', '', 'needs to be unset'));
  }
  return errs;
}

/** The fields an update of an events.k8s.io/v1 Event may not change, as kube's ValidateEventUpdate checks them. */
const IMMUTABLE_FIELDS = [
  'involvedObject',
  'reason',
  'message',
  'source',
  'firstTimestamp',
  'lastTimestamp',
  'count',
  'type',
  'eventTime',
  'action',
  'related',
  'reportingController',
  'reportingInstance',
] as const satisfies readonly (keyof EventView)[];

/** Update: legacy rules; for events.k8s.io/v1 also the series and the immutable fields. */
export function validateEventUpdate(
  obj: Record<string, unknown>,
  old: Record<string, unknown>,
  v1: boolean,
): FieldError[] {
  const errs: FieldError[] = [];
  const e = view(obj, v1, errs);
  errs.push(...legacy(e));
  if (!v1) return errs;
  const o = view(old, v1, []);
  if (!jsonEqual(e.series, o.series)) errs.push(...validateSeries(e));
  for (const path of IMMUTABLE_FIELDS) {
    if (!jsonEqual(e[path], o[path])) errs.push(invalid(path, e[path], 'field is immutable'));
  }
  return errs;
}
