// RBAC end to end: real kubectl against `svcplane up` (whose default mode is RBAC and whose admin is in
// system:masters), with one more user from --token-auth-file. alice is forbidden with kube-apiserver's
// message until a RoleBinding grants her a role; `kubectl auth can-i` answers with --as and --as-group
// and lists her rules; creating a Role with rules she lacks is refused with upstream's escalation
// message, and allowed once she may `escalate` roles.
//
// Needs the rbac.authorization.k8s.io kinds in the resource table (their rows, schemas and printers).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { formatTokenFileRecord } from '../../src/apiserver/auth/token-file.js';
import { KUBECTL, kubectlFor, type Kubectl } from './testing/kubectl.js';
import { startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-rbac-'));
const ADMIN = 'admin-token-0123456789abcdef';
const ALICE = 'alice-token-0123456789abcdef';

let srv: TestServer;
let k: Kubectl;

/** kubectl with ARGS; resolves to its exit code and output whatever the code. */
function run(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      KUBECTL,
      [`--cache-dir=${path.join(work, 'cache')}`, ...args],
      { env: { PATH: process.env['PATH'] ?? '', HOME: work, KUBECONFIG: srv.kubeconfig }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err === null ? 0 : Number(err.code ?? -1), stdout, stderr }),
    );
  });
}

/** `kubectl auth can-i ARGS`: "yes" (exit 0) or "no" (exit 1); anything else fails. */
async function canI(...args: string[]): Promise<string> {
  const r = await run(['auth', 'can-i', ...args]);
  const answer = r.stdout.trim();
  if ((r.code === 0 && answer === 'yes') || (r.code === 1 && answer === 'no')) return answer;
  throw new Error(`kubectl auth can-i ${args.join(' ')}: exit ${r.code}: ${r.stdout}${r.stderr}`);
}

before(async () => {
  // The admin token up would generate, written first so the token file can name it too.
  const dataDir = path.join(work, 'data');
  mkdirSync(path.join(dataDir, 'pki'), { recursive: true, mode: 0o700 });
  const admin = formatTokenFileRecord(ADMIN, { name: 'admin', uid: 'admin', groups: ['system:masters'] });
  writeFileSync(path.join(dataDir, 'pki', 'tokens.csv'), `${admin}\n`, { mode: 0o600 });
  const tokenFile = path.join(work, 'tokens.csv');
  writeFileSync(
    tokenFile,
    `${admin}\n${formatTokenFileRecord(ALICE, { name: 'alice', uid: 'alice', groups: ['devs'] })}\n`,
  );
  srv = await startUp({ dataDir, args: ['--token-auth-file', tokenFile] });
  k = kubectlFor(srv, work);
});

after(async () => {
  await srv?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('RBAC with kubectl', () => {
  it("forbids alice with kube-apiserver's message, then allows her once a RoleBinding grants a role", async () => {
    const denied = await run(['get', 'pods', '-n', 'default', `--token=${ALICE}`]);
    assert.equal(denied.code, 1, denied.stderr);
    assert.equal(
      denied.stderr.trim(),
      'Error from server (Forbidden): pods is forbidden: User "alice" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    await k(['create', 'clusterrole', 'pod-reader', '--verb=get,list,watch', '--resource=pods']);
    await k([
      'create',
      'rolebinding',
      'alice-reads',
      '--clusterrole=pod-reader',
      '--user=alice',
      '-n',
      'default',
    ]);
    // The authorizer sees the binding once the watch cache has applied it.
    await until(
      'alice may list pods',
      10_000,
      async () => (await run(['get', 'pods', '-n', 'default', `--token=${ALICE}`])).code === 0,
    );
    const elsewhere = await run(['get', 'pods', '-n', 'kube-system', `--token=${ALICE}`]);
    assert.match(
      elsewhere.stderr,
      /User "alice" cannot list resource "pods" in API group "" in the namespace "kube-system"/,
    );
  });

  it('answers kubectl auth can-i with --as, --as-group and --list', async () => {
    assert.equal(await canI('list', 'pods', '-n', 'default', '--as', 'alice'), 'yes');
    assert.equal(await canI('delete', 'pods', '-n', 'default', '--as', 'alice'), 'no');
    assert.equal(await canI('list', 'pods', '-n', 'default', '--as', 'bob'), 'no');
    await k([
      'create',
      'rolebinding',
      'devs-read',
      '--clusterrole=pod-reader',
      '--group=devs',
      '-n',
      'default',
    ]);
    await until(
      'bob in devs may list pods',
      10_000,
      async () =>
        (await canI('list', 'pods', '-n', 'default', '--as', 'bob', '--as-group', 'devs')) === 'yes',
    );
    // The bootstrap policy: every authenticated user may ask these.
    assert.equal(await canI('create', 'selfsubjectaccessreviews', '--as', 'bob'), 'yes');
    const list = await k(['auth', 'can-i', '--list', '-n', 'default', '--as', 'alice']);
    assert.match(list, /^pods\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
    assert.match(list, /^selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]$/m);
    assert.doesNotMatch(list, /^\*\.\*/m);
  });

  it('refuses a Role with rules alice does not hold, with 403 and the missing rules; escalate allows it', async () => {
    await k([
      'create',
      'role',
      'role-maker',
      '--verb=create,get,update',
      '--resource=roles',
      '-n',
      'default',
    ]);
    await k([
      'create',
      'rolebinding',
      'alice-makes-roles',
      '--role=role-maker',
      '--user=alice',
      '-n',
      'default',
    ]);
    await until(
      'alice may create roles',
      10_000,
      async () => (await canI('create', 'roles', '-n', 'default', '--as', 'alice')) === 'yes',
    );
    const create = [
      'create',
      'role',
      'sneaky',
      '--verb=get',
      '--resource=services',
      '-n',
      'default',
      `--token=${ALICE}`,
    ];
    const refused = await run(create);
    assert.equal(refused.code, 1, refused.stderr);
    assert.ok(
      refused.stderr.includes(
        'roles.rbac.authorization.k8s.io "sneaky" is forbidden: user "alice" ' +
          '(groups=["devs" "system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
          '{APIGroups:[""], Resources:["services"], Verbs:["get"]}',
      ),
      refused.stderr,
    );
    // Rules she holds are hers to give.
    await k([
      'create',
      'role',
      'pod-peek',
      '--verb=get',
      '--resource=pods',
      '-n',
      'default',
      `--token=${ALICE}`,
    ]);

    await k(['create', 'role', 'escalator', '--verb=escalate', '--resource=roles', '-n', 'default']);
    await k([
      'create',
      'rolebinding',
      'alice-escalates',
      '--role=escalator',
      '--user=alice',
      '-n',
      'default',
    ]);
    await until(
      'alice may escalate roles',
      10_000,
      async () => (await canI('escalate', 'roles', '-n', 'default', '--as', 'alice')) === 'yes',
    );
    await k(create);
    assert.match(
      await k(['get', 'role', 'sneaky', '-n', 'default', '-o', 'name']),
      /^role\.rbac\.authorization\.k8s\.io\/sneaky$/m,
    );
  });
});
