// Applying the bootstrap policy: created once, unchanged after, repaired when subjects or rules go
// missing, never touching an object with autoupdate "false", and re-planned after a lost race.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../api/object.js';
import type { ResourceInfo } from '../../api/resources.js';
import { statusErrors } from '../../api/status.js';
import {
  BOOTSTRAP_CLUSTER_ROLE_BINDINGS,
  BOOTSTRAP_CLUSTER_ROLES,
} from '../../core/rbac/bootstrap-policy.js';
import { silentLogger } from '../../runtime/logger.js';
import { applyBootstrapPolicy, type BootstrapRegistry } from './rbac-bootstrap.js';
import { rbacRows } from './testing/rbac-rows.js';

/** The registry's reads and compare-and-swap writes over a map, with a hook to lose a race. */
class FakeRegistry implements BootstrapRegistry {
  readonly objects = new Map<string, KObject>();
  private rv = 0;
  beforeUpdate: (() => void) | undefined;
  private key = (r: ResourceInfo, name: string): string => `${r.resource}/${name}`;
  async get(r: ResourceInfo, _ns: string, name: string): Promise<KObject> {
    const o = this.objects.get(this.key(r, name));
    if (o === undefined) throw statusErrors.notFound(r, name);
    return structuredClone(o);
  }
  async create(r: ResourceInfo, _ns: string, body: unknown): Promise<KObject> {
    const o = structuredClone(body) as KObject;
    if (this.objects.has(this.key(r, o.metadata.name!)))
      throw statusErrors.alreadyExists(r, o.metadata.name!);
    o.metadata.resourceVersion = String(++this.rv);
    this.objects.set(this.key(r, o.metadata.name!), o);
    return o;
  }
  async update(
    r: ResourceInfo,
    _ns: string,
    name: string,
    body: unknown,
  ): Promise<{ object: KObject; created: boolean }> {
    this.beforeUpdate?.();
    const o = structuredClone(body) as KObject;
    const cur = this.objects.get(this.key(r, name))!;
    if (o.metadata.resourceVersion !== cur.metadata.resourceVersion) throw statusErrors.conflict(r, name);
    o.metadata.resourceVersion = String(++this.rv);
    this.objects.set(this.key(r, name), o);
    return { object: o, created: false };
  }
  async delete(r: ResourceInfo, _ns: string, name: string): Promise<{ object: KObject; deleted: boolean }> {
    const o = this.objects.get(this.key(r, name))!;
    this.objects.delete(this.key(r, name));
    return { object: o, deleted: true };
  }
}

const total = BOOTSTRAP_CLUSTER_ROLES.length + BOOTSTRAP_CLUSTER_ROLE_BINDINGS.length;

describe('applyBootstrapPolicy', () => {
  it('creates the policy once; a second start changes nothing', async () => {
    const reg = new FakeRegistry();
    assert.deepEqual(await applyBootstrapPolicy(reg, silentLogger, rbacRows), { created: total, updated: 0 });
    assert.deepEqual(await applyBootstrapPolicy(reg, silentLogger, rbacRows), { created: 0, updated: 0 });
    const admin = reg.objects.get('clusterrolebindings/cluster-admin') as unknown as Record<string, unknown>;
    assert.deepEqual(admin['subjects'], [
      { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'system:masters' },
    ]);
    assert.deepEqual((admin['metadata'] as { labels: unknown }).labels, {
      'kubernetes.io/bootstrapping': 'rbac-defaults',
    });
  });

  it('adds missing subjects and rules back, and leaves autoupdate "false" alone', async () => {
    const reg = new FakeRegistry();
    await applyBootstrapPolicy(reg, silentLogger, rbacRows);
    const binding = reg.objects.get('clusterrolebindings/system:basic-user') as unknown as Record<
      string,
      unknown
    >;
    binding['subjects'] = [{ kind: 'User', name: 'someone' }];
    const discovery = reg.objects.get('clusterroles/system:discovery') as unknown as Record<string, unknown>;
    discovery['rules'] = [];
    const pinned = reg.objects.get('clusterroles/system:public-info-viewer') as unknown as Record<
      string,
      unknown
    >;
    pinned['rules'] = [];
    (pinned['metadata'] as { annotations: Record<string, string> }).annotations = {
      'rbac.authorization.kubernetes.io/autoupdate': 'false',
    };
    assert.deepEqual(await applyBootstrapPolicy(reg, silentLogger, rbacRows), { created: 0, updated: 2 });
    assert.deepEqual(binding['subjects'], [{ kind: 'User', name: 'someone' }]);
    const repaired = reg.objects.get('clusterrolebindings/system:basic-user') as unknown as Record<
      string,
      unknown
    >;
    assert.equal((repaired['subjects'] as unknown[]).length, 2);
    assert.deepEqual(
      (reg.objects.get('clusterroles/system:public-info-viewer') as unknown as Record<string, unknown>)[
        'rules'
      ],
      [],
    );
  });

  it('reads and plans again after a lost compare-and-swap', async () => {
    const reg = new FakeRegistry();
    await applyBootstrapPolicy(reg, silentLogger, rbacRows);
    const b = reg.objects.get('clusterrolebindings/cluster-admin') as unknown as Record<string, unknown>;
    b['subjects'] = [];
    let raced = false;
    reg.beforeUpdate = () => {
      if (raced) return;
      raced = true;
      const cur = reg.objects.get('clusterrolebindings/cluster-admin')!;
      cur.metadata.resourceVersion = `${cur.metadata.resourceVersion}0`; // someone else wrote it
    };
    assert.deepEqual(await applyBootstrapPolicy(reg, silentLogger, rbacRows), { created: 0, updated: 1 });
    assert.equal(raced, true);
  });

  it('does nothing while the kinds are not served', async () => {
    const reg = new FakeRegistry();
    assert.deepEqual(await applyBootstrapPolicy(reg, silentLogger, () => undefined), {
      created: 0,
      updated: 0,
    });
    assert.equal(reg.objects.size, 0);
  });
});
