import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/object.js';
import { ApiError, type ListOptions, type ObjectList, type WatchEvent, type WatchOptions } from './client.js';
import { Indexer } from './informer.js';
import { Reflector, type ListerWatcher, type ReflectorState } from './reflector.js';

const obj = (name: string, rv: string, ns = 'default'): KObject => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: ns, resourceVersion: rv },
});
const ev = (type: WatchEvent['type'], o: KObject): WatchEvent => ({ type, object: o });

type Step = ObjectList | Error | WatchEvent[] | { events: WatchEvent[]; fail: Error };

/** A ListerWatcher that plays a script: each list() and watch() call takes the next step of its kind. */
class Script implements ListerWatcher {
  lists: ListOptions[] = [];
  watches: WatchOptions[] = [];
  constructor(
    private readonly listSteps: (ObjectList | Error)[],
    private readonly watchSteps: Step[],
  ) {}
  async list(opts: ListOptions): Promise<ObjectList> {
    this.lists.push(opts);
    const s = this.listSteps.shift();
    if (s === undefined) return new Promise(() => {}); // hang: the test is over
    if (s instanceof Error) throw s;
    return s;
  }
  async *watch(opts: WatchOptions, signal: AbortSignal): AsyncIterable<WatchEvent> {
    this.watches.push(opts);
    const s = this.watchSteps.shift();
    if (s === undefined) {
      await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
      return;
    }
    if (s instanceof Error) throw s;
    if (Array.isArray(s)) {
      for (const e of s) yield e;
      return;
    }
    for (const e of (s as { events: WatchEvent[] }).events) yield e;
    throw (s as { fail: Error }).fail;
  }
}

const list = (rv: string, items: KObject[], cont?: string): ObjectList => ({
  metadata: { resourceVersion: rv, ...(cont === undefined ? {} : { continue: cont }) },
  items,
});

async function run(script: Script, until: (states: ReflectorState[], idx: Indexer) => boolean) {
  const idx = new Indexer();
  const states: ReflectorState[] = [];
  const sleeps: number[] = [];
  const log: string[] = [];
  idx.addHandlers({
    onAdd: (o) => log.push(`add ${o.metadata.name}`),
    onUpdate: (_, o) => log.push(`update ${o.metadata.name}`),
    onDelete: (o) => log.push(`delete ${o.metadata.name}`),
  });
  const r = new Reflector(script, idx, {
    pageSize: 2,
    random: () => 0,
    watchTimeoutSeconds: () => 300,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    onState: (s) => states.push(s),
  });
  r.start();
  for (let i = 0; i < 200 && !until(states, idx); i++) await new Promise((res) => setImmediate(res));
  await r.stop();
  return { idx, states, sleeps, log, r };
}

