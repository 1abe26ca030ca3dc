import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../api/object.js';
import { LABEL_SERVICE_NAME } from '../core/endpointslices/types.js';
import { sliceEndpoint, svcJSON } from '../core/topology/testing/builders.js';
import { ApiError, type ListOptions, type ObjectList, type WatchEvent } from './client.js';
import { Indexer, objectKeyOf } from './informer.js';
import { Reflector, type ListerWatcher } from './reflector.js';
import { TopologyFeed, type TopologyFeedOptions } from './topology-feed.js';

const NODE = 'edge-0';

function recorder() {
  const lines: string[] = [];
  const line = (level: string) => (msg: string) => lines.push(`${level} ${msg}`);
  return { lines, log: { info: line('info'), warn: line('warn'), error: line('error') } };
}

/** A feed that has been told nothing yet, and the lines it logs. */
function bare(o: Partial<TopologyFeedOptions> = {}) {
  const r = recorder();
  const feed = new TopologyFeed({
    node: NODE,
    log: r.log,
    inSync: () => true,
    synced: () => false,
    stopped: () => false,
    ...o,
  });
  return { feed, lines: r.lines };
}

/** A feed that knows this node and two Services, `web` and `api`. */
function feedOf(o: Partial<TopologyFeedOptions> = {}) {
  const { feed, lines } = bare(o);
  feed.node(NODE, { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE } });
  for (const name of ['web', 'api']) feed.service(`default/${name}`, svcJSON({ name }) as KObject);
  return { feed, lines };
}

/** An EndpointSlice of `service` (none: no service-name label) with one endpoint on this node. */
const slice = (name: string, service: string | undefined, ip: string, rv = '1'): KObject =>
  ({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      name,
      namespace: 'default',
      resourceVersion: rv,
      ...(service === undefined ? {} : { labels: { [LABEL_SERVICE_NAME]: service } }),
    },
    addressType: 'IPv4',
    ports: [{ name: 'http', port: 80, protocol: 'TCP' }],
    endpoints: [sliceEndpoint(ip, { node: NODE, ready: true })],
  }) as unknown as KObject;

/** The addresses a Service's view keeps for this node. */
const kept = (feed: TopologyFeed, svc: string): string[] =>
  (feed.index.view(`default/${svc}`)?.internal ?? []).flatMap((e) => e.addresses).sort();

/** A ListerWatcher playing lists and watch event batches in turn; a batch followed by a 410 relists. */
class Script implements ListerWatcher {
  lists = 0;
  watches = 0;
  constructor(
    private readonly listSteps: ObjectList[],
    private readonly watchSteps: { events: WatchEvent[]; gone: boolean }[],
  ) {}
  async list(_opts: ListOptions): Promise<ObjectList> {
    this.lists++;
    return this.listSteps.shift() ?? new Promise(() => {});
  }
  async *watch(_opts: unknown, signal: AbortSignal): AsyncIterable<WatchEvent> {
    this.watches++;
    const s = this.watchSteps.shift();
    if (s === undefined) {
      await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
      return;
    }
    for (const e of s.events) yield e;
    if (s.gone) throw new ApiError(410, 'Expired', 'too old resource version');
  }
}

/**
 * Slices from a reflector, through an informer's cache, into the feed (as the proxy wires them); after
 * each slice fed, what the two Services keep.
 */
async function play(feed: TopologyFeed, script: Script, until: () => boolean) {
  const seen: { changed: string[]; web: string[]; api: string[] }[] = [];
  const fed = (key: string, s: KObject | undefined) => {
    const changed = feed.slice(key, s);
    seen.push({ changed: [...changed].sort(), web: kept(feed, 'web'), api: kept(feed, 'api') });
  };
  const cache = new Indexer();
  cache.addHandlers({
    onAdd: (s) => fed(objectKeyOf(s), s),
    onUpdate: (_old, s) => fed(objectKeyOf(s), s),
    onDelete: (s) => fed(objectKeyOf(s), undefined),
  });
  const r = new Reflector(script, cache, { random: () => 0, sleep: async () => {} });
  r.start();
  for (let i = 0; i < 200 && !until(); i++) await new Promise((res) => setImmediate(res));
  await r.stop();
  return seen;
}

const list = (rv: string, items: KObject[]): ObjectList => ({ metadata: { resourceVersion: rv }, items });

