// A slice kept as text that its served form is cut from, without parsing it again. Pure.
//
// The wrapper re-serves every slice of a Service whose view changed (a node relabel: about a hundred at
// once). Parsing each slice, filtering it and serializing it again was most of that work; instead, the
// slice is split once, when it arrives, into the JSON before and after its `endpoints` value and one JSON
// fragment per endpoint, each tagged with the endpoint's first address (its id in the view). The served
// form is then the head, the kept fragments and the tail, joined: the same bytes servedSlice() and
// JSON.stringify would give (served-text.test.ts checks this for every kind of view and slice).
//
// The text is lines: head, tail, the slice's pool (JSON), then one line per endpoint:
//   <first address as JSON, or nothing>\t<the endpoint's JSON>[\t<the same without its hints>]
// JSON text never holds a raw newline or tab (JSON.stringify escapes them in strings), so the separators
// are unambiguous. Slices the engine treats specially (`default/kubernetes`, whose annotations may
// rewrite it) and slices without an endpoints array are kept whole and served through servedSlice().
import { isPlainObject as isObj } from '../../api/json.js';
import type { KObject } from '../../api/object.js';
import { LABEL_SERVICE_NAME } from '../endpointslices/types.js';
import { slicePool } from './endpoints.js';
import type { TopologyView } from './view.js';
import { isKubernetes, keptIds, servedSlice, viewFilters, type ServeOptions } from './served.js';

/** The first character of a slice kept whole (its JSON follows). */
const WHOLE = '\u0001';

/** The slice (its stored form, as an object) as text to serve from. */
export function sliceText(slice: KObject): string {
  const endpoints = slice['endpoints'];
  if (!Array.isArray(endpoints) || isKubernetes(slice, slice.metadata.labels?.[LABEL_SERVICE_NAME]))
    return WHOLE + JSON.stringify(slice);
  let head = '{';
  let tail = '';
  let after = false;
  for (const [k, v] of Object.entries(slice)) {
    if (k === 'endpoints') {
      head += `${head.length > 1 ? ',' : ''}"endpoints":`;
      after = true;
      continue;
    }
    const value = JSON.stringify(v);
    if (value === undefined) continue;
    const piece = `${JSON.stringify(k)}:${value}`;
    if (after) tail += `,${piece}`;
    else head += `${head.length > 1 ? ',' : ''}${piece}`;
  }
  const lines = [head, `${tail}}`, JSON.stringify(slicePool(slice))];
  for (const e of endpoints as unknown[]) {
    const full = JSON.stringify(e) ?? 'null';
    const first: unknown = isObj(e) && Array.isArray(e['addresses']) ? e['addresses'][0] : undefined;
    if (typeof first !== 'string') {
      lines.push(`\t${full}`);
      continue;
    }
    let line = `${JSON.stringify(first)}\t${full}`;
    if (isObj(e) && 'hints' in e) {
      const { hints: _hints, ...rest } = e;
      line += `\t${JSON.stringify(rest)}`;
    }
    lines.push(line);
  }
  return lines.join('\n');
}

/** The id part of an endpoint line, decoded. */
const decodeId = (s: string): string => (s.includes('\\') ? (JSON.parse(s) as string) : s.slice(1, -1));

/**
 * The slice's served form (JSON), given sliceText()'s text and its Service's view (undefined: no Service):
 * JSON.stringify(servedSlice(slice, view)).
 */
export function servedSliceText(
  text: string,
  view: TopologyView | undefined,
  opts: ServeOptions = {},
): string {
  if (text.startsWith(WHOLE))
    return JSON.stringify(servedSlice(JSON.parse(text.slice(1)) as KObject, view, opts));
  const lines = text.split('\n');
  const kept: string[] = [];
  if (!viewFilters(view)) {
    const gone = view?.unhealthy?.ids;
    const at = gone === undefined ? '' : `${JSON.parse(lines[2]!) as string}/`;
    for (let i = 3; i < lines.length; i++) {
      const line = lines[i]!;
      const a = line.indexOf('\t');
      if (gone !== undefined && a > 0 && gone.has(at + decodeId(line.slice(0, a)))) continue;
      const b = line.indexOf('\t', a + 1);
      kept.push(b < 0 ? line.slice(a + 1) : line.slice(a + 1, b));
    }
  } else {
    const ids = keptIds(view!);
    const prefix = `${JSON.parse(lines[2]!) as string}/`;
    for (let i = 3; i < lines.length; i++) {
      const line = lines[i]!;
      const a = line.indexOf('\t');
      if (a === 0 || !ids.has(prefix + decodeId(line.slice(0, a)))) continue;
      const b = line.indexOf('\t', a + 1);
      // The hintless fragment when there is one: a filtered slice loses its hints.
      kept.push(b < 0 ? line.slice(a + 1) : line.slice(b + 1));
    }
  }
  return `${lines[0]!}[${kept.join(',')}]${lines[1]!}`;
}

// What changes upstream with every change to a Service's endpoints, wherever they are: the slice's
// generation and the controllers' trigger time (an annotation that is set, changed or removed). A change
// to an endpoint this node is not served moves them, and nothing else of its served form.

/** The end of a run of digits starting at `i`, or -1 when there is none. */
function digitsEnd(s: string, i: number): number {
  let j = i;
  while (j < s.length && s.charCodeAt(j) >= 48 && s.charCodeAt(j) <= 57) j++;
  return j > i ? j : -1;
}

/** The end of a JSON string without escapes starting at `i`, or -1 when there is none. */
function plainStringEnd(s: string, i: number): number {
  if (s[i] !== '"') return -1;
  const close = s.indexOf('"', i + 1);
  return close < 0 || s.slice(i + 1, close).includes('\\') ? -1 : close + 1;
}

const emptyObjectEnd = (s: string, i: number): number => (s.startsWith('{}', i) ? i + 2 : -1);

/**
 * `json` without every member `key: value` (key with its quotes and colon; `valueEnd` finds where the
 * value ends, or -1 when it is not the kind to cut), commas kept right. A match must follow `{` or `,`:
 * inside a string every quote is escaped, so a key found there follows a backslash and is left alone.
 */
function cutMember(json: string, key: string, valueEnd: (s: string, i: number) => number): string {
  let s = json;
  let from = 0;
  for (;;) {
    const i = s.indexOf(key, from);
    if (i < 0) return s;
    const before = s[i - 1];
    const end = before === '{' || before === ',' ? valueEnd(s, i + key.length) : -1;
    if (end < 0) {
      from = i + 1;
      continue;
    }
    if (before === ',') s = s.slice(0, i - 1) + s.slice(end);
    else s = s.slice(0, i) + s.slice(s[end] === ',' ? end + 1 : end);
    from = i - 1;
  }
}

/**
 * A served slice's or Endpoints' JSON (as JSON.stringify writes it) without what does not count as a
 * change for the node: `metadata.generation` and the `endpoints.kubernetes.io/last-change-trigger-time`
 * annotation (and `annotations` itself when that was all it held). Two forms count as the same exactly
 * when their results are equal.
 */
export function servedContent(form: string): string {
  const s = cutMember(form, '"generation":', digitsEnd);
  const t = cutMember(s, '"endpoints.kubernetes.io/last-change-trigger-time":', plainStringEnd);
  return cutMember(t, '"annotations":', emptyObjectEnd);
}
