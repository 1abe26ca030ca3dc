// Reading restore text back in tests: its lines per table, one chain's rules, declared and deleted chains.

/** The text's lines per table. */
export function tables(text: string): { nat: string[]; filter: string[] } {
  const out = { nat: [] as string[], filter: [] as string[] };
  let cur: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '*nat') cur = out.nat;
    else if (line === '*filter') cur = out.filter;
    else if (line !== '' && line !== 'COMMIT') cur.push(line);
  }
  return out;
}

/** The rules of one chain (the whole `-A` lines), in order. */
export const rulesOf = (lines: readonly string[], chain: string): string[] =>
  lines.filter((l) => l.startsWith(`-A ${chain} `));

/** The chains a table section declares. */
export const declared = (lines: readonly string[]): string[] =>
  lines.filter((l) => l.startsWith(':')).map((l) => l.slice(1).split(' ')[0]!);

/** Chain names in the order a render declares per-service chains: descending (see Render.finish). */
export const descending = (names: readonly string[]): string[] =>
  [...names].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));

export const deletedIn = (lines: readonly string[]): string[] =>
  lines.filter((l) => l.startsWith('-X ')).map((l) => l.slice(3));
