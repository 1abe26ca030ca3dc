// The retry decision: which etcd failures are transient and whether the request may have landed, how
// the budget bounds the retries, and that a non-safe request is never sent twice after it may have landed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Retrier, transientFailure, type RetryReason } from './etcd-retry.js';

const grpc = (code: number, name: string, details: string): Error =>
  Object.assign(new Error(`${code} ${name}: ${details}`), { name: 'GRPCGenericError' });

describe('transientFailure', () => {
  const table: [string, Error, ReturnType<typeof transientFailure>][] = [
    [
      'connection refused (never sent)',
      new Error('connect ECONNREFUSED 127.0.0.1:2379'),
      { reason: 'member_down', mayHaveApplied: false },
    ],
    [
      'broken circuit (never sent)',
      Object.assign(new Error('Execution prevented because the circuit breaker is open'), {
        name: 'BrokenCircuitError',
      }),
      { reason: 'member_down', mayHaveApplied: false },
    ],
    [
      'no leader (refused before a proposal)',
      grpc(14, 'UNAVAILABLE', 'etcdserver: no leader'),
      { reason: 'leader_election', mayHaveApplied: false },
    ],
    [
      'leader changed (may have landed)',
      grpc(14, 'UNAVAILABLE', 'etcdserver: leader changed'),
      { reason: 'leader_election', mayHaveApplied: true },
    ],
    [
      'request timed out',
      grpc(14, 'UNAVAILABLE', 'etcdserver: request timed out, possibly due to previous leader failure'),
      { reason: 'timeout', mayHaveApplied: true },
    ],
    [
      'client deadline',
      grpc(4, 'DEADLINE_EXCEEDED', 'Deadline exceeded'),
      { reason: 'timeout', mayHaveApplied: true },
    ],
    [
      'connection reset',
      grpc(14, 'UNAVAILABLE', 'read ECONNRESET'),
      { reason: 'connection_reset', mayHaveApplied: true },
    ],
    [
      'compacted (not transient)',
      grpc(11, 'OUT_OF_RANGE', 'etcdserver: mvcc: required revision has been compacted'),
      undefined,
    ],
    ['too large (not transient)', grpc(3, 'INVALID_ARGUMENT', 'etcdserver: request is too large'), undefined],
    ['a StoreError-like conflict', new Error('Operation cannot be fulfilled'), undefined],
  ];
  for (const [name, err, want] of table) it(name, () => assert.deepEqual(transientFailure(err), want));
});

/** A fake clock: sleeping advances it. */
function clock(): { now: () => number; sleep: (ms: number) => Promise<void>; slept: number[] } {
  let t = 0;
  const slept: number[] = [];
  return {
    now: () => t,
    sleep: async (ms) => {
      slept.push(ms);
      t += ms;
    },
    slept,
  };
}

const NO_LEADER = grpc(14, 'UNAVAILABLE', 'etcdserver: no leader');
const RESET = grpc(14, 'UNAVAILABLE', 'read ECONNRESET');

describe('Retrier', () => {
  it('retries a safe request until it succeeds, counting each retry, and tells it when an attempt may have landed', async () => {
    const c = clock();
    const counted: [string, RetryReason][] = [];
    const r = new Retrier({ budgetMs: 10_000, ...c, onRetry: (op, reason) => counted.push([op, reason]) });
    const fails = [NO_LEADER, RESET, NO_LEADER];
    const seen: boolean[] = [];
    const got = await r.run('create', 'safe', async (ambiguous) => {
      seen.push(ambiguous);
      const f = fails.shift();
      if (f) throw f;
      return 'ok';
    });
    assert.equal(got, 'ok');
    assert.deepEqual(seen, [false, false, true, true], 'ambiguous from the reset on, and it stays so');
    assert.deepEqual(counted, [
      ['create', 'leader_election'],
      ['create', 'connection_reset'],
      ['create', 'leader_election'],
    ]);
    assert.equal(c.slept.length, 3);
    assert.ok(c.slept[1]! > c.slept[0]!, 'the wait grows');
  });

  it('gives up with the last failure once the budget is spent', async () => {
    const c = clock();
    let attempts = 0;
    const r = new Retrier({ budgetMs: 1000, ...c });
    await assert.rejects(
      r.run('get', 'safe', async () => {
        attempts++;
        throw NO_LEADER;
      }),
      (err) => err === NO_LEADER,
    );
    const total = c.slept.reduce((a, b) => a + b, 0);
    assert.ok(total <= 1000, `slept ${total} ms within a 1000 ms budget`);
    assert.ok(attempts >= 4, `${attempts} attempts`);
    assert.equal(attempts, c.slept.length + 1);
  });

  it('a budget of 0 never retries', async () => {
    let attempts = 0;
    const r = new Retrier({ budgetMs: 0, ...clock() });
    await assert.rejects(r.run('get', 'safe', async () => (attempts++, Promise.reject(NO_LEADER))));
    assert.equal(attempts, 1);
  });

  it('retries an unsafe request only when it certainly did not land', async () => {
    const r = new Retrier({ budgetMs: 10_000, ...clock() });
    let attempts = 0;
    const fails = [NO_LEADER, RESET];
    await assert.rejects(
      r.run('other', 'unsafe', async () => {
        attempts++;
        throw fails.shift()!;
      }),
      (err) => err === RESET,
    );
    assert.equal(attempts, 2, 'sent again after "no leader", not after a reset');
  });

  it('does not retry a failure that is not transient', async () => {
    const r = new Retrier({ budgetMs: 10_000, ...clock() });
    let attempts = 0;
    const conflict = new Error('conflict');
    await assert.rejects(
      r.run('update', 'safe', async () => {
        attempts++;
        throw conflict;
      }),
      (err) => err === conflict,
    );
    assert.equal(attempts, 1);
  });
});