describe('TopologyFeed', () => {
  it('moves a slice relabelled on a watch MODIFIED from the old Service’s view to the new one’s', async () => {
    const { feed } = feedOf();
    const script = new Script(
      [list('1', [slice('s1', 'web', '10.0.0.1')])],
      [{ events: [{ type: 'MODIFIED', object: slice('s1', 'api', '10.0.0.1', '2') }], gone: false }],
    );
    const seen = await play(feed, script, () => script.watches >= 2);
    assert.deepEqual(seen, [
      { changed: ['default/web'], web: ['10.0.0.1'], api: [] },
      { changed: ['default/api', 'default/web'], web: [], api: ['10.0.0.1'] },
    ]);
    assert.equal(feed.serviceOf('default/s1'), 'default/api');
    assert.deepEqual([...feed.index.sliceNames('default/web')], []);
    assert.deepEqual([...feed.index.sliceNames('default/api')], ['s1']);
  });

  it('moves a slice a relist finds relabelled, and a slice gone meanwhile leaves its view', async () => {
    const { feed } = feedOf();
    const script = new Script(
      [
        list('1', [slice('s1', 'web', '10.0.0.1'), slice('s2', 'api', '10.0.0.2')]),
        // After the 410: s1 names `api` now, s2 is gone.
        list('9', [slice('s1', 'api', '10.0.0.1', '8')]),
      ],
      [{ events: [], gone: true }],
    );
    const seen = await play(feed, script, () => script.lists >= 2 && script.watches >= 2);
    assert.deepEqual(seen, [
      { changed: ['default/web'], web: ['10.0.0.1'], api: [] },
      { changed: ['default/api'], web: ['10.0.0.1'], api: ['10.0.0.2'] },
      // The relist's deletions come first, then its updates (the informer's order).
      { changed: ['default/api'], web: ['10.0.0.1'], api: [] },
      { changed: ['default/api', 'default/web'], web: [], api: ['10.0.0.1'] },
    ]);
    assert.equal(feed.serviceOf('default/s2'), undefined);
  });

  it('fed by key alone (the wrapper’s mirrors): a move, an unlabelled slice, a removal', () => {
    const { feed } = feedOf();
    assert.deepEqual(feed.slice('default/s1', slice('s1', 'web', '10.0.0.1')), ['default/web']);
    assert.deepEqual(feed.slice('default/s1', slice('s1', 'api', '10.0.0.1', '2')), [
      'default/web',
      'default/api',
    ]);
    assert.deepEqual([kept(feed, 'web'), kept(feed, 'api')], [[], ['10.0.0.1']]);
    // The label dropped: the slice belongs to no Service, and leaves `api`.
    assert.deepEqual(feed.slice('default/s1', slice('s1', undefined, '10.0.0.1', '3')), ['default/api']);
    assert.equal(feed.serviceOf('default/s1'), undefined);
    assert.deepEqual(feed.slice('default/s1', undefined), []);
    assert.deepEqual(feed.slice('default/s2', slice('s2', 'web', '10.0.0.2')), ['default/web']);
    assert.deepEqual(feed.slice('default/s2', undefined), ['default/web']);
    assert.deepEqual([kept(feed, 'web'), kept(feed, 'api')], [[], []]);
  });

  it('times each update of the index when asked: a move is two', () => {
    const times: number[] = [];
    const { feed } = feedOf({ recomputeSeconds: (s) => times.push(s) });
    times.length = 0;
    feed.slice('default/s1', slice('s1', 'web', '10.0.0.1'));
    assert.equal(times.length, 1);
    feed.slice('default/s1', slice('s1', 'api', '10.0.0.1', '2'));
    assert.equal(times.length, 3);
    feed.health(NODE, false);
    feed.endpoints('default/web', undefined);
    assert.equal(times.length, 5);
    assert.ok(times.every((s) => s >= 0));
  });

  it('a node’s health reaches the views, and a node’s going the index', () => {
    const { feed } = feedOf();
    feed.slice('default/s1', slice('s1', 'web', '10.0.0.1'));
    assert.deepEqual(feed.health(NODE, false), ['default/web']);
    assert.deepEqual(kept(feed, 'web'), []);
    assert.deepEqual(feed.health(NODE, undefined), ['default/web']);
    assert.deepEqual(kept(feed, 'web'), ['10.0.0.1']);
    assert.equal(feed.index.stats().nodes, 1);
    // No topology rule reads this node's labels: its going changes no view.
    assert.deepEqual(feed.node(NODE, undefined), []);
    assert.equal(feed.index.stats().nodes, 0);
  });

  it('says at the initial sync whether this node is in the upstream, then when it comes and goes', () => {
    const { feed, lines } = feedOf();
    feed.initialSyncDone();
    assert.deepEqual(lines, []);
    feed.node(NODE, undefined);
    assert.match(lines[0]!, /^warn this node is not in the upstream/);
    feed.node('edge-1', undefined);
    feed.node(NODE, { apiVersion: 'v1', kind: 'Node', metadata: { name: NODE, labels: { a: 'b' } } });
    assert.match(lines[1]!, /^info this node is in the upstream now/);
    assert.equal(lines.length, 2);

    const missing = bare();
    missing.feed.initialSyncDone();
    assert.equal(missing.lines.length, 1);
    assert.match(missing.lines[0]!, /^warn this node is not in the upstream/);
  });

  it('its reflector options log the upstream going away before the initial sync, with the given words', () => {
    const messages = { startDown: 'away at the start', down: 'away', back: 'back' };
    const { feed, lines } = bare({ inSync: () => false, messages });
    feed.reflectorOptions.onError?.(new Error('connection refused'));
    feed.reflectorOptions.onError?.(new Error('connection refused'));
    assert.deepEqual(lines, ['warn away at the start']);
  });
});
