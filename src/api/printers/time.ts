// Timestamps and durations for table cells. Everything here is arithmetic on values the caller passes
// in: RFC 3339 strings are parsed by hand (no Date, no clock), and "now" is always a parameter.

const MS_PER_SECOND = 1000;
const MS_PER_MINUTE = 60 * MS_PER_SECOND;
const MS_PER_HOUR = 60 * MS_PER_MINUTE;
const MS_PER_DAY = 24 * MS_PER_HOUR;

/** Days from 1970-01-01 to the given proleptic Gregorian date (month 1-12). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const shiftedMonth = month > 2 ? month - 3 : month + 9;
  const dayOfYear = Math.floor((153 * shiftedMonth + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146097 + dayOfEra - 719468;
}

/** The inverse of daysFromCivil. */
function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const dayOfEra = z - era * 146097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1;
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

const isLeap = (y: number): boolean => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysInMonth = (y: number, m: number): number =>
  m === 2 ? (isLeap(y) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** The instant Go's zero time.Time stands for (0001-01-01T00:00:00Z), which Kubernetes treats as unset. */
export const ZERO_TIME_MS = daysFromCivil(1, 1, 1) * MS_PER_DAY;

/** Milliseconds since the Unix epoch for an RFC 3339 string, or undefined when it is not one. */
export function parseRFC3339(value: string): number | undefined {
  const m = RFC3339.exec(value);
  if (m === null) return undefined;
  const [, ys, mos, ds, hs, mis, ss, frac, z, sign, ohs, oms] = m;
  const year = Number(ys);
  const month = Number(mos);
  const day = Number(ds);
  const hour = Number(hs);
  const minute = Number(mis);
  const second = Number(ss);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMs = 0;
  if (z === undefined) {
    const oh = Number(ohs);
    const om = Number(oms);
    if (oh > 23 || om > 59) return undefined;
    offsetMs = (sign === '-' ? -1 : 1) * (oh * MS_PER_HOUR + om * MS_PER_MINUTE);
  }
  const millis = frac === undefined ? 0 : Number(frac.slice(0, 3).padEnd(3, '0'));
  const ms =
    daysFromCivil(year, month, day) * MS_PER_DAY +
    hour * MS_PER_HOUR +
    minute * MS_PER_MINUTE +
    second * MS_PER_SECOND +
    millis -
    offsetMs;
  return ms;
}

/**
 * Milliseconds since the Unix epoch for a metav1.Time or MicroTime, or undefined when the value is
 * absent, null, malformed, or Go's zero time (all of which kube prints as unknown).
 */
export function parseTimestamp(value: unknown): number | undefined {
  const ms = typeof value === 'string' ? parseRFC3339(value) : undefined;
  return ms === ZERO_TIME_MS ? undefined : ms;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** RFC 3339 in UTC with whole seconds (`2024-05-01T12:00:00Z`), as metav1.Time serialises. */
export function formatTimestamp(ms: number): string {
  const days = Math.floor(ms / MS_PER_DAY);
  const rest = ms - days * MS_PER_DAY;
  const { year, month, day } = civilFromDays(days);
  const h = Math.floor(rest / MS_PER_HOUR);
  const mi = Math.floor((rest % MS_PER_HOUR) / MS_PER_MINUTE);
  const s = Math.floor((rest % MS_PER_MINUTE) / MS_PER_SECOND);
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(h)}:${pad(mi)}:${pad(s)}Z`;
}

/**
 * A short approximation of a duration with two or three significant figures, by the rules of
 * apimachinery's duration.HumanDuration: `45s`, `119s`, `2m5s`, `15m`, `3h20m`, `20h`, `3d4h`, `30d`,
 * `2y45d`, `9y`. Up to two seconds in the future is tolerated as clock skew (`0s`); further is `<invalid>`.
 */
export function humanDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '<invalid>';
  const seconds = Math.trunc(ms / MS_PER_SECOND);
  if (seconds < -1) return '<invalid>';
  if (seconds <= 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(ms / MS_PER_MINUTE);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(ms / MS_PER_HOUR);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}

/** Time elapsed since a timestamp, or `<unknown>` when it is unset (kube's translateTimestampSince). */
export function since(timestamp: unknown, nowMs: number): string {
  const t = parseTimestamp(timestamp);
  return t === undefined ? '<unknown>' : humanDuration(nowMs - t);
}
