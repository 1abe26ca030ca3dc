// SelfSubjectAccessReview and SelfSubjectReview: what a spec asks the authorizer, and the API server's
// answers to a user the policy only lets read (who may still ask), through the real handler.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  startInProcessApiServer,
  type InProcessApiServer,
} from '../../../test/support/in-process-apiserver.js';
import { authenticate } from '../auth/authenticator.js';
import { formatTokenFileRecord, parseTokenFile } from '../auth/token-file.js';
import { SYSTEM_MASTERS } from '../auth/types.js';
import { accessReviewAttributes } from './reviews.js';
import type { AuthorizationAttributes } from './types.js';

/** A JSON answer: a review or a Status. */
interface Reply {
  readonly [k: string]: unknown;
  readonly status?: { allowed?: boolean; userInfo?: unknown } | string;
  readonly reason?: string;
  readonly message?: string;
}

const ALICE = { name: 'alice', uid: 'a-1', groups: ['readers', 'system:authenticated'] };

describe('accessReviewAttributes()', () => {
  it('asks about a resource as the request itself would be asked', () => {
    assert.deepEqual(
      accessReviewAttributes(ALICE, {
        resourceAttributes: {
          namespace: 'ns',
          verb: 'get',
          group: 'apps',
          resource: 'deployments',
          subresource: 'scale',
          name: 'web',
          version: 'v1',
        },
      }),
      {
        attrs: {
          user: ALICE,
          verb: 'get',
          resourceRequest: true,
          apiGroup: 'apps',
          namespace: 'ns',
          resource: 'deployments',
          subresource: 'scale',
          name: 'web',
          path: '',
        },
      },
    );
  });

  it('asks about a path', () => {
    const got = accessReviewAttributes(ALICE, { nonResourceAttributes: { path: '/healthz', verb: 'get' } });
    assert.ok('attrs' in got);
    assert.deepEqual([got.attrs.resourceRequest, got.attrs.path, got.attrs.verb], [false, '/healthz', 'get']);
  });

  it("wants exactly one of the two, with kube-apiserver's field errors", () => {
    assert.deepEqual(accessReviewAttributes(ALICE, {}), {
      errors: [
        {
          type: 'FieldValueInvalid',
          field: 'spec.resourceAttributes',
          badValue: null,
          detail: 'exactly one of nonResourceAttributes or resourceAttributes must be specified',
        },
      ],
    });
    const both = accessReviewAttributes(ALICE, {
      resourceAttributes: { verb: 'get' },
      nonResourceAttributes: { path: '/x', verb: 'get' },
    });
    assert.ok('errors' in both);
    assert.equal(both.errors[0]!.field, 'spec.nonResourceAttributes');
    assert.equal(both.errors[0]!.detail, 'cannot be specified in combination with resourceAttributes');
  });
});

