// Store keys in sorted order: what the watch cache's lists walk.

export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** First index whose key is >= key (or > key when `strict`). */
export function lowerBound(keys: readonly string[], key: string, strict: boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid]!;
    if (k < key || (strict && k === key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
