// Tolerant readers for stored JSON, and the label and selector formats kube prints. A printer never
// throws on a malformed object: a missing or mistyped field reads as its zero value.
import { isPlainObject } from '../json.js';

export type Json = Record<string, unknown>;

const EMPTY: Json = Object.freeze({}) as Json;

export const obj = (v: unknown): Json => (isPlainObject(v) ? v : EMPTY);
export const objOrUndefined = (v: unknown): Json | undefined => (isPlainObject(v) ? v : undefined);
export const list = (v: unknown): readonly unknown[] => (Array.isArray(v) ? v : []);
export const objects = (v: unknown): Json[] => list(v).map(obj);
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
/** An integer field; anything that is not a finite number reads as 0. */
export const int = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0);
export const strings = (v: unknown): string[] => list(v).filter((x): x is string => typeof x === 'string');

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
export const sortedStrings = (xs: Iterable<string>): string[] => [...xs].sort(byCodeUnit);

/** `a=1,b=2` with keys sorted, or `<none>` (labels.FormatLabels). */
export function formatLabels(v: unknown): string {
  const labels = obj(v);
  const text = sortedStrings(Object.keys(labels))
    .map((k) => `${k}=${str(labels[k])}`)
    .join(',');
  return text === '' ? '<none>' : text;
}

interface Requirement {
  readonly key: string;
  readonly text: string;
}

/**
 * A metav1.LabelSelector as its selector string (`app=web,tier in (a,b),!legacy`), requirements sorted
 * by key and set values sorted. An absent or empty selector is the empty string; one kube would
 * reject is `<invalid>`.
 */
export function formatLabelSelector(v: unknown): string {
  const selector = objOrUndefined(v);
  if (selector === undefined) return '';
  const reqs: Requirement[] = [];
  const matchLabels = obj(selector['matchLabels']);
  for (const key of Object.keys(matchLabels)) reqs.push({ key, text: `${key}=${str(matchLabels[key])}` });
  for (const expr of list(selector['matchExpressions'])) {
    const e = objOrUndefined(expr);
    if (e === undefined) return '<invalid>';
    const key = str(e['key']);
    const values = strings(e['values']);
    switch (e['operator']) {
      case 'In':
      case 'NotIn': {
        if (values.length === 0) return '<invalid>';
        const op = e['operator'] === 'In' ? 'in' : 'notin';
        reqs.push({ key, text: `${key} ${op} (${sortedStrings(values).join(',')})` });
        break;
      }
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) return '<invalid>';
        reqs.push({ key, text: e['operator'] === 'Exists' ? key : `!${key}` });
        break;
      default:
        return '<invalid>';
    }
  }
  // Array.prototype.sort is stable, as Go's sort is for selectors this small.
  return reqs
    .sort((a, b) => byCodeUnit(a.key, b.key))
    .map((r) => r.text)
    .join(',');
}

/** Container names and images of a pod template, each comma-joined (kube's layoutContainerCells). */
export function containerCells(containers: unknown): [names: string, images: string] {
  const cs = objects(containers);
  return [cs.map((c) => str(c['name'])).join(','), cs.map((c) => str(c['image'])).join(',')];
}

/** `host:port`, bracketing IPv6 literals (net.JoinHostPort). */
export const joinHostPort = (host: string, port: number): string =>
  host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;

/** The first `max` entries joined by commas, then ` + N more...` for the rest. */
export function firstWithMore(items: readonly string[], max = 3): string {
  const shown = items.slice(0, max).join(',');
  return items.length > max ? `${shown} + ${items.length - max} more...` : shown;
}
