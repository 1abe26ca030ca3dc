// The RBAC kinds as gogo-protobuf lays out what kubectl's typed clients send (`kubectl create role`,
// `kubectl create rolebinding`, `kubectl auth reconcile`): every non-pointer field written, empty ones
// included, decoded to the JSON Go would have written.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeProtobufObject } from './index.js';
import { enc, envelope, objectMeta, type Enc } from './testing/encode.js';

const RBAC = 'rbac.authorization.k8s.io';
const decode = (kind: string, raw: Enc): unknown =>
  decodeProtobufObject(envelope(`${RBAC}/v1`, kind, raw), { group: RBAC, version: 'v1', kind });

/** PolicyRule {1 verbs, 2 apiGroups, 3 resources, 4 resourceNames, 5 nonResourceURLs}. */
const rule = (verbs: string[], groups: string[], resources: string[], urls: string[] = []): Enc => {
  const e = enc();
  for (const v of verbs) e.string(1, v);
  for (const g of groups) e.string(2, g);
  for (const r of resources) e.string(3, r);
  for (const u of urls) e.string(5, u);
  return e;
};

describe('RBAC protobuf tables', () => {
  it('decodes the Role kubectl create role sends', () => {
    const raw = enc()
      .message(1, objectMeta('pod-reader', 'default'))
      .message(2, rule(['get', 'list'], [''], ['pods']));
    assert.deepEqual(decode('Role', raw), {
      apiVersion: `${RBAC}/v1`,
      kind: 'Role',
      metadata: { name: 'pod-reader', namespace: 'default' },
      rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }],
    });
  });

  it('decodes a ClusterRole with non-resource URLs and an aggregation rule', () => {
    const selector = enc().entry(1, 'team', 'a');
    const raw = enc()
      .message(1, objectMeta('agg'))
      .message(2, rule(['get'], [], [], ['/healthz']))
      .message(3, enc().message(1, selector));
    assert.deepEqual(decode('ClusterRole', raw), {
      apiVersion: `${RBAC}/v1`,
      kind: 'ClusterRole',
      metadata: { name: 'agg' },
      rules: [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }],
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { team: 'a' } }] },
    });
  });

  it('decodes bindings: roleRef kept whole, empty subject apiGroup and namespace dropped', () => {
    const subject = (kind: string, group: string, name: string, ns: string): Enc =>
      enc().string(1, kind).string(2, group).string(3, name).string(4, ns);
    const roleRef = enc().string(1, RBAC).string(2, 'Role').string(3, 'pod-reader');
    const raw = enc()
      .message(1, objectMeta('rb', 'default'))
      .message(2, subject('User', RBAC, 'alice', ''))
      .message(2, subject('ServiceAccount', '', 'builder', 'ci'))
      .message(3, roleRef);
    const want = (kind: string): unknown => ({
      apiVersion: `${RBAC}/v1`,
      kind,
      metadata: { name: 'rb', namespace: 'default' },
      subjects: [
        { kind: 'User', apiGroup: RBAC, name: 'alice' },
        { kind: 'ServiceAccount', name: 'builder', namespace: 'ci' },
      ],
      roleRef: { apiGroup: RBAC, kind: 'Role', name: 'pod-reader' },
    });
    assert.deepEqual(decode('RoleBinding', raw), want('RoleBinding'));
    assert.deepEqual(decode('ClusterRoleBinding', raw), want('ClusterRoleBinding'));
  });
});
