// The nftables proxy mode's transactions: the table a state asks for (nftModel, laid out by
// nftables-layout.ts in the layout of kube-proxy's nftables mode, KEP-3866), and the three ways of
// writing it as one `nft -f` transaction: the whole table anew (a proxy's first sync), a resync in place
// (the periodic full sync), and a partial sync of only the Service ports that changed. See docs/proxy.md.
import { prepare, type Family } from './iptables-service.js';
import type { RenderOptions } from './iptables.js';
import { packAddress, unpackAddress } from '../topology/endpoints.js';
import {
  HAIRPIN,
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
  Transaction,
  dynamic,
  element,
  writeDifference,
  ELEMENTS_PER_COMMAND,
  type NftChanges,
  type NftModel,
  type NftSet,
  type NftTouched,
} from './nftables-model.js';
import { emptySlots, isEndpointMap, releaseSlots, type SlotSpace } from './nftables-slots.js';
import type { ProxyState, ServicePortState } from './types.js';

export type { NftChanges, NftModel } from './nftables-model.js';
export { NFT_TABLE, type NftOwned } from './nftables-layout.js';

export interface NftPlan {
  /** Input for `nft -f -`: one atomic transaction ('' when nothing changed). */
  readonly text: string;
  /**
   * The same text in pieces, to be written one after another: a whole-table write (megabytes at 10,000
   * Services) is rendered a piece of Service ports at a time as it is read (`text` joins them when read).
   */
  readonly pieces: Iterable<string>;
  /** What is kept of the table once `text` is applied: pass it as `previous` to the next render. */
  readonly model: NftKept;
  readonly changes: NftChanges;
  /**
   * Set when the render updated `previous` in place (a partial render told what changed): puts `previous`
   * back as it was, for a caller whose transaction nft refused.
   */
  readonly revert?: () => void;
}

/** The service ports that write one element: a single port's key (the common case, no array), or several. */
type Holders = string | readonly string[];

/**
 * How the holders name an element: by its key, except a hairpin pair of an IPv4 address (`a . a`), named
 * by the address as a number. The proxy keeps one pair per endpoint address of the cluster (a hundred
 * thousand at 10,000 Services): a number below 2^31 (10.0.0.0/8 among them) is held in the map's own
 * slot and a greater one takes 16 bytes, where each pair's key would be a string of about 48.
 */
type HolderKey = string | number;

const holderKey = (set: string, k: string): HolderKey => {
  if (set !== HAIRPIN) return k;
  const ip = k.slice(0, k.indexOf(' '));
  const n = packAddress(ip);
  return typeof n === 'number' && k.length === 2 * ip.length + 3 && k.endsWith(ip) ? n : k;
};

/** The element key a holder key names (holderKey's inverse). */
const keyOfHolder = (h: HolderKey): string => {
  if (typeof h === 'string') return h;
  const ip = unpackAddress(h);
  return [ip, ip].join(' . ');
};

/** Per set or map, per element (holderKey), the service ports that write it (endpoint map elements left out). */
type HolderMap = ReadonlyMap<string, ReadonlyMap<HolderKey, Holders>>;

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
  readonly holders: HolderMap;
  /** Each balancing chain's range in the endpoint maps (nftables-slots.ts). */
  readonly slots: SlotSpace;
}

/**
 * What the proxy keeps of a table it applied: not the table (chains, rules, elements: tens of MiB at 10,000
 * Services), but what renders any part of it again as it was: the state each Service port was rendered from
 * (the sync loop's own objects, shared, not copied), the endpoint ranges, and who writes the elements
 * several ports may share. nftTable() renders the whole table from it.
 */
export interface NftKept {
  readonly family: 'ip' | 'ip6';
  readonly table: string;
  readonly options: RenderOptions;
  /** Per service port key, the state its part of the table was rendered from. */
  readonly ports: ReadonlyMap<string, ServicePortState>;
  /** As NftProxyModel's holders. */
  readonly holders: HolderMap;
  /** Each balancing chain's range in the endpoint maps (nftables-slots.ts). */
  readonly slots: SlotSpace;
}

