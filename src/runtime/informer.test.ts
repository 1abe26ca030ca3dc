// The informer: its cache's transform (what controllers keep of each object, on adds, updates and
// relists), and how it tells handlers of changes: the cache first, then each handler on its own queue,
// in order and one at a time, so a slow or failing handler holds up nothing but itself.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { until } from '../../test/e2e/testing/until.js';
import type { KObject } from '../api/object.js';
import { mustFindResource, RESOURCES, type ResourceInfo } from '../api/resources.js';
import type { Client, ObjectList, WatchEvent } from './client.js';
import { controllerTransform, Indexer, Informer } from './informer.js';

const resource = (name: string): ResourceInfo => {
  const r = RESOURCES.find((x) => x.resource === name);
  assert.ok(r, name);
  return r;
};

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: {} }];

const obj = (name: string, rv: string, annotations?: Record<string, string>): KObject =>
  ({
    metadata: {
      name,
      namespace: 'default',
      resourceVersion: rv,
      managedFields,
      ...(annotations === undefined ? {} : { annotations }),
    },
    spec: { nodeName: 'n1' },
  }) as unknown as KObject;

describe('controllerTransform', () => {
  it('drops managedFields from every kind, and last-applied from pods only', () => {
    const annotations = { [LAST_APPLIED]: '{"big":"manifest"}', keep: 'me' };
    const pod = controllerTransform(resource('pods'))(obj('p', '1', annotations));
    assert.equal(pod.metadata.managedFields, undefined);
    assert.deepEqual(pod.metadata.annotations, { keep: 'me' });
    assert.deepEqual((pod as unknown as { spec: unknown }).spec, { nodeName: 'n1' });
    // Endpoints and slices are written back from the cache: their annotations stay whole.
    const ep = controllerTransform(resource('endpoints'))(obj('e', '1', annotations));
    assert.equal(ep.metadata.managedFields, undefined);
    assert.deepEqual(ep.metadata.annotations, annotations);
  });

  it('leaves the object it was given unchanged, and returns an object without either as it is', () => {
    const t = controllerTransform(resource('pods'));
    const given = obj('p', '1', { [LAST_APPLIED]: 'x' });
    const copy = structuredClone(given);
    t(given);
    assert.deepEqual(given, copy);
    const plain = { metadata: { name: 'q', namespace: 'default' } } as KObject;
    assert.equal(t(plain), plain);
  });

  it('applies to what the indexer caches and hands to handlers, on adds, updates and relists', async () => {
    const idx = new Indexer({}, controllerTransform(resource('pods')));
    const seen: KObject[] = [];
    idx.addHandlers({ onAdd: (o) => seen.push(o), onUpdate: (_old, o) => seen.push(o) });
    idx.apply('ADDED', obj('a', '1', { [LAST_APPLIED]: 'x' }));
    idx.apply('MODIFIED', obj('a', '2'));
    idx.replace([obj('a', '3'), obj('b', '3')], '3');
    await until('the handler to be told of all four', 5000, () => seen.length >= 4, 1);
    assert.equal(seen.length, 4);
    for (const o of [...seen, ...idx.list()]) {
      assert.equal(o.metadata.managedFields, undefined);
      assert.equal(o.metadata.annotations?.[LAST_APPLIED], undefined);
    }
  });
});

