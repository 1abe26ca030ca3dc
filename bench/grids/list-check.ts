// LIST checks of the produced set, and the Warning Events about grids.
import type https from 'node:https';
import { performance } from 'node:perf_hooks';
import { type Conn } from '../lib/http.js';
import { GRID_SELECTOR_LABEL } from '../../src/core/grids/objects.js';
import { GRID_API, type Shape, expectedServices, expectedDeployments } from './shape.js';
import { at, KINDS, PRODUCED_PATH, checkProduced, GRID_KINDS } from './checks.js';
import { getJson } from './api.js';

/** One LIST of each kind: exactly the expected set, each object as the contract says (owner UIDs too). */
/**
 * The Warning Events about grids so far, by reason (with one message each): a write a controller had to
 * retry (a create that found its object already there, a conflict) shows here even when it healed.
 */
export type Warnings = Record<string, { count: number; message: string }>;

export async function gridWarnings(agent: https.Agent, conn: Conn): Promise<Warnings> {
  const out: Warnings = {};
  const items = at(await getJson(agent, conn, '/api/v1/events?fieldSelector=type%3DWarning'), 'items');
  for (const e of Array.isArray(items) ? items : []) {
    const kind = at(e, 'involvedObject', 'kind');
    if (kind !== 'ServiceGrid' && kind !== 'DeploymentGrid') continue;
    const reason = `${kind} ${String(at(e, 'reason'))}`;
    const w = (out[reason] ??= { count: 0, message: String(at(e, 'message')).slice(0, 300) });
    w.count += typeof at(e, 'count') === 'number' ? (at(e, 'count') as number) : 1;
  }
  return out;
}

export const fmtWarnings = (w: Warnings): string =>
  Object.entries(w)
    .map(([k, v]) => `${k} ×${v.count} (e.g. ${v.message})`)
    .join('; ');

export async function listCheck(
  agent: https.Agent,
  conn: Conn,
  shape: Shape,
  units: readonly string[],
): Promise<{ services: number; deployments: number; listMs: number }> {
  const t0 = performance.now();
  const uids = new Map<string, string>();
  for (const k of GRID_KINDS) {
    const list = at(await getJson(agent, conn, `/apis/${GRID_API}/${k}`), 'items');
    for (const g of Array.isArray(list) ? list : [])
      uids.set(
        `${String(at(g, 'metadata', 'namespace'))}/${String(at(g, 'metadata', 'name'))}`,
        String(at(g, 'metadata', 'uid')),
      );
  }
  const expected = { services: expectedServices(shape), deployments: expectedDeployments(shape, units) };
  const counts = { services: 0, deployments: 0 };
  const problems: string[] = [];
  for (const kind of KINDS) {
    const list = at(
      await getJson(
        agent,
        conn,
        `${PRODUCED_PATH[kind]}?labelSelector=${encodeURIComponent(GRID_SELECTOR_LABEL)}`,
      ),
      'items',
    );
    const items = Array.isArray(list) ? list : [];
    counts[kind] = items.length;
    const seen = new Set<string>();
    const wrong: string[] = [];
    const stray: string[] = [];
    for (const obj of items) {
      const ns = String(at(obj, 'metadata', 'namespace'));
      const key = `${ns}/${String(at(obj, 'metadata', 'name'))}`;
      seen.add(key);
      const p = expected[kind].get(key);
      if (p === undefined) {
        stray.push(key);
        continue;
      }
      const problem = checkProduced(kind, obj, p, uids.get(`${ns}/${p.grid}`));
      if (problem !== undefined) wrong.push(`${key}: ${problem}`);
    }
    const missing = [...expected[kind].keys()].filter((k) => !seen.has(k));
    if (missing.length + stray.length + wrong.length > 0)
      problems.push(
        `${kind}: LIST has ${items.length}, expected ${expected[kind].size}; ${missing.length} missing ` +
          `(${missing.slice(0, 3).join(', ')}), ${stray.length} unexpected (${stray.slice(0, 3).join(', ')}), ` +
          `${wrong.length} wrong (${wrong.slice(0, 3).join(' | ')})`,
      );
  }
  if (problems.length > 0) throw new Error(`LIST check failed: ${problems.join('; ')}`);
  return { ...counts, listMs: performance.now() - t0 };
}
