// The nftables proxy mode's transactions: the table a state asks for (nftModel, laid out by
// nftables-layout.ts in the layout of kube-proxy's nftables mode, KEP-3866), and the three ways of
// writing it as one `nft -f` transaction: the whole table anew (a proxy's first sync), a resync in place
// (the periodic full sync), and a partial sync of only the Service ports that changed. See docs/proxy.md.
import { prepare, type Family } from './iptables-service.js';
import type { RenderOptions } from './iptables.js';
import {
  NFT_TABLE,
  Table,
  eachElement,
  elementId,
  nftFamily,
  ownNothing,
  writeFixed,
  writeService,
  type NftOwned,
} from './nftables-layout.js';
import {
  writeDifference,
  writeModel,
  writeRefresh,
  type NftChain,
  type NftChanges,
  type NftModel,
  type NftSet,
  type NftTouched,
} from './nftables-model.js';
import { emptySlots, isEndpointMap, releaseSlots, type SlotSpace } from './nftables-slots.js';
import type { ProxyState } from './types.js';

export type { NftChanges, NftModel } from './nftables-model.js';
export { NFT_TABLE, type NftOwned } from './nftables-layout.js';

export interface NftPlan {
  /** Input for `nft -f -`: one atomic transaction ('' when nothing changed). */
  readonly text: string;
  /** The table once `text` is applied: keep it, and pass it as `previous` to the next partial render. */
  readonly model: NftProxyModel;
  readonly changes: NftChanges;
  /**
   * Set when the render updated `previous` in place (a partial render told what changed): puts `previous`
   * back as it was, for a caller whose transaction nft refused.
   */
  readonly revert?: () => void;
}

/** The service ports that write one element: a single port's key (the common case, no array), or several. */
type Holders = string | readonly string[];

/** The table as a render leaves it, with what each Service port of the state owns in it. */
export interface NftProxyModel extends NftModel {
  readonly options: RenderOptions;
  /** Per service port key of the state (empty for a port without a cluster IP of the family). */
  readonly owned: ReadonlyMap<string, NftOwned>;
  /**
   * Per set or map, per element key, the service ports that write it: one port's key, or several in key
   * order (several may share one element: a hairpin pair). Endpoint map elements are left out: each slot
   * belongs to one chain's range, so to one port.
   */
  readonly holders: ReadonlyMap<string, ReadonlyMap<string, Holders>>;
  /** Each balancing chain's range in the endpoint maps (nftables-slots.ts). */
  readonly slots: SlotSpace;
}

/** The table a state asks for, in the family of `o` (Service ports without a cluster IP of that family are left out). */
export function nftModel(state: ProxyState, o: RenderOptions): NftProxyModel {
  const t = new Table(emptySlots());
  writeFixed(t, o);
  const owned = new Map<string, NftOwned>();
  const holders = new Map<string, Map<string, Holders>>();
  for (const key of [...state.keys()].sort()) {
    t.owner = ownNothing();
    const pp = prepare(state.get(key)!, o.family);
    if (pp !== undefined) writeService(t, pp, o);
    owned.set(key, t.owner);
    eachElement(t.owner, (set, k) => {
      if (isEndpointMap(set)) return;
      let inSet = holders.get(set);
      if (inSet === undefined) holders.set(set, (inSet = new Map()));
      // Keys come in order: a port already there is the last one.
      const h = inSet.get(k);
      if (h === undefined) inSet.set(k, key);
      else if (typeof h === 'string') {
        if (h !== key) inSet.set(k, [h, key]);
      } else if (h.at(-1) !== key) (h as string[]).push(key);
    });
  }
  return {
    family: nftFamily(o.family),
    table: NFT_TABLE,
    chains: t.chains,
    sets: t.sets,
    options: o,
    owned,
    holders,
    slots: t.slots,
  };
}

const holds = (h: Holders, key: string): boolean => (typeof h === 'string' ? h === key : h.includes(key));

const sameList = (a: readonly string[] = [], b: readonly string[] = []): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** Options that change the fixed chains or every Service port's rules. */
const sameOptions = (a: RenderOptions, b: RenderOptions): boolean =>
  a.family === b.family &&
  (a.clusterCIDR ?? '') === (b.clusterCIDR ?? '') &&
  (a.masqueradeAll ?? false) === (b.masqueradeAll ?? false) &&
  sameList(a.nodePortAddresses, b.nodePortAddresses);