/** One Service port's part of the table, written into `t`: what it owns. */
function renderPort(t: Table, st: ServicePortState, o: RenderOptions): NftOwned {
  t.owner = ownNothing();
  const pp = prepare(st, o.family);
  if (pp !== undefined) writeService(t, pp, o);
  return t.owner;
}

/** Records `key` as a holder of element `k` of `set`; ports come in key order (a full render). */
function hold(holders: Map<string, Map<HolderKey, Holders>>, set: string, k: string, key: string): void {
  let inSet = holders.get(set);
  if (inSet === undefined) holders.set(set, (inSet = new Map()));
  const id = holderKey(set, k);
  // Keys come in order: a port already there is the last one.
  const h = inSet.get(id);
  if (h === undefined) inSet.set(id, key);
  else if (typeof h === 'string') {
    if (h !== key) inSet.set(id, [h, key]);
  } else if (h.at(-1) !== key) (h as string[]).push(key);
}

/** The table a state asks for, in the family of `o` (Service ports without a cluster IP of that family are left out). */
export function nftModel(state: ProxyState, o: RenderOptions): NftProxyModel {
  const t = new Table(emptySlots());
  writeFixed(t, o);
  const owned = new Map<string, NftOwned>();
  const holders = new Map<string, Map<HolderKey, Holders>>();
  for (const key of [...state.keys()].sort()) {
    const own = renderPort(t, state.get(key)!, o);
    owned.set(key, own);
    eachElement(own, (set, k) => {
      if (!isEndpointMap(set)) hold(holders, set, k, key);
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

/** What is kept of `m`, the model of `state`. */
const keep = (m: NftProxyModel, state: ProxyState): NftKept => ({
  family: m.family,
  table: m.table,
  options: m.options,
  ports: new Map(state),
  holders: m.holders,
  slots: m.slots,
});

/**
 * The table `kept` stands for, rendered again with its endpoint ranges (nothing allocated): for tests, and
 * for a render that cannot work from the changed ports alone.
 */
export function nftTable(kept: NftKept): NftModel {
  const t = new Table(kept.slots, 'read-only');
  writeFixed(t, kept.options);
  for (const key of [...kept.ports.keys()].sort()) renderPort(t, kept.ports.get(key)!, kept.options);
  return { family: kept.family, table: kept.table, chains: t.chains, sets: t.sets };
}

const holds = (h: Holders, key: string): boolean => (typeof h === 'string' ? h === key : h.includes(key));

/** Several holders are kept in key order: the last is the greatest, whose value a full render keeps. */
const winnerOf = (h: Holders): string => (typeof h === 'string' ? h : h.at(-1)!);

const sameList = (a: readonly string[] = [], b: readonly string[] = []): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/** Options that change the fixed chains or every Service port's rules. */
const sameOptions = (a: RenderOptions, b: RenderOptions): boolean =>
  a.family === b.family &&
  (a.clusterCIDR ?? '') === (b.clusterCIDR ?? '') &&
  (a.masqueradeAll ?? false) === (b.masqueradeAll ?? false) &&
  sameList(a.nodePortAddresses, b.nodePortAddresses);

/** Changes to maps, each undoable: what lets a partial render update the kept state in place. */
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

/** Each element's value in what one port wrote, by elementId (looked up once per port). */
const valuesOf = (own: NftOwned): Map<string, string> => {
  const values = new Map<string, string>();
  eachElement(own, (s, k, v) => values.set(elementId(s, k), v));
  return values;
};

/**
 * The change from `kept` to `state` with only the service ports in `redo` rendered: each as it was (its
 * kept state, with the ranges it was given) and as it is now (ranges kept while its endpoints fit). Both
 * sides as models of only what those ports touch, for writeDifference; `kept` updated in place, and how to
 * undo that.
 */
function patch(
  kept: NftKept,
  state: ProxyState,
  o: RenderOptions,
  redo: readonly string[],
): { before: NftModel; next: NftModel; touched: NftTouched; edits: Edits } {
  const ports = kept.ports as Map<string, ServicePortState>;
  const holders = kept.holders as Map<string, Map<HolderKey, Holders>>;
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
  // The old side first, before the new one moves any range.
  const old = new Table(kept.slots, 'read-only');
  const was = new Map<string, NftOwned>();
  for (const key of redo) {
    const st = ports.get(key);
    if (st === undefined) continue;
    const own = renderPort(old, st, kept.options);
    was.set(key, own);
    touch(own);
  }
  const t = new Table(kept.slots, edits.record);
  const now = new Map<string, NftOwned>();
  for (const key of redo) {
    const st = state.get(key);
    if (st === undefined) continue;
    const own = renderPort(t, st, o);
    now.set(key, own);
    touch(own);
  }
  for (const key of redo)
    for (const c of was.get(key)?.chains ?? [])
      if (!t.slotted.has(c)) releaseSlots(kept.slots, c, edits.record);

  // A touched element's value on each side: an endpoint slot's from the one port whose range holds it;
  // another's from its winning holder, a port rendered here or one left as it was (rendered again for it).
  const redone = new Set(redo);
  const fixed = new Table();
  writeFixed(fixed, o);
  const values = new Map<NftOwned, Map<string, string>>();
  const valueIn = (own: NftOwned | undefined, id: string): string | undefined => {
    if (own === undefined) return undefined;
    let v = values.get(own);
    if (v === undefined) values.set(own, (v = valuesOf(own)));
    return v.get(id);
  };
  const unchanged = new Map<string, NftOwned>();
  const scratch = new Table(kept.slots, 'read-only');
  const ownerOn = (side: Map<string, NftOwned>, key: string): NftOwned | undefined => {
    if (redone.has(key)) return side.get(key);
    let own = unchanged.get(key);
    const st = ports.get(key);
    if (own === undefined && st !== undefined) unchanged.set(key, (own = renderPort(scratch, st, o)));
    return own;
  };
  const slotsOf = (side: Map<string, NftOwned>): Map<string, string> => {
    const slots = new Map<string, string>();
    for (const own of side.values())
      eachElement(own, (s, k, v) => {
        if (isEndpointMap(s)) slots.set(elementId(s, k), v);
      });
    return slots;
  };
  const modelOf = (table: Table, side: Map<string, NftOwned>): NftModel => {
    const sets = new Map<string, NftSet>(table.sets);
    const slots = slotsOf(side);
    for (const [s, keys] of touched.elements) {
      const f = fixed.sets.get(s);
      if (f === undefined || sets.has(s)) continue;
      const elements = new Map<string, string>();
      for (const k of keys) {
        const id = elementId(s, k);
        const h = holders.get(s)?.get(holderKey(s, k));
        const v = isEndpointMap(s)
          ? slots.get(id)
          : h === undefined
            ? undefined
            : valueIn(ownerOn(side, winnerOf(h)), id);
        if (v !== undefined) elements.set(k, v);
      }
      sets.set(s, { map: f.map, spec: f.spec, elements });
    }
    return { family: kept.family, table: kept.table, chains: table.chains, sets };
  };
  const before = modelOf(old, was);

  for (const key of redo) {
    const own = was.get(key);
    if (own !== undefined)
      eachElement(own, (s, k) => {
        if (isEndpointMap(s)) return;
        const inSet = holders.get(s);
        const id = holderKey(s, k);
        const h = inSet?.get(id);
        if (inSet === undefined || h === undefined || !holds(h, key)) return;
        const rest = typeof h === 'string' ? [] : h.filter((x) => x !== key);
        if (rest.length > 0) edits.set(inSet, id, rest.length === 1 ? rest[0]! : rest);
        else {
          edits.delete(inSet, id);
          if (inSet.size === 0) edits.delete(holders, s);
        }
      });
    const st = state.get(key);
    if (st === undefined) edits.delete(ports, key);
    else if (ports.get(key) !== st) edits.set(ports, key, st);
    const mine = now.get(key);
    if (mine === undefined) continue;
    eachElement(mine, (s, k) => {
      if (isEndpointMap(s)) return;
      let inSet = holders.get(s);
      if (inSet === undefined) edits.set(holders, s, (inSet = new Map()));
      const id = holderKey(s, k);
      const h = inSet.get(id);
      if (h === undefined) edits.set(inSet, id, key);
      else if (!holds(h, key)) edits.set(inSet, id, [...(typeof h === 'string' ? [h] : h), key].sort());
    });
  }
  return { before, next: modelOf(t, now), touched, edits };
}

/** A plan whose text is one piece. */
const whole = (w: { text: string; changes: NftChanges }, model: NftKept): NftPlan => ({
  ...w,
  pieces: [w.text],
  model,
});

/** Service ports whose sets, chains and rules are rendered and written per piece of a whole-table write. */
const PORTS_PER_PIECE = 500;
/**
 * Service ports rendered at once for their endpoint map elements (the rest of what is rendered is thrown
 * away): a fifth of a piece, whose elements are written together, as many per command as in one go.
 */
const PORTS_PER_PART = 100;
/** Elements of the shared sets and maps written per piece (about as many as a piece of endpoint elements). */
const ELEMENTS_PER_PIECE = 5000;

/**
 * The whole table of `state` as one transaction, written a piece at a time, so that the table itself (its
 * chains, rules and elements) is never held whole beside the text, nor the text whole; what is kept is
 * built on the way. In an order nft takes in one go: the fixed sets, chains and rules; then per piece (500
 * Service ports) the ports' sets, chains and rules (a rule names only its own port's chains and sets, and
 * fixed ones); then per piece their endpoint map elements (rendered 100 ports at a time); then the
 * elements of the shared sets and maps (whose verdicts name ports' chains), 5,000 to a piece, each with
 * the value a full render gives it (its greatest holder's). Without `gone`, the
 * table is created (when missing) and deleted first, so that nothing another writer or an earlier version
 * left in it survives. With `gone` (a resync), the table stays: every set and chain is added (nothing
 * happens to one that exists, a missing one is created again), every chain is flushed before it is
 * filled, every set and map the proxy fills is flushed (sets the kernel fills, ClientIP affinity, keep
 * their elements), and what `gone` has and the table no longer has is added, emptied and deleted last.
 */
function* writeWhole(
  state: ProxyState,
  o: RenderOptions,
  gone: NftModel | undefined,
  done: (model: NftKept, changes: NftChanges) => void,
): Generator<string, void, undefined> {
  const family = nftFamily(o.family);
  const tx = new Transaction({ family, table: NFT_TABLE });
  const t = `${family} ${NFT_TABLE}`;
  if (gone === undefined) tx.lines.push(`add table ${t}`, `delete table ${t}`, `add table ${t}`);
  else tx.lines.push(`add table ${t}`);
  const slots = emptySlots();
  const holders = new Map<string, Map<HolderKey, Holders>>();
  // Names of `gone` that the table still has.
  const stays = new Set<string>();
  let chainsWritten = 0;
  let elements = 0;
  /** What the transaction has collected since the last piece, as a piece (none when empty). */
  const taken = function* (): Generator<string, void, undefined> {
    const text = tx.take();
    if (text !== '') yield text;
  };
  const writePart = (part: Table): void => {
    for (const [name, s] of part.sets) {
      tx.addSet(name, s);
      if (gone?.sets.has(name) === true) stays.add(`set ${name}`);
    }
    for (const [name, c] of part.chains) {
      tx.addChain(name, c);
      if (gone?.chains.has(name) === true) stays.add(`chain ${name}`);
    }
    if (gone !== undefined) {
      for (const name of part.chains.keys()) tx.flush(name);
      for (const [name, s] of part.sets) if (!dynamic(s)) tx.flushSet(name, s);
    }
    for (const [name, c] of part.chains) tx.rules(name, c);
    chainsWritten += part.chains.size;
  };
  const fixed = new Table(slots);
  writeFixed(fixed, o);
  writePart(fixed);
  for (const [name, s] of fixed.sets) elements += tx.addElements(name, s);

  // The shared maps' values, the greatest holder's last (a set's elements have none).
  const values = new Map<string, Map<string, string>>();
  const slotted = new Map<string, string[]>();
  const keys = [...state.keys()].sort();
  const parts = function* (size: number): Generator<readonly string[], void, undefined> {
    for (let i = 0; i < keys.length; i += size) yield keys.slice(i, i + size);
  };
  for (const ports of parts(PORTS_PER_PIECE)) {
    const part = new Table(slots);
    for (const key of ports)
      eachElement(renderPort(part, state.get(key)!, o), (s, k, v) => {
        if (isEndpointMap(s)) return;
        hold(holders, s, k, key);
        if (fixed.sets.get(s)?.map !== true) return;
        let inMap = values.get(s);
        if (inMap === undefined) values.set(s, (inMap = new Map()));
        inMap.set(k, v);
      });
    writePart(part);
    yield* taken();
  }
  // The endpoint maps are filled once every rule is in place: the kernel checks each rule bound to a map
  // against the map's elements (in a resync, the flushed ones too), which costs more than checking each
  // element added against the rules bound. The ports are rendered again for it, with the ranges they were
  // just given (nothing of the first pass is held), a part at a time; the elements of several parts are
  // written together.
  let partsIn = 0;
  const slottedPiece = function* (): Generator<string, void, undefined> {
    for (const [s, list] of slotted) elements += tx.addElementList(s, list);
    slotted.clear();
    yield* taken();
  };
  for (const ports of parts(PORTS_PER_PART)) {
    const part = new Table(slots, 'read-only');
    for (const key of ports)
      eachElement(renderPort(part, state.get(key)!, o), (s, k, v) => {
        if (!isEndpointMap(s)) return;
        let list = slotted.get(s);
        if (list === undefined) slotted.set(s, (list = []));
        list.push(element({ map: true }, k, v));
      });
    if (++partsIn < PORTS_PER_PIECE / PORTS_PER_PART) continue;
    partsIn = 0;
    yield* slottedPiece();
  }
  yield* slottedPiece();
  // The shared sets' elements a piece at a time too: at 10,000 Services they are over a hundred thousand
  // (a hairpin pair per endpoint address), megabytes of text that would otherwise be built at once. A set
  // is cut only between two commands' worth of elements: the commands are the same as in one piece.
  let inPiece = 0;
  for (const [s, inSet] of holders) {
    const inMap = values.get(s);
    let list: string[] = [];
    for (const id of inSet.keys()) {
      const k = keyOfHolder(id);
      list.push(inMap === undefined ? k : element({ map: true }, k, inMap.get(k)!));
      if (++inPiece < ELEMENTS_PER_PIECE || list.length % ELEMENTS_PER_COMMAND !== 0) continue;
      elements += tx.addElementList(s, list);
      list = [];
      inPiece = 0;
      yield* taken();
    }
    elements += tx.addElementList(s, list);
  }
  let chainsDeleted = 0;
  if (gone !== undefined) {
    // What goes is added first too: deleting something another writer already deleted would fail.
    const chains = [...gone.chains].filter(([name]) => !stays.has(`chain ${name}`));
    const sets = [...gone.sets].filter(([name]) => !stays.has(`set ${name}`));
    for (const [name, s] of sets) tx.addSet(name, s);
    for (const [name, c] of chains) tx.addChain(name, c);
    for (const [name, s] of sets) if (!dynamic(s)) tx.flushSet(name, s);
    // Chains that go may jump to one another: all are emptied before any is deleted.
    for (const [name] of chains) tx.flush(name);
    for (const [name] of chains) tx.deleteChain(name);
    for (const [name, s] of sets) tx.deleteSet(name, s);
    chainsDeleted = chains.length;
  }
  yield* taken();
  done(
    { family, table: NFT_TABLE, options: o, ports: new Map(state), holders, slots },
    {
      chainsWritten,
      chainsDeleted,
      elements,
    },
  );
}

/**
 * A whole-table write as a plan rendered while it is read: its pieces are rendered one at a time as they
 * are written to nft (so that neither the table nor its text is ever held whole), and what is kept, and the
 * counts, come with the last piece. Reading `model` or `changes` before the pieces were read through
 * renders them once; every reading of `pieces` or `text` renders the same text again. The render reads the
 * state as it was when the plan was made, whatever the caller's map holds by the time nft reads.
 */
function wholePlan(state: ProxyState, o: RenderOptions, gone?: NftModel): NftPlan {
  let done: { model: NftKept; changes: NftChanges } | undefined;
  const asMade: ProxyState = new Map(state);
  const pieces = (): Generator<string, void, undefined> =>
    writeWhole(asMade, o, gone, (model, changes) => {
      done ??= { model, changes };
    });
  const finish = (): { model: NftKept; changes: NftChanges } => {
    if (done === undefined) for (const piece of pieces()) void piece;
    return done!;
  };
  return {
    pieces: { [Symbol.iterator]: pieces },
    get text() {
      return [...pieces()].join('');
    },
    get model() {
      return finish().model;
    },
    get changes() {
      return finish().changes;
    },
  };
}

/** Full sync: the whole table, replacing whatever the table held, in one transaction. */
export function renderNftFull(state: ProxyState, o: RenderOptions): NftPlan {
  return wholePlan(state, o);
}

/**
 * Periodic full resync onto the table `previous` describes (what this process last applied): every chain
 * and map rewritten in place, so that whatever another writer changed in them is undone (rules or elements
 * it added are gone, what it deleted is back), while ClientIP affinity sets keep what the kernel
 * remembered, as with kube-proxy's full syncs. nft refuses it only when an object of the same name has
 * another kind, specification or hook: write renderNftFull instead then.
 */
export function renderNftResync(previous: NftKept, state: ProxyState, o: RenderOptions): NftPlan {
  // What may go: the fixed part, and the ports whose state is not the one rendered now (a port whose state
  // is the same object, with the same options, has the same chains and sets in both).
  const was = new Table(previous.slots, 'read-only');
  writeFixed(was, previous.options);
  const same = sameOptions(previous.options, o);
  for (const [key, st] of previous.ports)
    if (!same || state.get(key) !== st) renderPort(was, st, previous.options);
  return wholePlan(state, o, {
    family: previous.family,
    table: previous.table,
    chains: was.chains,
    sets: was.sets,
  });
}

/**
 * Partial sync: only what differs from `previous` (what is kept of the last transaction that nft applied):
 * map and set elements added or deleted, changed chains flushed and refilled, new chains added, chains and
 * affinity sets no longer used deleted after everything that referred to them. '' when nothing changed.
 *
 * With `changed` (the service ports whose state differs from the one `previous` was rendered from, as the
 * sync loop's change tracker reports them), only those ports, and ports `previous` lacks or the state
 * lacks, are rendered again, as they were and as they are, and compared: the cost follows the change, not
 * the cluster. `previous` is then updated in place and returned; the plan's `revert` puts it back (for a
 * transaction nft refused). Without `changed`, or when the options differ, the whole table is rendered on
 * both sides and compared, and `previous` is left as it is.
 */
export function renderNftPartial(
  previous: NftKept,
  state: ProxyState,
  o: RenderOptions,
  changed?: ReadonlySet<string>,
): NftPlan {
  if (changed === undefined || !sameOptions(previous.options, o)) {
    const model = nftModel(state, o);
    return whole(writeDifference(nftTable(previous), model), keep(model, state));
  }
  const redo = new Set<string>();
  for (const key of changed) if (state.has(key) || previous.ports.has(key)) redo.add(key);
  for (const key of previous.ports.keys()) if (!state.has(key)) redo.add(key);
  for (const key of state.keys()) if (!previous.ports.has(key)) redo.add(key);
  const { before, next, touched, edits } = patch(previous, state, o, [...redo].sort());
  return {
    ...whole(writeDifference(before, next, touched), { ...previous, options: o }),
    revert: () => edits.revert(),
  };
}

/** Removes svcplane's table of the family (nothing happens when there is none). */
export const renderNftCleanup = (family: Family): string =>
  `add table ${nftFamily(family)} ${NFT_TABLE}\ndelete table ${nftFamily(family)} ${NFT_TABLE}\n`;
