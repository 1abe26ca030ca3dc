import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import { sliceMove, sliceService } from './slice-service.js';

const sliceOf = (namespace: string | undefined, labels?: Record<string, string>): KObject => ({
  apiVersion: 'discovery.k8s.io/v1',
  kind: 'EndpointSlice',
  metadata: {
    name: 'web-abc',
    ...(namespace === undefined ? {} : { namespace }),
    ...(labels === undefined ? {} : { labels }),
  },
});

describe('sliceService', () => {
  it('is the namespace and the service-name label', () => {
    assert.equal(sliceService(sliceOf('prod', { 'kubernetes.io/service-name': 'web' })), 'prod/web');
    assert.equal(sliceService(sliceOf(undefined, { 'kubernetes.io/service-name': 'web' })), '/web');
  });

  it('is undefined for a slice that names no Service', () => {
    assert.equal(sliceService(sliceOf('prod')), undefined);
    assert.equal(sliceService(sliceOf('prod', { app: 'web' })), undefined);
  });
});

describe('sliceMove', () => {
  it('a new or updated slice joins its Service and leaves none', () => {
    assert.deepEqual(sliceMove(undefined, 'd/web'), { leave: undefined, join: 'd/web' });
    assert.deepEqual(sliceMove('d/web', 'd/web'), { leave: undefined, join: 'd/web' });
  });

  it('a relabelled slice leaves the old Service and joins the new one', () => {
    assert.deepEqual(sliceMove('d/web', 'd/api'), { leave: 'd/web', join: 'd/api' });
  });

  it('a slice gone, or naming no Service now, leaves the one it was under', () => {
    assert.deepEqual(sliceMove('d/web', undefined), { leave: 'd/web', join: undefined });
    assert.deepEqual(sliceMove(undefined, undefined), { leave: undefined, join: undefined });
  });
});