describe('Indexer: a relist page by page', () => {
  it('transforms each page as it comes, swaps the cache at the end, and tells handlers what replace() would', async () => {
    const transformed: string[] = [];
    const t = (o: KObject): KObject => {
      transformed.push(o.metadata.name ?? '');
      return controllerTransform(resource('pods'))(o);
    };
    const paged = new Indexer({}, t);
    const whole = new Indexer({}, t);
    const told = (idx: Indexer): string[] => {
      const out: string[] = [];
      idx.addHandlers({
        onAdd: (o) => out.push(`add ${nameOf(o)}`),
        onUpdate: (_old, o) => out.push(`update ${nameOf(o)}`),
        onDelete: (o) => out.push(`delete ${nameOf(o)}`),
      });
      return out;
    };
    const seenPaged = told(paged);
    const seenWhole = told(whole);
    for (const idx of [paged, whole]) idx.replace([obj('a', '1'), obj('b', '1'), obj('c', '1')], '1');
    const next = [obj('a', '1'), obj('b', '2'), obj('d', '2')];
    whole.replace(next, '2');
    transformed.length = 0;
    paged.paged.beginReplace();
    paged.paged.replacePage(next.slice(0, 2));
    assert.deepEqual(transformed, ['a', 'b'], 'the first page is transformed before the second comes');
    assert.deepEqual(paged.keys().sort(), ['default/a', 'default/b', 'default/c'], 'not swapped yet');
    paged.paged.replacePage(next.slice(2));
    paged.paged.endReplace('2');
    assert.deepEqual(paged.keys().sort(), ['default/a', 'default/b', 'default/d']);
    assert.equal(paged.resourceVersion, '2');
    assert.ok(paged.list().every((o) => o.metadata.managedFields === undefined));
    await until('both to be told', 5000, () => seenPaged.length >= 6 && seenWhole.length >= 6, 1);
    assert.deepEqual(seenPaged, seenWhole);
    assert.deepEqual(seenPaged.slice(3).sort(), ['add d', 'delete c', 'update b']);
  });

  it('an aborted relist leaves the cache as it was', () => {
    const idx = new Indexer();
    idx.replace([obj('a', '1')], '1');
    idx.paged.beginReplace();
    idx.paged.replacePage([obj('b', '2')]);
    idx.paged.abortReplace();
    idx.paged.endReplace('2');
    assert.deepEqual(idx.keys(), ['default/a']);
    assert.equal(idx.resourceVersion, '1');
  });
});

const SERVICES = mustFindResource('', 'services');
const svc = (name: string, rv: string): KObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default', resourceVersion: rv },
});
const ev = (type: WatchEvent['type'], object: KObject): WatchEvent => ({ type, object });
const nameOf = (o: KObject): string => o.metadata.name ?? '';

/** A server with one list and one watch whose events the test sends; the watch ends when stopped. */
class Feed {
  lists = 0;
  watches = 0;
  private pending: WatchEvent[] = [];
  private wake: (() => void) | undefined;
  readonly client = {
    list: async (): Promise<ObjectList> => {
      this.lists++;
      return { metadata: { resourceVersion: this.listRv }, items: this.listed };
    },
    watch: (_r: unknown, _o: unknown, signal: AbortSignal) => this.stream(signal),
  } as unknown as Client;

  constructor(
    private readonly listed: KObject[],
    private readonly listRv: string,
  ) {}

  send(...events: WatchEvent[]): void {
    this.pending.push(...events);
    this.wake?.();
  }

  private async *stream(signal: AbortSignal): AsyncGenerator<WatchEvent> {
    this.watches++;
    while (!signal.aborted) {
      const e = this.pending.shift();
      if (e !== undefined) {
        yield e;
        continue;
      }
      await new Promise<void>((r) => {
        this.wake = r;
        signal.addEventListener('abort', () => r(), { once: true });
      });
    }
  }
}

