import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mustFindResource } from '../api/resources.js';
import type { ChangeEvent } from '../core/dashboard/types.js';
import { silentLogger } from '../runtime/logger.js';
import { startInProcessApiServer, type InProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { DashboardFeed } from './feed.js';

const NODES = mustFindResource('', 'nodes');
const SERVICES = mustFindResource('', 'services');

describe('DashboardFeed: the watches into the model, changes batched', () => {
  let api: InProcessApiServer;
  let feed: DashboardFeed;
  before(async () => {
    api = await startInProcessApiServer();
    await api.client.create(NODES, '', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } });
    feed = new DashboardFeed({ client: api.client, log: silentLogger, batchMs: 20 });
    await feed.start();
  });
  after(async () => {
    await feed.stop();
    await api.stop();
  });

  it('has listed what exists once started', () => {
    const l = feed.world.layout({});
    assert.deepEqual(
      l.rows.map((r) => r.node),
      ['n1'],
    );
    assert.ok(l.columns.some((c) => c.key === 'default/kubernetes'));
  });

  it('tells subscribers of a relabel and a new Service, the node named once', async () => {
    const got: ChangeEvent[] = [];
    const unsubscribe = feed.subscribe((e) => got.push(e));
    const first = new Promise<void>((resolve) => feed.subscribe(() => resolve()));
    const node = await api.client.get(NODES, '', 'n1');
    await Promise.all([
      api.client.update(NODES, { ...node, metadata: { ...node.metadata, labels: { unit: 'u1' } } }),
      api.client.create(SERVICES, 'default', {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'web', namespace: 'default' },
        spec: { ports: [{ port: 80 }] },
      }),
    ]);
    await first;
    await new Promise((r) => setTimeout(r, 100));
    const nodes = got.flatMap((e) => e.nodes);
    const services = got.flatMap((e) => e.services);
    assert.deepEqual(nodes, ['n1']);
    assert.ok(services.includes('default/web'));
    assert.equal(feed.world.layout({ group: 'unit' }).rows[0]?.group, 'u1');
    unsubscribe();
  });
});
