// A resource quantity ("4", "3500m", "1.5", "2k", "1Ki", "5e3") as whole milli-units, rounded up, as
// apimachinery's Quantity.MilliValue gives it. Exact: the arithmetic is on bigint, so "0.1" is 100, not
// 100.00000000000001 rounded up to 101.

const DECIMAL_SUFFIX: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_SUFFIX: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

const QUANTITY = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(.*)$/;

/**
 * Milli-units of the quantity, rounded away from zero; undefined when the text is not a quantity (one number,
 * optionally signed, with at most one suffix: n u m k M G T P E, Ki Mi Gi Ti Pi Ei, or an exponent e<n>).
 */
export function parseMilliValue(text: string): bigint | undefined {
  const m = QUANTITY.exec(text);
  if (m === null) return undefined;
  const [, sign = '', whole = '', fraction = '', suffix = ''] = m;
  if (whole === '' && fraction === '') return undefined;
  let exp10 = -fraction.length + 3; // ×1000: milli-units
  let exp2 = 0;
  if (Object.hasOwn(DECIMAL_SUFFIX, suffix)) exp10 += DECIMAL_SUFFIX[suffix]!;
  else if (Object.hasOwn(BINARY_SUFFIX, suffix)) exp2 = BINARY_SUFFIX[suffix]!;
  else {
    const e = /^[eE]([+-]?[0-9]+)$/.exec(suffix);
    if (e === null) return undefined;
    exp10 += Number(e[1]);
  }
  let value = BigInt(whole + fraction) << BigInt(exp2);
  if (exp10 >= 0) value *= 10n ** BigInt(exp10);
  else {
    const d = 10n ** BigInt(-exp10);
    value = (value + d - 1n) / d; // ceiling, value ≥ 0
  }
  return sign === '-' ? -value : value;
}
