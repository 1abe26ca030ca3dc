// Edge autonomy (SuperEdge's --service-autonomy-enhancement), the pure part: the flag, what edge-health's
// /localinfo answers, and how one answer changes the verdicts the topology index holds.
//
// edge-health, running on every edge node, probes its neighbours and answers GET /localinfo with a JSON
// object from node name to a result whose `Normal` says whether that node answered (Go decodes field
// names without regard to case, so `normal` counts too; other fields are ignored). A node reported not
// Normal has its endpoints left out of every Service; a node it does not mention, or a report that is
// gone, is "no opinion" and keeps them, so a failing health source never empties a Service.
import { isPlainObject } from '../../api/json.js';

export interface AutonomyConfig {
  readonly enabled: boolean;
  readonly intervalSeconds: number;
  /** edge-health's /localinfo. */
  readonly address: string;
}

/** SuperEdge's defaults: off, every 30 s, edge-health on this node. */
export const AUTONOMY_DEFAULTS: AutonomyConfig = {
  enabled: false,
  intervalSeconds: 30,
  address: 'http://localhost:51005/localinfo',
};

/**
 * Reads the flag's value as SuperEdge writes it, `enabled=true,interval=30,address=http://...`: any of
 * the three keys, in any order; the others keep their defaults. Throws an Error that says what is wrong.
 */
export function parseAutonomyFlag(value: string): AutonomyConfig {
  const out = { ...AUTONOMY_DEFAULTS };
  const seen = new Set<string>();
  for (const part of value.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq <= 0) throw new Error(`"${item}" is not key=value (keys: enabled, interval, address)`);
    const key = item.slice(0, eq).trim();
    const v = item.slice(eq + 1).trim();
    if (seen.has(key)) throw new Error(`${key} is given twice`);
    seen.add(key);
    switch (key) {
      case 'enabled':
        if (v !== 'true' && v !== 'false') throw new Error(`enabled=${v}: want true or false`);
        out.enabled = v === 'true';
        break;
      case 'interval': {
        const n = /^\d+$/.test(v) ? Number(v) : NaN;
        if (!Number.isSafeInteger(n) || n < 1)
          throw new Error(`interval=${v}: want whole seconds, at least 1`);
        out.intervalSeconds = n;
        break;
      }
      case 'address': {
        let url: URL;
        try {
          url = new URL(v);
        } catch {
          throw new Error(`address=${v}: not a URL`);
        }
        if (url.protocol !== 'http:' && url.protocol !== 'https:')
          throw new Error(`address=${v}: want an http or https URL`);
        out.address = v;
        break;
      }
      default:
        throw new Error(`unknown key "${key}" (keys: enabled, interval, address)`);
    }
  }
  return out;
}

/**
 * The verdicts in one /localinfo answer: node name → Normal. Entries without a boolean `Normal` carry no
 * opinion and are left out. Throws when the body is not a JSON object.
 */
export function decodeLocalInfo(body: string): Map<string, boolean> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new Error('the answer is not JSON');
  }
  if (!isPlainObject(parsed)) throw new Error('the answer is not a JSON object of node name to result');
  const out = new Map<string, boolean>();
  for (const [node, result] of Object.entries(parsed as Record<string, unknown>)) {
    if (node === '' || typeof result !== 'object' || result === null) continue;
    const normal = Object.entries(result as Record<string, unknown>).find(
      ([k, v]) => k.toLowerCase() === 'normal' && typeof v === 'boolean',
    );
    if (normal !== undefined) out.set(node, normal[1] as boolean);
  }
  return out;
}

/** What to tell the index to go from `before` to `after`: each node whose verdict differs (undefined: none). */
export function healthChanges(
  before: ReadonlyMap<string, boolean>,
  after: ReadonlyMap<string, boolean>,
): [node: string, healthy: boolean | undefined][] {
  const out: [string, boolean | undefined][] = [];
  for (const [node, healthy] of after) if (before.get(node) !== healthy) out.push([node, healthy]);
  for (const node of before.keys()) if (!after.has(node)) out.push([node, undefined]);
  return out.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}
