// authentication.k8s.io/v1 TokenReview with the real kubectl against `svcplane up`: discovery lists
// tokenreviews (create only), a TokenReview of a `kubectl create token` token authenticates as the
// ServiceAccount, a garbage token authenticates no one, and who may ask is RBAC's: a ServiceAccount
// bound to the bootstrap ClusterRole system:auth-delegator may, one bound to nothing may not.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startUp, type TestServer } from './testing/server.js';
import { kubectlFor, type Kubectl } from './testing/kubectl.js';

const NS = 'tokenreview-e2e';

interface TokenReview {
  readonly kind: string;
  readonly status: {
    readonly authenticated?: boolean;
    readonly user: { readonly username?: string; readonly uid?: string; readonly groups?: string[] };
    readonly audiences?: string[];
  };
}

describe('TokenReview with kubectl', () => {
  let srv: TestServer;
  let kubectl: Kubectl;
  let home: string;

  before(async () => {
    home = mkdtempSync(path.join(tmpdir(), 'svcplane-tokenreview-'));
    srv = await startUp();
    kubectl = kubectlFor(srv, home);
    await kubectl(['create', 'namespace', NS]);
    for (const sa of ['builder', 'reviewer', 'nobody'])
      await kubectl(['-n', NS, 'create', 'serviceaccount', sa]);
  });
  after(async () => {
    await srv?.destroy();
    rmSync(home, { recursive: true, force: true });
  });

  const tokenOf = async (sa: string): Promise<string> =>
    (await kubectl(['-n', NS, 'create', 'token', sa])).trim();
  const manifest = (token: string): string =>
    JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
  const review = async (token: string, as?: string): Promise<TokenReview> =>
    JSON.parse(
      await kubectl(
        [...(as === undefined ? [] : [`--token=${as}`]), 'create', '-f', '-', '-o', 'json'],
        manifest(token),
      ),
    ) as TokenReview;

  it('lists tokenreviews in api-resources, create only', async () => {
    const lines = (await kubectl(['api-resources', '--api-group=authentication.k8s.io', '-o', 'wide'])).split(
      '\n',
    );
    const row = lines.find((l) => l.startsWith('tokenreviews '));
    assert.ok(row !== undefined, lines.join('\n'));
    assert.match(row, /\sauthentication\.k8s\.io\/v1\s+false\s+TokenReview\s+create(\s|$)/);
  });

  it("authenticates a ServiceAccount's token as the account, and a garbage token as no one", async () => {
    const uid = (await kubectl(['-n', NS, 'get', 'sa', 'builder', '-o', 'jsonpath={.metadata.uid}'])).trim();
    const r = await review(await tokenOf('builder'));
    assert.equal(r.kind, 'TokenReview');
    assert.equal(r.status.authenticated, true);
    assert.equal(r.status.user.username, `system:serviceaccount:${NS}:builder`);
    assert.equal(r.status.user.uid, uid);
    assert.deepEqual(r.status.user.groups, [
      'system:serviceaccounts',
      `system:serviceaccounts:${NS}`,
      'system:authenticated',
    ]);
    assert.ok((r.status.audiences ?? []).length > 0, "valid for the server's own audiences");
    const garbage = await review('not-a-token');
    assert.notEqual(garbage.status.authenticated, true);
    assert.deepEqual(garbage.status.user, {});
  });

  it('lets whoever is bound to system:auth-delegator ask, and no one else', async () => {
    await kubectl([
      'create',
      'clusterrolebinding',
      'tokenreview-e2e-delegator',
      '--clusterrole=system:auth-delegator',
      `--serviceaccount=${NS}:reviewer`,
    ]);
    const builder = await tokenOf('builder');
    const asked = await review(builder, await tokenOf('reviewer'));
    assert.equal(asked.status.user.username, `system:serviceaccount:${NS}:builder`);
    await assert.rejects(review(builder, await tokenOf('nobody')), (e: Error) =>
      /tokenreviews\.authentication\.k8s\.io is forbidden: User "system:serviceaccount:tokenreview-e2e:nobody" cannot create resource "tokenreviews" in API group "authentication\.k8s\.io" at the cluster scope/.test(
        e.message,
      ),
    );
  });

  it('refuses a review without a token with 400', async () => {
    await assert.rejects(kubectl(['create', '-f', '-'], manifest('')), (e: Error) =>
      /token is required for TokenReview in authentication/.test(e.message),
    );
  });
});
