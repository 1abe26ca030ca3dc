// Reading the nftables mode's endpoint ranges back in tests: a balancing rule names a range of an
// endpoint map (`numgen random mod K offset BASE map @endpoints-N`, nftables-slots.ts); resolved, it shows
// the endpoints it picks from, whatever range a history of renders allocated.

const SLOT_RULE = /numgen random mod (\d+) offset (\d+) map @(\S+)$/;

/**
 * `rule` with its endpoint range written out as `numgen random mod K map { 0 : ENDPOINT, … }`; `element`
 * looks an element up (MISSING when absent), `used` collects `map key` of each element picked.
 */
export function resolveSlots(
  rule: string,
  element: (map: string, key: string) => string | undefined,
  used?: Set<string>,
): string {
  return rule.replace(SLOT_RULE, (_all, k: string, base: string, map: string) => {
    const picks: string[] = [];
    for (let i = 0; i < Number(k); i++) {
      const key = String(Number(base) + i);
      used?.add(`${map} ${key}`);
      picks.push(`${i} : ${element(map, key) ?? 'MISSING'}`);
    }
    return `numgen random mod ${k} map { ${picks.join(', ')} }`;
  });
}