/** Changes to maps, each undoable: what lets a partial render update the kept model in place. */
class Edits {
  private readonly undo: (() => void)[] = [];
  set<K, V>(m: Map<K, V>, k: K, v: V): void {
    const had = m.has(k);
    const old = m.get(k);
    m.set(k, v);
    this.undo.push(had ? () => m.set(k, old as V) : () => m.delete(k));
  }
  delete<K, V>(m: Map<K, V>, k: K): void {
    if (!m.has(k)) return;
    const old = m.get(k) as V;
    m.delete(k);
    this.undo.push(() => m.set(k, old));
  }
  /** Records an undo step of a change made elsewhere. */
  readonly record = (undo: () => void): void => {
    this.undo.push(undo);
  };
  revert(): void {
    for (const u of this.undo.reverse()) u();
    this.undo.length = 0;
  }
}

/**
 * `previous` updated in place to the table of `state`, with only the service ports in `redo` written again
 * (the cost follows the change, not the table); the names that may differ, and what those names held
 * before, for writeDifference; and how to undo it all.
 */
function patch(
  previous: NftProxyModel,
  state: ProxyState,
  o: RenderOptions,
  redo: readonly string[],
): { model: NftProxyModel; before: NftModel; touched: NftTouched; edits: Edits } {
  const chains = previous.chains as Map<string, NftChain>;
  const sets = previous.sets as Map<string, NftSet>;
  const owned = previous.owned as Map<string, NftOwned>;
  const holders = previous.holders as Map<string, Map<string, Holders>>;
  const edits = new Edits();
  const touched = {
    chains: new Set<string>(),
    sets: new Set<string>(),
    elements: new Map<string, Set<string>>(),
  };
  const touch = (own: NftOwned): void => {
    for (const c of own.chains) touched.chains.add(c);
    for (const s of own.sets) touched.sets.add(s);
    eachElement(own, (s, k) => {
      let keys = touched.elements.get(s);
      if (keys === undefined) touched.elements.set(s, (keys = new Set()));
      keys.add(k);
    });
  };
  // Chains rendered again keep their endpoint ranges while their endpoints fit (the rule stays the same).
  const t = new Table(previous.slots, edits.record);
  const rendered = new Map<string, NftOwned>();
  for (const key of redo) {
    const old = owned.get(key);
    if (old !== undefined) touch(old);
    const st = state.get(key);
    if (st === undefined) continue;
    t.owner = ownNothing();
    const pp = prepare(st, o.family);
    if (pp !== undefined) writeService(t, pp, o);
    rendered.set(key, t.owner);
    touch(t.owner);
  }
  for (const key of redo)
    for (const c of owned.get(key)?.chains ?? [])
      if (!t.slotted.has(c)) releaseSlots(previous.slots, c, edits.record);
  // What the touched names held before: writeDifference compares against it.
  const beforeChains = new Map<string, NftChain>();
  for (const c of touched.chains) {
    const v = chains.get(c);
    if (v !== undefined) beforeChains.set(c, v);
  }
  const beforeSets = new Map<string, NftSet>();
  for (const name of new Set([...touched.sets, ...touched.elements.keys()])) {
    const v = sets.get(name);
    if (v === undefined) continue;
    const keys = touched.sets.has(name) ? undefined : touched.elements.get(name);
    const elements =
      keys === undefined
        ? new Map(v.elements)
        : new Map(
            [...keys].flatMap((k): [string, string][] => {
              const e = v.elements.get(k);
              return e === undefined ? [] : [[k, e]];
            }),
          );
    beforeSets.set(name, { ...v, elements });
  }

  for (const key of redo) {
    const old = owned.get(key);
    if (old !== undefined) {
      for (const c of old.chains) edits.delete(chains, c);
      for (const s of old.sets) edits.delete(sets, s);
      eachElement(old, (s, k) => {
        if (isEndpointMap(s)) return;
        const inSet = holders.get(s);
        const h = inSet?.get(k);
        if (inSet === undefined || h === undefined || !holds(h, key)) return;
        const rest = typeof h === 'string' ? [] : h.filter((x) => x !== key);
        if (rest.length > 0) edits.set(inSet, k, rest.length === 1 ? rest[0]! : rest);
        else {
          edits.delete(inSet, k);
          if (inSet.size === 0) edits.delete(holders, s);
        }
      });
      edits.delete(owned, key);
    }
    const own = rendered.get(key);
    if (own === undefined) continue;
    edits.set(owned, key, own);
    eachElement(own, (s, k) => {
      if (isEndpointMap(s)) return;
      let inSet = holders.get(s);
      if (inSet === undefined) edits.set(holders, s, (inSet = new Map()));
      const h = inSet.get(k);
      if (h === undefined) edits.set(inSet, k, key);
      else if (!holds(h, key)) edits.set(inSet, k, [...(typeof h === 'string' ? [h] : h), key].sort());
    });
  }
  for (const [name, c] of t.chains) edits.set(chains, name, c);
  for (const [name, s] of t.sets) edits.set(sets, name, s);
  // An endpoint slot takes the value its one writer gave it now, if any.
  const slotValues = new Map<string, string>();
  for (const own of rendered.values())
    eachElement(own, (s, k, v) => {
      if (isEndpointMap(s)) slotValues.set(elementId(s, k), v);
    });
  // Any other touched element takes the value a full render gives it: the one written by the greatest key.
  for (const [s, keys] of touched.elements) {
    const set = sets.get(s);
    if (set === undefined) continue;
    const elements = set.elements as Map<string, string>;
    for (const k of keys) {
      if (isEndpointMap(s)) {
        const v = slotValues.get(elementId(s, k));
        if (v === undefined) edits.delete(elements, k);
        else if (elements.get(k) !== v) edits.set(elements, k, v);
        continue;
      }
      const h = holders.get(s)?.get(k);
      if (h === undefined) {
        edits.delete(elements, k);
        continue;
      }
      // Several holders are kept in key order: the last is the greatest.
      const winner = typeof h === 'string' ? h : h.at(-1)!;
      const own = owned.get(winner)!;
      let value = '';
      eachElement(own, (es, ek, ev) => {
        if (es === s && ek === k) value = ev;
      });
      if (elements.get(k) !== value) edits.set(elements, k, value);
    }
  }
  const before: NftModel = {
    family: previous.family,
    table: previous.table,
    chains: beforeChains,
    sets: beforeSets,
  };
  return { model: { ...previous, options: o }, before, touched, edits };
}

