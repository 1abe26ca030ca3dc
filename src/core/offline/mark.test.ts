// The offline mark: its format read back, and the condition `svcplane explain` prints for marked objects.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { OFFLINE_ANNOTATION, offlineCondition, readOfflineMark, withOfflineMark } from './mark.js';

const obj = (name: string, annotations?: Record<string, string>): KObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: { name, ...(annotations === undefined ? {} : { annotations }) },
});

describe('offline mark', () => {
  it('reads back what it writes, keeping the other annotations; anything else is no mark', () => {
    const marked = withOfflineMark(obj('a', { x: 'y' }), { since: '2026-12-06T14:00:00Z', endpoints: 2 });
    assert.deepEqual(marked.metadata.annotations, {
      x: 'y',
      [OFFLINE_ANNOTATION]: '{"since":"2026-12-06T14:00:00Z","endpoints":2}',
    });
    assert.deepEqual(readOfflineMark(marked), { since: '2026-12-06T14:00:00Z', endpoints: 2 });
    for (const bad of ['', 'yes', '{}', '{"since":"x"}', '[1]'])
      assert.equal(readOfflineMark(obj('b', { [OFFLINE_ANNOTATION]: bad })), undefined, bad);
  });

  it('the condition names the marked objects, the earliest since and the endpoints summed', () => {
    assert.equal(offlineCondition([obj('a'), obj('b', { other: '1' })]), undefined);
    const c = offlineCondition([
      withOfflineMark(obj('a'), { since: '2026-12-06T14:05:00Z', endpoints: 1 }),
      obj('b'),
      withOfflineMark(obj('c'), { since: '2026-12-06T14:00:00Z', endpoints: 2 }),
    ])!;
    assert.equal(c.type, 'OfflineLocalPods');
    assert.equal(c.reason, 'RewrittenFromKubelet');
    assert.deepEqual([c.since, c.objects, c.endpoints], ['2026-12-06T14:00:00Z', ['a', 'c'], 3]);
    assert.match(
      c.message,
      /kubelet while the upstream API server was away \(since 2026-12-06T14:00:00Z\): 3 endpoints/,
    );
  });
});
