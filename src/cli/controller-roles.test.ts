// Every controller svcplane runs has its bootstrap role (system:controller:<name>), except the scheduler,
// which has system:kube-scheduler as upstream's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BOOTSTRAP_CLUSTER_ROLES, CONTROLLER_ROLES } from '../core/rbac/bootstrap-policy.js';
import { KNOWN_CONTROLLERS } from '../controllers/manager.js';

describe('bootstrap controller roles', () => {
  it('one per controller svcplane runs', () => {
    assert.deepEqual(
      Object.keys(CONTROLLER_ROLES).sort(),
      KNOWN_CONTROLLERS.filter((c) => c !== 'scheduler').sort(),
    );
    const names = new Set(BOOTSTRAP_CLUSTER_ROLES.map((r) => r.name));
    assert.ok(names.has('system:kube-scheduler'));
    for (const c of Object.values(CONTROLLER_ROLES)) assert.ok(names.has(`system:controller:${c.name}`));
  });
});