/** Full sync: the whole table, replacing whatever the table held, in one transaction. */
export function renderNftFull(state: ProxyState, o: RenderOptions): NftPlan {
  const model = nftModel(state, o);
  return { ...writeModel(model), model };
}

/**
 * Periodic full resync onto the table `previous` describes (what this process last applied): every chain
 * and map rewritten in place, so that whatever another writer changed in them is undone, while ClientIP
 * affinity sets keep what the kernel remembered. When nft refuses it (the table was changed beyond that),
 * write renderNftFull instead.
 */
export function renderNftResync(previous: NftProxyModel, state: ProxyState, o: RenderOptions): NftPlan {
  const model = nftModel(state, o);
  return { ...writeRefresh(previous, model), model };
}

/**
 * Partial sync: only what differs from `previous` (the model of the last transaction that nft applied):
 * map and set elements added or deleted, changed chains flushed and refilled, new chains added, chains and
 * affinity sets no longer used deleted after everything that referred to them. '' when nothing changed.
 *
 * With `changed` (the service ports whose state differs from the one `previous` was rendered from, as the
 * sync loop's change tracker reports them), only those ports, and ports `previous` lacks or the state
 * lacks, are rendered again and compared: the cost follows the change, not the cluster. `previous` is then
 * updated in place and returned as the new model; the plan's `revert` puts it back (for a transaction nft
 * refused). Without `changed`, or when the options differ, the whole state is rendered and compared, and
 * `previous` is left as it is.
 */
export function renderNftPartial(
  previous: NftProxyModel,
  state: ProxyState,
  o: RenderOptions,
  changed?: ReadonlySet<string>,
): NftPlan {
  if (changed === undefined || !sameOptions(previous.options, o)) {
    const model = nftModel(state, o);
    return { ...writeDifference(previous, model), model };
  }
  const redo = new Set<string>();
  for (const key of changed) if (state.has(key) || previous.owned.has(key)) redo.add(key);
  for (const key of previous.owned.keys()) if (!state.has(key)) redo.add(key);
  for (const key of state.keys()) if (!previous.owned.has(key)) redo.add(key);
  const { model, before, touched, edits } = patch(previous, state, o, [...redo].sort());
  return { ...writeDifference(before, model, touched), model, revert: () => edits.revert() };
}

/** Removes svcplane's table of the family (nothing happens when there is none). */
export const renderNftCleanup = (family: Family): string =>
  `add table ${nftFamily(family)} ${NFT_TABLE}\ndelete table ${nftFamily(family)} ${NFT_TABLE}\n`;
