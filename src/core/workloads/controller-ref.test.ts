import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OwnerReference } from '../../api/object.js';
import {
  adoptPatch,
  canAdopt,
  decideClaim,
  releasePatch,
  type ClaimDecision,
  type ClaimFacts,
} from './controller-ref.js';

const ref = (uid: string): OwnerReference => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  name: 'rs',
  uid,
  controller: true,
});

const facts = (over: Partial<ClaimFacts>): ClaimFacts => ({
  ownerUid: 'me',
  ownerBeingDeleted: false,
  controllerRef: undefined,
  selected: true,
  candidateBeingDeleted: false,
  ...over,
});

describe('decideClaim()', () => {
  const cases: Array<[string, Partial<ClaimFacts>, ClaimDecision]> = [
    ['ours and selected → keep', { controllerRef: ref('me') }, 'keep'],
    [
      'ours, selected, we are being deleted → keep',
      { controllerRef: ref('me'), ownerBeingDeleted: true },
      'keep',
    ],
    ['ours, no longer selected → release', { controllerRef: ref('me'), selected: false }, 'release'],
    [
      'ours, not selected, we are being deleted → ignore',
      { controllerRef: ref('me'), selected: false, ownerBeingDeleted: true },
      'ignore',
    ],
    ["someone else's → ignore", { controllerRef: ref('other') }, 'ignore'],
    ["someone else's, not selected → ignore", { controllerRef: ref('other'), selected: false }, 'ignore'],
    ['orphan, selected → adopt', {}, 'adopt'],
    ['orphan, not selected → ignore', { selected: false }, 'ignore'],
    ['orphan being deleted → ignore', { candidateBeingDeleted: true }, 'ignore'],
    ['orphan, we are being deleted → ignore', { ownerBeingDeleted: true }, 'ignore'],
  ];
  for (const [name, over, want] of cases) it(name, () => assert.equal(decideClaim(facts(over)), want));
});

describe('patches', () => {
  it('adopt adds the controllerRef with the uid precondition', () => {
    assert.deepEqual(adoptPatch(ref('me'), 'pod-uid'), {
      metadata: { ownerReferences: [ref('me')], uid: 'pod-uid' },
    });
  });
  it('release deletes our reference by uid', () => {
    assert.deepEqual(
      JSON.stringify(releasePatch('me', 'pod-uid')),
      '{"metadata":{"ownerReferences":[{"$patch":"delete","uid":"me"}],"uid":"pod-uid"}}',
    );
  });
});

describe('canAdopt()', () => {
  const wanted = { namespace: 'default', name: 'rs', uid: 'me' };
  it('allows a live owner with the same uid', () => {
    assert.equal(canAdopt(wanted, { metadata: { uid: 'me' } }), undefined);
  });
  it('refuses a gone or replaced owner', () => {
    assert.equal(canAdopt(wanted, undefined), 'original default/rs is gone: got uid , wanted me');
    assert.equal(
      canAdopt(wanted, { metadata: { uid: 'new' } }),
      'original default/rs is gone: got uid new, wanted me',
    );
  });
  it('refuses an owner being deleted', () => {
    assert.equal(
      canAdopt(wanted, { metadata: { uid: 'me', deletionTimestamp: '2024-01-01T00:00:00Z' } }),
      'default/rs has just been deleted at 2024-01-01T00:00:00Z',
    );
  });
});