/** A promise the test settles when it likes. */
function gate(): { readonly promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** Handlers that write `add a`, `update a 1→2`, `delete a` to `log`, after `wait` if given. */
const logging = (log: string[], wait?: (o: KObject) => Promise<void> | undefined) => ({
  onAdd: (o: KObject) => {
    log.push(`add ${nameOf(o)}`);
    return wait?.(o);
  },
  onUpdate: (old: KObject, o: KObject) => {
    log.push(`update ${nameOf(o)} ${old.metadata.resourceVersion}→${o.metadata.resourceVersion}`);
    return wait?.(o);
  },
  onDelete: (o: KObject) => {
    log.push(`delete ${nameOf(o)}`);
    return wait?.(o);
  },
});

describe('Informer handlers', () => {
  it('a slow handler holds up neither the cache, nor the watch, nor another handler', async () => {
    const feed = new Feed([svc('a', '1')], '1');
    const inf = new Informer(feed.client, SERVICES);
    const held = gate();
    const slow: string[] = [];
    const fast: string[] = [];
    const cachedWhenTold: boolean[] = [];
    inf.addHandlers(logging(slow, () => held.promise));
    inf.addHandlers(
      logging(fast, (o) => {
        cachedWhenTold.push(inf.indexer.get(`default/${nameOf(o)}`) !== undefined);
        return undefined;
      }),
    );
    inf.start();
    try {
      await until('the watch to start', 5000, () => feed.watches === 1, 1);
      feed.send(ev('ADDED', svc('b', '2')), ev('MODIFIED', svc('b', '3')), ev('DELETED', svc('a', '4')));
      await until('the fast handler to hear of every change', 5000, () => fast.length === 4, 1);
      assert.deepEqual(fast, ['add a', 'add b', 'update b 2→3', 'delete a']);
      assert.deepEqual(
        cachedWhenTold,
        [true, true, true, false],
        'the cache is written before anyone is told',
      );
      assert.equal(inf.reflector.resourceVersion, '4', 'the watch went on');
      assert.deepEqual(inf.indexer.keys(), ['default/b']);
      assert.equal(inf.indexer.get('default/b')?.metadata.resourceVersion, '3');
      assert.deepEqual(slow, ['add a'], 'the slow handler is still on its first change');
      held.open();
      await until('the slow handler to catch up', 5000, () => slow.length === 4, 1);
      assert.deepEqual(slow, fast);
    } finally {
      held.open();
      await inf.stop();
    }
  });

  it('hands each handler its changes in order, one at a time, however long each takes', async () => {
    const idx = new Indexer();
    const log: string[] = [];
    let running = 0;
    let overlapped = false;
    // Each change takes a different number of turns of the event loop; the log is written when it ends.
    const turns: Record<string, number> = { '1': 3, '2': 0, '3': 2, '4': 1, '5': 4, '6': 0 };
    const slowly = (line: () => string) => async (o: KObject) => {
      running++;
      if (running > 1) overlapped = true;
      for (let i = 0; i < (turns[o.metadata.resourceVersion ?? ''] ?? 0); i++) {
        await new Promise((r) => setImmediate(r));
      }
      log.push(line());
      running--;
    };
    idx.addHandlers({
      onAdd: (o) => slowly(() => `ADDED ${nameOf(o)}`)(o),
      onUpdate: (_old, o) => slowly(() => `MODIFIED ${nameOf(o)}`)(o),
      onDelete: (o) => slowly(() => `DELETED ${nameOf(o)}`)(o),
    });
    idx.apply('ADDED', svc('a', '1'));
    idx.apply('MODIFIED', svc('a', '2'));
    idx.apply('ADDED', svc('b', '3'));
    idx.apply('DELETED', svc('a', '4'));
    idx.apply('MODIFIED', svc('b', '5'));
    idx.apply('DELETED', svc('b', '6'));
    assert.equal(idx.size, 0, 'the cache is written at once');
    await until('all six changes', 5000, () => log.length === 6, 1);
    assert.deepEqual(log, ['ADDED a', 'MODIFIED a', 'ADDED b', 'DELETED a', 'MODIFIED b', 'DELETED b']);
    assert.equal(overlapped, false, 'one change at a time');
  });

  it('a relist tells every handler what the swap changed, even when another handler throws', async () => {
    const errors: string[] = [];
    const idx = new Indexer({}, undefined, (err) => errors.push((err as Error).message));
    idx.addHandlers({
      onDelete: (o) => {
        throw new Error(`cannot delete ${nameOf(o)}`);
      },
    });
    const seen: string[] = [];
    const keysWhenTold: string[][] = [];
    idx.addHandlers(
      logging(seen, () => {
        keysWhenTold.push(idx.keys());
        return undefined;
      }),
    );
    idx.replace([svc('a', '1'), svc('b', '1'), svc('c', '1')], '1');
    await until('the first list', 5000, () => seen.length === 3, 1);
    assert.deepEqual(seen, ['add a', 'add b', 'add c']);
    seen.length = 0;
    keysWhenTold.length = 0;
    // a is unchanged, b changed, c is gone and d is new while the watch was down.
    idx.replace([svc('a', '1'), svc('b', '2'), svc('d', '2')], '2');
    await until('the relist', 5000, () => seen.length === 3, 1);
    assert.deepEqual(seen, ['delete c', 'update b 1→2', 'add d']);
    for (const keys of keysWhenTold) assert.deepEqual(keys, ['default/a', 'default/b', 'default/d']);
    assert.deepEqual(errors, ['cannot delete c']);
  });

  it('a handler that throws is reported, and goes on hearing of later changes without a relist', async () => {
    const feed = new Feed([svc('a', '1')], '1');
    const errors: string[] = [];
    const states: string[] = [];
    const inf = new Informer(feed.client, SERVICES, {
      reflector: { onError: (err) => errors.push((err as Error).message), onState: (s) => states.push(s) },
    });
    const seen: string[] = [];
    const reg = inf.addHandlers(
      logging(seen, (o) => {
        const line = `${nameOf(o)}@${o.metadata.resourceVersion}`;
        if (line === 'a@1') throw new Error(`throws on ${line}`);
        if (line === 'b@3') return Promise.reject(new Error(`rejects on ${line}`));
        return undefined;
      }),
    );
    inf.start();
    try {
      await inf.waitForSync();
      feed.send(ev('ADDED', svc('b', '2')), ev('MODIFIED', svc('b', '3')), ev('DELETED', svc('a', '4')));
      await until('every change', 5000, () => seen.length === 4, 1);
      assert.deepEqual(seen, ['add a', 'add b', 'update b 2→3', 'delete a']);
      assert.deepEqual(errors, ['throws on a@1', 'rejects on b@3']);
      assert.equal(feed.lists, 1, 'no relist');
      assert.equal(feed.watches, 1, 'the watch went on');
      assert.ok(!states.includes('Backoff'), states.join(' '));
      assert.equal(reg.hasSynced, true, 'the initial list counts as handed over though the handler threw');
    } finally {
      await inf.stop();
    }
  });

  it('waitForSync waits until every handler has been handed its initial list', async () => {
    const feed = new Feed([svc('a', '1'), svc('b', '1')], '1');
    const inf = new Informer(feed.client, SERVICES);
    const held = gate();
    const seen: string[] = [];
    const reg = inf.addHandlers(logging(seen, () => held.promise));
    let synced = false;
    inf.start();
    const waiting = inf.waitForSync().then(() => (synced = true));
    try {
      await until('the list', 5000, () => inf.reflector.hasSynced && seen.length === 1, 1);
      await new Promise((r) => setTimeout(r, 20));
      assert.equal(synced, false, 'the handler is still on its initial list');
      assert.equal(reg.hasSynced, false);
      held.open();
      await waiting;
      assert.equal(reg.hasSynced, true);
      assert.deepEqual(seen, ['add a', 'add b']);
      // A handler added later is first handed what is cached then: that is its initial list.
      const late: string[] = [];
      const lateReg = inf.addHandlers(logging(late));
      assert.equal(lateReg.hasSynced, false);
      await inf.waitForSync();
      assert.equal(lateReg.hasSynced, true);
      assert.deepEqual(late, ['add a', 'add b']);
    } finally {
      held.open();
      await inf.stop();
    }
  });

  it('calls no handler once stopped', async () => {
    const feed = new Feed([], '1');
    const inf = new Informer(feed.client, SERVICES);
    const held = gate();
    const seen: string[] = [];
    inf.addHandlers(logging(seen, () => held.promise));
    inf.start();
    await inf.waitForSync();
    feed.send(ev('ADDED', svc('a', '2')), ev('ADDED', svc('b', '3')));
    await until('the first change', 5000, () => seen.length === 1, 1);
    const stopped = inf.stop();
    held.open();
    await stopped;
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(seen, ['add a'], 'what was still queued is dropped');
    inf.indexer.apply('ADDED', svc('c', '4'));
    await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(seen, ['add a']);
  });
});
