// Scheduler throughput: bindings in 1-s bins over the busy window.

/** How many nodes run 0, 1, 2 … pods. */
export function histogram(counts: number[], nodes: number): Record<number, number> {
  const h: Record<number, number> = {};
  if (nodes > counts.length) h[0] = nodes - counts.length;
  for (const c of counts) h[c] = (h[c] ?? 0) + 1;
  return h;
}

/** Binds per 1-s bin from the first to the last binding (the last, partial bin left out). */
export function bindBins(boundAt: number[]): number[] {
  if (boundAt.length === 0) return [];
  const s = [...boundAt].sort((a, b) => a - b);
  const first = s[0]!;
  const full = Math.floor((s[s.length - 1]! - first) / 1000);
  const bins = new Array<number>(Math.max(full, 0)).fill(0);
  for (const t of s) {
    const i = Math.floor((t - first) / 1000);
    if (i < full) bins[i]!++;
  }
  return bins;
}