describe('Reflector', () => {
  it('lists every page, swaps the store once, then watches from the list resourceVersion', async () => {
    const script = new Script(
      [list('10', [obj('a', '3'), obj('b', '4')], 'c1'), list('10', [obj('c', '5')])],
      [[ev('ADDED', obj('d', '11')), ev('MODIFIED', obj('a', '12')), ev('BOOKMARK', obj('', '15'))]],
    );
    const { idx, log, r } = await run(
      script,
      (_, i) => i.resourceVersion === '12' && script.watches.length >= 2,
    );
    assert.deepEqual(script.lists, [{ limit: 2 }, { limit: 2, continue: 'c1' }]);
    assert.equal(script.watches[0]!.resourceVersion, '10');
    assert.equal(script.watches[0]!.allowWatchBookmarks, true);
    assert.equal(script.watches[1]!.resourceVersion, '15', 'the bookmark moved the resume point');
    assert.deepEqual(idx.keys().sort(), ['default/a', 'default/b', 'default/c', 'default/d']);
    assert.deepEqual(log, ['add a', 'add b', 'add c', 'add d', 'update a']);
    assert.equal(r.relists, 1);
  });

  it('an ERROR 410 event relists, and objects that vanished meanwhile are reported deleted', async () => {
    const script = new Script(
      [list('10', [obj('a', '3'), obj('b', '4')]), list('30', [obj('b', '4'), obj('c', '25')])],
      [
        [
          ev('ERROR', {
            kind: 'Status',
            code: 410,
            message: 'too old resource version',
          } as unknown as KObject),
        ],
      ],
    );
    const { idx, log, states, r } = await run(
      script,
      () => script.lists.length >= 2 && script.watches.length >= 2,
    );
    assert.deepEqual(states.slice(0, 4), ['Listing', 'Watching', 'Listing', 'Watching']);
    assert.deepEqual(idx.keys().sort(), ['default/b', 'default/c']);
    assert.deepEqual(log, ['add a', 'add b', 'delete a', 'add c']);
    assert.equal(script.watches[1]!.resourceVersion, '30');
    assert.equal(r.relists, 2);
  });

  it('a 410 HTTP answer to the watch relists too', async () => {
    const script = new Script(
      [list('10', []), list('20', [obj('x', '19')])],
      [new ApiError(410, 'Expired', 'too old resource version: 10 (19)')],
    );
    const { idx } = await run(script, () => script.watches.length >= 2);
    assert.deepEqual(idx.keys(), ['default/x']);
  });

  it('a failed list backs off exponentially and retries the list', async () => {
    const script = new Script(
      [new Error('connection refused'), new Error('connection refused'), list('5', [obj('a', '5')])],
      [],
    );
    const { sleeps, states, idx } = await run(script, () => script.watches.length >= 1);
    assert.deepEqual(sleeps, [800, 1600]);
    assert.deepEqual(states.slice(0, 6), ['Listing', 'Backoff', 'Listing', 'Backoff', 'Listing', 'Watching']);
    assert.deepEqual(idx.keys(), ['default/a']);
  });

  it('a broken watch backs off and resumes from the last resourceVersion without relisting', async () => {
    const script = new Script(
      [list('10', [obj('a', '3')])],
      [{ events: [ev('MODIFIED', obj('a', '14'))], fail: new Error('socket hang up') }, []],
    );
    const { r, sleeps } = await run(script, () => script.watches.length >= 3);
    assert.equal(script.lists.length, 1);
    assert.equal(script.watches[1]!.resourceVersion, '14');
    assert.deepEqual(sleeps, [800]);
    assert.equal(r.relists, 1);
  });

  it('a watch that ends normally (server timeout) is resumed at once', async () => {
    const script = new Script([list('10', [])], [[ev('ADDED', obj('a', '11'))], []]);
    const { sleeps } = await run(script, () => script.watches.length >= 3);
    assert.deepEqual(sleeps, []);
    assert.equal(script.watches[1]!.resourceVersion, '11');
  });

  it('waitForSync resolves after the first full list; stop() ends in Stopped', async () => {
    const script = new Script([list('1', [obj('a', '1')])], []);
    const idx = new Indexer();
    const r = new Reflector(script, idx, { sleep: async () => {} });
    r.start();
    await r.waitForSync();
    assert.equal(idx.size, 1);
    assert.ok(r.hasSynced);
    await r.stop();
    assert.equal(r.state, 'Stopped');
  });
});

describe('Reflector with a paged store', () => {
  it('hands each page over as it comes, then ends the relist; a failed relist starts over', async () => {
    const calls: string[] = [];
    const store = {
      replace: () => calls.push('replace'),
      apply: (type: string, o: KObject) => calls.push(`${type} ${o.metadata.name}`),
      paged: {
        beginReplace: () => calls.push('begin'),
        replacePage: (items: KObject[]) => calls.push(`page ${items.map((o) => o.metadata.name).join(',')}`),
        endReplace: (rv: string) => calls.push(`end ${rv}`),
        abortReplace: () => calls.push('abort'),
      },
    };
    const script = new Script(
      [
        list('5', [obj('a', '1'), obj('b', '2')], 'c1'),
        new Error('connection reset'),
        list('6', [obj('a', '1')], 'c2'),
        list('6', [obj('c', '6')]),
      ],
      [],
    );
    const r = new Reflector(script, store, { sleep: async () => {} });
    r.start();
    await r.waitForSync();
    await r.stop();
    assert.deepEqual(calls, ['begin', 'page a,b', 'abort', 'begin', 'page a', 'page c', 'end 6']);
    assert.deepEqual(
      script.lists.map((l) => l.continue ?? ''),
      ['', 'c1', '', 'c2'],
    );
  });
});

describe('Indexer', () => {
  it('keeps indices through adds, updates, deletes and replaces', () => {
    const idx = new Indexer({ byLabel: (o) => Object.values(o.metadata.labels ?? {}) });
    const l = (name: string, v: string, rv: string): KObject => ({
      ...obj(name, rv),
      metadata: { ...obj(name, rv).metadata, labels: { app: v } },
    });
    idx.apply('ADDED', l('a', 'x', '1'));
    idx.apply('ADDED', l('b', 'x', '2'));
    idx.apply('MODIFIED', l('a', 'y', '3'));
    assert.deepEqual(
      idx.byIndex('byLabel', 'x').map((o) => o.metadata.name),
      ['b'],
    );
    assert.deepEqual(
      idx.byIndex('byLabel', 'y').map((o) => o.metadata.name),
      ['a'],
    );
    idx.apply('DELETED', l('b', 'x', '4'));
    assert.deepEqual(idx.byIndex('byLabel', 'x'), []);
    idx.replace([l('c', 'x', '9')], '9');
    assert.deepEqual(idx.byIndex('byLabel', 'y'), []);
    assert.deepEqual(idx.byIndex('namespace', 'default'), []);
    assert.deepEqual(
      idx.byIndex('byLabel', 'x').map((o) => o.metadata.name),
      ['c'],
    );
  });
});
