// --controllers as kube-controller-manager reads it: '*', NAME and -NAME, in any order.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KNOWN_CONTROLLERS } from '../controllers/manager.js';
import { controllerList } from './controller-manager-command.js';
import { UsageError } from './flags.js';

describe('controllerList (--controllers)', () => {
  const all = [...KNOWN_CONTROLLERS];
  const cases: Array<[string | undefined, readonly string[]]> = [
    [undefined, all],
    ['*', all],
    ['endpoints', ['endpoints']],
    ['servicegrid,endpoints', ['endpoints', 'servicegrid']],
    ['*,-servicegrid', all.filter((c) => c !== 'servicegrid')],
    ['-servicegrid,*', all.filter((c) => c !== 'servicegrid')],
    ['-servicegrid,servicegrid,*', all.filter((c) => c !== 'servicegrid')],
    ['-servicegrid', []],
    [' endpoints , podgc ', ['endpoints', 'podgc']],
  ];
  for (const [raw, want] of cases) {
    it(`${JSON.stringify(raw)} → ${want.length === all.length ? 'all' : JSON.stringify(want)}`, () => {
      assert.deepEqual(controllerList(raw), want);
    });
  }
  it('refuses a name it does not know, with or without a minus', () => {
    assert.throws(() => controllerList('nope'), UsageError);
    assert.throws(() => controllerList('*,-nope'), /unknown controller "nope"/);
  });
});
