import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { guaranteedUpdate, MAX_CONFLICT_RETRIES } from './guaranteed-update.js';

class Conflict extends Error {}
const isConflict = (err: unknown): boolean => err instanceof Conflict;

describe('guaranteedUpdate()', () => {
  it('reads again and decides again after a conflicting write, until the write wins', async () => {
    let reads = 0;
    const seen: number[] = [];
    const result = await guaranteedUpdate(
      async () => ++reads,
      (current) => {
        seen.push(current);
        return {
          write: async () => {
            if (current < 3) throw new Conflict();
            return `written at ${current}`;
          },
        };
      },
      isConflict,
    );
    assert.equal(result, 'written at 3');
    assert.deepEqual(seen, [1, 2, 3]);
  });

  it('answers without writing when tryUpdate is done', async () => {
    assert.equal(
      await guaranteedUpdate(
        async () => 1,
        () => ({ done: 'unchanged' }),
        isConflict,
      ),
      'unchanged',
    );
  });

  it('does not retry a pinned write, other errors, or errors of read and tryUpdate', async () => {
    let writes = 0;
    await assert.rejects(
      guaranteedUpdate(
        async () => 0,
        () => ({ write: () => Promise.reject(new Conflict(String(++writes))), pinned: true }),
        isConflict,
      ),
      Conflict,
    );
    assert.equal(writes, 1);
    await assert.rejects(
      guaranteedUpdate(
        async () => 0,
        () => ({ write: () => Promise.reject(new Error(String(++writes))) }),
        isConflict,
      ),
      /^Error: 2$/,
    );
    let decisions = 0;
    await assert.rejects(
      guaranteedUpdate(
        async () => 0,
        () => {
          decisions++;
          throw new Conflict();
        },
        isConflict,
      ),
      Conflict,
    );
    assert.equal(decisions, 1);
  });

  it(`gives up after ${MAX_CONFLICT_RETRIES} retries with the last conflict`, async () => {
    let writes = 0;
    await assert.rejects(
      guaranteedUpdate(
        async () => 0,
        () => ({ write: () => Promise.reject(new Conflict()).finally(() => writes++) }),
        isConflict,
      ),
      Conflict,
    );
    assert.equal(writes, MAX_CONFLICT_RETRIES + 1);
  });
});
