import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mustFindResource } from '../api/resources.js';
import type { KObject } from '../api/object.js';
import { startInProcessApiServer, type InProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { ClientEventRecorder } from './events.js';

const EVENTS = mustFindResource('', 'events');

describe('ClientEventRecorder against the API server', () => {
  let api: InProcessApiServer;
  before(async () => (api = await startInProcessApiServer()));
  after(async () => api.stop());

  const about = {
    kind: 'ReplicaSet',
    apiVersion: 'apps/v1',
    namespace: 'default',
    name: 'web-5d4f',
    uid: 'u1',
  };
  const listed = async (): Promise<KObject[]> =>
    (await api.client.list(EVENTS, { namespace: 'default' })).items.filter(
      (e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === about.name,
    );

  it('writes every event of a burst recorded in one millisecond (none lost to a shared name)', async () => {
    const errors: unknown[] = [];
    const at = new Date('2026-11-27T11:00:00.123Z');
    const rec = new ClientEventRecorder(api.client, {
      component: 'replicaset-controller',
      now: () => at,
      onError: (e) => errors.push(e),
    });
    await Promise.all(
      ['a', 'b', 'c', 'd', 'e'].map((p) =>
        rec.record(about, 'Normal', 'SuccessfulCreate', `Created pod: web-5d4f-${p}`),
      ),
    );
    assert.deepEqual(errors, []);
    const events = await listed();
    assert.equal(events.length, 5);
    assert.equal(new Set(events.map((e) => e.metadata.name)).size, 5);
    // A repeat bumps the count of the Event already written, as client-go's recorder does.
    await rec.record(about, 'Normal', 'SuccessfulCreate', 'Created pod: web-5d4f-a');
    const again = await listed();
    assert.equal(again.length, 5);
    assert.deepEqual(again.map((e) => (e as { count?: number }).count).sort(), [1, 1, 1, 1, 2]);
  });

  it('a name another recorder took first is retried with the next one', async () => {
    const at = new Date('2026-11-27T11:00:01.000Z');
    const errors: unknown[] = [];
    const mk = () =>
      new ClientEventRecorder(api.client, { component: 'x', now: () => at, onError: (e) => errors.push(e) });
    const one = mk();
    const two = mk(); // a second process's recorder: the same first suffix
    await one.record({ ...about, name: 'other' }, 'Normal', 'R', 'one');
    await two.record({ ...about, name: 'other' }, 'Normal', 'R', 'two');
    assert.deepEqual(errors, []);
    const names = (await api.client.list(EVENTS, { namespace: 'default' })).items
      .filter((e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === 'other')
      .map((e) => e.metadata.name);
    assert.equal(new Set(names).size, 2);
  });
});
