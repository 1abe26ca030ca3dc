// Timestamps without a clock: RFC 3339 syntax and calendar ranges checked by hand (src/api may not
// use Date). metav1.Time is RFC 3339 with optional fractional seconds; metav1.MicroTime is written
// with six fraction digits, and we also accept the millisecond form some clients send.

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|[+-](\d{2}):(\d{2}))$/;

const daysIn = (y: number, m: number): number =>
  m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;

/** True for a well-formed RFC 3339 timestamp with valid calendar fields. */
export function isRFC3339(s: string): boolean {
  const m = RFC3339.exec(s);
  if (m === null) return false;
  const [y, mo, d, h, mi, sec] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i]));
  if (mo! < 1 || mo! > 12 || d! < 1 || d! > daysIn(y!, mo!)) return false;
  if (h! > 23 || mi! > 59 || sec! > 59) return false;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return false;
  return true;
}

/** A MicroTime: RFC 3339 with a fraction of 3 (milliseconds) or 6 (microseconds) digits, or none. */
export function isMicroTime(s: string): boolean {
  if (!isRFC3339(s)) return false;
  const frac = /\.(\d+)/.exec(s)?.[1];
  return frac === undefined || frac.length === 3 || frac.length === 6;
}

export const TIME_MESSAGE = 'must be an RFC 3339 timestamp (e.g. 2006-01-02T15:04:05Z)';
export const MICRO_TIME_MESSAGE =
  'must be an RFC 3339 timestamp with microsecond precision (e.g. 2006-01-02T15:04:05.000000Z)';
