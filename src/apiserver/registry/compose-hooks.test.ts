// Composed registry hooks run in order; a later refusal gives back what the earlier ones took.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import type { ResourceInfo } from '../../api/resources.js';
import { composeHooks } from './compose-hooks.js';
import type { WriteContext } from './types.js';

const r = {} as ResourceInfo;
const obj = { metadata: {} } as KObject;
const ctx = {} as WriteContext;

describe('composeHooks', () => {
  it('undoes the earlier steps, last first, when a later one throws', async () => {
    const log: string[] = [];
    const hooks = composeHooks([
      { beforeCreate: async () => async () => void log.push('undo a') },
      { beforeCreate: async () => async () => void log.push('undo b') },
      {
        beforeCreate: async () => {
          throw new Error('refused');
        },
      },
    ]);
    await assert.rejects(hooks.beforeCreate!(r, obj, ctx), /refused/);
    assert.deepEqual(log, ['undo b', 'undo a']);
  });

  it('returns one undo for all the steps, and none when no step took anything', async () => {
    const log: string[] = [];
    const undo = await composeHooks([
      { beforeUpdate: async () => async () => void log.push('a') },
      {},
      { beforeUpdate: async () => async () => void log.push('b') },
    ]).beforeUpdate!(r, obj, obj, ctx);
    await undo!();
    assert.deepEqual(log, ['b', 'a']);
    assert.equal(await composeHooks([{}, {}]).beforeCreate!(r, obj, ctx), undefined);
  });
});