describe('the review endpoints of the API server', () => {
  let api: InProcessApiServer;
  const tokens = { admin: 'admin-token', ro: 'ro-token' };
  // "ro" may only read; the admin may do anything.
  const authorize = (a: AuthorizationAttributes): boolean =>
    a.user.groups.includes(SYSTEM_MASTERS) || ['get', 'list', 'watch'].includes(a.verb);

  before(async () => {
    const table = parseTokenFile(
      [
        formatTokenFileRecord(tokens.admin, { name: 'admin', uid: 'admin-uid', groups: [SYSTEM_MASTERS] }),
        formatTokenFileRecord(tokens.ro, { name: 'ro', uid: 'ro-uid', groups: [] }),
      ].join('\n'),
    );
    api = await startInProcessApiServer({
      token: tokens.admin,
      auth: {
        // ro's rules, as the policy above would list them.
        rulesFor: (user) => ({
          resourceRules: user.groups.includes(SYSTEM_MASTERS)
            ? [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]
            : [{ verbs: ['get', 'list', 'watch'], apiGroups: ['*'], resources: ['*'] }],
          nonResourceRules: [],
          incomplete: false,
        }),
        authenticate: (req) => authenticate(req, { tokens: table }),
        authorize,
        forbiddenMessage: () => 'forbidden',
      },
    });
  });
  after(() => api.stop());

  async function post(token: string, path: string, body: unknown): Promise<{ status: number; json: Reply }> {
    const r = await api.transport(token).send({ method: 'POST', path, body: JSON.stringify(body) });
    let text = '';
    for await (const c of r.body) text += String(c);
    return { status: r.status, json: JSON.parse(text) as Reply };
  }
  const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
  const review = (resourceAttributes: Record<string, string>) => ({
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: { resourceAttributes },
  });

  it('lets a read-only user ask, and answers with its policy: yes to get, no to create (201 Created)', async () => {
    const yes = await post(
      tokens.ro,
      SSAR,
      review({ verb: 'get', resource: 'services', namespace: 'default' }),
    );
    assert.equal(yes.status, 201, JSON.stringify(yes.json));
    assert.deepEqual(yes.json, {
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      metadata: { creationTimestamp: null },
      spec: { resourceAttributes: { verb: 'get', resource: 'services', namespace: 'default' } },
      status: { allowed: true },
    });
    const no = await post(tokens.ro, SSAR, review({ verb: 'create', resource: 'services' }));
    assert.equal(no.status, 201);
    assert.equal((no.json.status as { allowed: boolean }).allowed, false);
    // The review is not a way around the policy for anything else: ro still may not create services.
    const create = await post(tokens.ro, '/api/v1/namespaces/default/services', { metadata: { name: 'x' } });
    assert.equal(create.status, 403);
  });

  it('tells each user who they are', async () => {
    const me = await post(tokens.ro, '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
    assert.equal(me.status, 201);
    assert.deepEqual(me.json['status'], {
      userInfo: { username: 'ro', uid: 'ro-uid', groups: ['system:authenticated'] },
    });
  });

  it('refuses a spec with neither or both attributes (422), another kind (400), other verbs (405)', async () => {
    const neither = await post(tokens.ro, SSAR, {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: {},
    });
    assert.equal(neither.status, 422);
    assert.equal(neither.json['reason'], 'Invalid');
    assert.match(
      String(neither.json.message),
      /SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": exactly one of/,
    );
    const wrongKind = await post(tokens.ro, SSAR, { apiVersion: 'v1', kind: 'Pod' });
    assert.equal(wrongKind.status, 400);
    const list = await api.transport(tokens.admin).send({ method: 'GET', path: SSAR });
    list.body.resume();
    assert.equal(list.status, 405);
    // A review is cluster-scoped: under a namespace there is nothing, and nothing bypasses the policy.
    const namespaced = await post(
      tokens.ro,
      '/apis/authorization.k8s.io/v1/namespaces/default/selfsubjectaccessreviews',
      review({ verb: 'get', resource: 'services' }),
    );
    assert.equal(namespaced.status, 403, 'ro may not create anything, and this is no self review');
  });

  it('lists the rules the server gives a user in a namespace; a namespace is required', async () => {
    const rules = await post(tokens.ro, '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: 'default' },
    });
    assert.equal(rules.status, 201);
    assert.deepEqual(rules.json.status, {
      resourceRules: [{ verbs: ['get', 'list', 'watch'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [],
      incomplete: false,
    });
    const none = await post(tokens.ro, '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: {},
    });
    assert.equal(none.status, 422);
    assert.match(String(none.json.message), /spec.namespace: Required value/);
  });

  it('answers a SubjectAccessReview for the user it names, to whoever may create one', async () => {
    const SAR = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
    const sar = (spec: Record<string, unknown>) => ({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { resourceAttributes: { verb: 'create', resource: 'services' }, ...spec },
    });
    // ro may not create reviews of others (it is no self review), whoever they name.
    assert.equal((await post(tokens.ro, SAR, sar({ user: 'ro' }))).status, 403);
    const ofMaster = await post(tokens.admin, SAR, sar({ user: 'bob', groups: [SYSTEM_MASTERS] }));
    assert.equal(ofMaster.status, 201);
    assert.deepEqual(ofMaster.json.status, { allowed: true });
    // Exactly the groups named: nothing is added for the subject.
    const ofBob = await post(tokens.admin, SAR, sar({ user: 'bob' }));
    assert.deepEqual(ofBob.json.status, { allowed: false });
    const nobody = await post(tokens.admin, SAR, sar({}));
    assert.equal(nobody.status, 422);
    assert.match(
      String(nobody.json.message),
      /spec.user: Invalid value: "": at least one of user or group must be specified/,
    );
  });

  it('lists them in discovery, create only', async () => {
    const r = await api
      .transport(tokens.admin)
      .send({ method: 'GET', path: '/apis/authorization.k8s.io/v1' });
    let text = '';
    for await (const c of r.body) text += String(c);
    assert.deepEqual(JSON.parse(text).resources, [
      {
        name: 'selfsubjectaccessreviews',
        singularName: 'selfsubjectaccessreview',
        namespaced: false,
        kind: 'SelfSubjectAccessReview',
        verbs: ['create'],
      },
      {
        name: 'selfsubjectrulesreviews',
        singularName: 'selfsubjectrulesreview',
        namespaced: false,
        kind: 'SelfSubjectRulesReview',
        verbs: ['create'],
      },
      {
        name: 'subjectaccessreviews',
        singularName: 'subjectaccessreview',
        namespaced: false,
        kind: 'SubjectAccessReview',
        verbs: ['create'],
      },
    ]);
  });
});
