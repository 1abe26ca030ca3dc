// deploy/ as a cluster would take it: rendered by the real `kubectl kustomize` (the base, the edge-health
// component, an image override), every object validated against the Kubernetes OpenAPI schemas
// (kubernetes-models), the CRDs equal to `svcplane crds`, every container bounded and non-root, and
// every role's rules exactly the ones docs/deploy.md derives from the code: widening a role in the
// manifests, or in the table without the manifests, fails here.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { gridCRDs } from '../../src/api/schema/crds.js';
import { crdsCommand } from '../../src/cli/crds-command.js';
import { superEdgeFlags } from '../../src/cli/superedge-flags.js';
import { KNOWN_CONTROLLERS } from '../../src/controllers/manager.js';
import { loadKubeconfig } from '../../src/runtime/kubeconfig.js';
import { KUBECTL } from '../e2e/testing/kubectl.js';
import * as apiextensions from 'kubernetes-models/apiextensions.k8s.io/v1';
import * as apps from 'kubernetes-models/apps/v1';
import * as policy from 'kubernetes-models/policy/v1';
import * as rbac from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import * as core from 'kubernetes-models/v1';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DEPLOY = path.join(root, 'deploy');

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  [field: string]: unknown;
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
  nonResourceURLs?: string[];
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    readOnlyRootFilesystem?: boolean;
    allowPrivilegeEscalation?: boolean;
    capabilities?: { add?: string[]; drop?: string[] };
  };
}

interface PodSpec {
  serviceAccountName?: string;
  hostNetwork?: boolean;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
  initContainers?: Container[];
  containers: Container[];
  volumes?: { name: string; hostPath?: { path: string } }[];
}

const podSpecOf = (o: Obj): PodSpec => (o['spec'] as { template: { spec: PodSpec } }).template.spec;

/** `kubectl kustomize DIR` as objects. */
function render(dir: string): Obj[] {
  const out = execFileSync(KUBECTL, ['kustomize', dir], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return parseAllDocuments(out).flatMap((d) => {
    if (Array.isArray(d)) throw new Error('unexpected YAML stream');
    assert.deepEqual(d.errors, []);
    const o = d.toJS() as Obj | null;
    return o === null ? [] : [o];
  });
}

/** An overlay of the base in a directory of its own (kustomize takes only relative paths to it). */
function overlay(dir: string, body: (base: string) => string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'kustomization.yaml'), body(path.relative(dir, DEPLOY)));
  return dir;
}

type Model = { new (data: unknown): { validate(): void }; apiVersion: string; kind: string };

/**
 * The API versions deploy/ may use, each with its kubernetes-models classes. Another apiVersion is
 * unknown until it is added here: the test fails rather than let an object through unvalidated.
 */
const MODELS: Record<string, Record<string, unknown>> = {
  v1: core,
  'apps/v1': apps,
  'rbac.authorization.k8s.io/v1': rbac,
  'apiextensions.k8s.io/v1': apiextensions,
  'policy/v1': policy,
};

/** The kubernetes-models class of an apiVersion and kind; an unknown one is a failure. */
function modelOf(apiVersion: string, kind: string): Model {
  const mod = MODELS[apiVersion];
  if (mod === undefined)
    throw new Error(`unknown apiVersion ${apiVersion} (kind ${kind}): no Kubernetes schema to validate it`);
  const model = mod[kind] as Model | undefined;
  if (typeof model !== 'function' || model.apiVersion !== apiVersion || model.kind !== kind)
    throw new Error(`unknown kind ${apiVersion}/${kind}: no Kubernetes schema to validate it`);
  return model;
}

async function validate(o: Obj): Promise<void> {
  const Model = modelOf(o.apiVersion, o.kind);
  try {
    new Model(o).validate();
  } catch (err) {
    throw new Error(`${o.kind} ${o.metadata.name}: ${String(err)}`, { cause: err });
  }
}

// What each identity may do, from the code (docs/deploy.md, "What each identity may do", says where):
// one tuple per group, resource, name ('' for any) and verb.
const EXPECTED: Record<string, Rule[]> = {
  'ClusterRole/svcplane:controller-manager': [
    { apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] },
    { apiGroups: [''], resources: ['services'], verbs: ['create', 'delete', 'list', 'update', 'watch'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    {
      apiGroups: ['apps'],
      resources: ['deployments'],
      verbs: ['create', 'delete', 'list', 'update', 'watch'],
    },
    { apiGroups: ['superedge.io'], resources: ['servicegrids'], verbs: ['get', 'list', 'watch'] },
    {
      apiGroups: ['superedge.io'],
      resources: ['deploymentgrids'],
      verbs: ['get', 'list', 'update', 'watch'],
    },
    {
      apiGroups: ['superedge.io'],
      resources: ['deploymentgrids/status', 'servicegrids/status'],
      verbs: ['update'],
    },
    {
      apiGroups: ['superedge.io'],
      resources: ['deploymentgrids/finalizers', 'servicegrids/finalizers'],
      verbs: ['update'],
    },
  ],
  'Role/svcplane-system/svcplane:controller-manager:leader-election': [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    {
      apiGroups: ['coordination.k8s.io'],
      resources: ['leases'],
      resourceNames: ['svcplane-controller-manager'],
      verbs: ['get', 'update'],
    },
  ],
  'ClusterRole/svcplane:wrapper': [
    { apiGroups: [''], resources: ['endpoints', 'nodes', 'services'], verbs: ['list', 'watch'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
  ],
  'ClusterRole/svcplane:dashboard': [
    { apiGroups: [''], resources: ['endpoints', 'nodes', 'services'], verbs: ['list', 'watch'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
    { apiGroups: ['superedge.io'], resources: ['deploymentgrids', 'servicegrids'], verbs: ['list', 'watch'] },
  ],
};

/** A rule set as sorted `group resource name verb` lines, so two spellings of one grant compare equal. */
function grants(rules: readonly Rule[]): string[] {
  const out = new Set<string>();
  for (const r of rules) {
    assert.equal(r.nonResourceURLs, undefined, 'no role here grants non-resource URLs');
    for (const g of r.apiGroups ?? [])
      for (const res of r.resources ?? [])
        for (const n of r.resourceNames ?? [''])
          for (const v of r.verbs) out.add(`${g === '' ? 'core' : g} ${res} ${n || '*'} ${v}`);
  }
  return [...out].sort();
}

const roleKey = (o: Obj): string =>
  o.metadata.namespace === undefined
    ? `${o.kind}/${o.metadata.name}`
    : `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`;

/**
 * docs/deploy.md's table: `| \`Kind/[ns/]name\` | group | resources | names | verbs | why |`, one row
 * per rule; "core" is the "" group, "any" no resourceNames.
 */
function documentedRules(): Record<string, Rule[]> {
  const text = readFileSync(path.join(root, 'docs/deploy.md'), 'utf8');
  const out: Record<string, Rule[]> = {};
  const list = (cell: string): string[] =>
    cell
      .replace(/`/g, '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  for (const line of text.split('\n')) {
    const m = /^\|\s*`((?:Cluster)?Role\/[^`]+)`\s*\|(.*)\|\s*$/.exec(line);
    if (m === null) continue;
    const [group, resources, names, verbs] = m[2]!.split('|').map((c) => c.trim());
    const g = group!.replace(/`/g, '');
    (out[m[1]!] ??= []).push({
      apiGroups: [g === 'core' ? '' : g],
      resources: list(resources!),
      ...(names === 'any' ? {} : { resourceNames: list(names!) }),
      verbs: list(verbs!),
    });
  }
  return out;
}

describe('deploy/ (kubectl kustomize)', () => {
  let work: string;
  let base: Obj[];
  let edgeHealth: Obj[];
  let imaged: Obj[];

  before(() => {
    work = mkdtempSync(path.join(tmpdir(), 'svcplane-deploy-'));
    base = render(DEPLOY);
    edgeHealth = render(
      overlay(
        path.join(work, 'edge-health'),
        (b) => `resources: [${b}]\ncomponents: [${b}/components/edge-health]\n`,
      ),
    );
    imaged = render(
      overlay(
        path.join(work, 'image'),
        (b) =>
          `resources: [${b}]\nimages:\n  - name: svcplane\n    newName: registry.example/svcplane\n    newTag: v9\n`,
      ),
    );
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  const variants = (): [string, Obj[]][] => [
    ['base', base],
    ['edge-health', edgeHealth],
    ['image override', imaged],
  ];

  it('holds exactly the expected objects', () => {
    assert.deepEqual(base.map(roleKey).sort(), [
      'ClusterRole/svcplane:controller-manager',
      'ClusterRole/svcplane:dashboard',
      'ClusterRole/svcplane:wrapper',
      'ClusterRoleBinding/svcplane:controller-manager',
      'ClusterRoleBinding/svcplane:dashboard',
      'ClusterRoleBinding/svcplane:wrapper',
      `ConfigMap/svcplane-system/${base.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('svcplane-controller-manager-kubeconfig'))!.metadata.name}`,
      `ConfigMap/svcplane-system/${base.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('svcplane-wrapper-kubeconfig'))!.metadata.name}`,
      'CustomResourceDefinition/deploymentgrids.superedge.io',
      'CustomResourceDefinition/servicegrids.superedge.io',
      'DaemonSet/svcplane-system/svcplane-wrapper',
      'Deployment/svcplane-system/svcplane-controller-manager',
      'Namespace/svcplane-system',
      'Role/svcplane-system/svcplane:controller-manager:leader-election',
      'RoleBinding/svcplane-system/svcplane:controller-manager:leader-election',
      'ServiceAccount/svcplane-system/svcplane-controller-manager',
      'ServiceAccount/svcplane-system/svcplane-dashboard',
      'ServiceAccount/svcplane-system/svcplane-wrapper',
    ]);
  });

  it('deploy/rbac holds the identities alone, as the base has them', () => {
    const identities = render(path.join(DEPLOY, 'rbac'));
    const kinds = ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];
    assert.ok(identities.every((o) => kinds.includes(o.kind)));
    assert.deepEqual(
      identities,
      base.filter((o) => kinds.includes(o.kind)),
    );
  });

  it('every object of every variant passes its Kubernetes OpenAPI schema; unknown kinds fail', async () => {
    for (const [name, objs] of variants()) {
      for (const o of objs) await validate(o).catch((err: unknown) => assert.fail(`${name}: ${String(err)}`));
    }
    // The validator can fail: a wrong type, and a kind it has no schema for.
    const deployment = base.find((o) => o.kind === 'Deployment')!;
    await assert.rejects(
      validate({ ...deployment, spec: { ...(deployment['spec'] as object), replicas: 'two' } }),
    );
    await assert.rejects(
      validate({ apiVersion: 'superedge.io/v1', kind: 'ServiceGrid', metadata: { name: 'x' } }),
      /unknown apiVersion superedge.io\/v1/,
    );
    await assert.rejects(
      validate({ apiVersion: 'v1', kind: 'Frobnicator', metadata: { name: 'x' } }),
      /unknown kind/,
    );
  });

  it('deploy/crds.yaml is `svcplane crds` byte for byte, and renders to the same objects', () => {
    let printed = '';
    assert.equal(
      crdsCommand([], (s) => {
        printed += s;
      }),
      0,
    );
    assert.equal(readFileSync(path.join(DEPLOY, 'crds.yaml'), 'utf8'), printed);
    const crds = JSON.parse(JSON.stringify(gridCRDs())) as Obj[];
    for (const [name, objs] of variants()) {
      const rendered = objs.filter((o) => o.kind === 'CustomResourceDefinition');
      assert.deepEqual(
        rendered.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)),
        crds.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name)),
        name,
      );
    }
  });

  it('every role is exactly the derivation, in the test and in docs/deploy.md', () => {
    const documented = documentedRules();
    assert.deepEqual(Object.keys(documented).sort(), Object.keys(EXPECTED).sort());
    for (const [name, objs] of variants()) {
      const roles = objs.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role');
      assert.deepEqual(roles.map(roleKey).sort(), Object.keys(EXPECTED).sort(), name);
      for (const r of roles) {
        const rules = r['rules'] as Rule[];
        assert.deepEqual(grants(rules), grants(EXPECTED[roleKey(r)]!), `${name}: ${roleKey(r)} (manifest)`);
        assert.deepEqual(
          grants(documented[roleKey(r)]!),
          grants(EXPECTED[roleKey(r)]!),
          `${roleKey(r)} (docs/deploy.md)`,
        );
      }
    }
    // A wider role is caught.
    const widened = [
      ...EXPECTED['ClusterRole/svcplane:wrapper']!,
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
    ];
    assert.notDeepEqual(grants(widened), grants(EXPECTED['ClusterRole/svcplane:wrapper']!));
  });

  it("binds each role to its workload's ServiceAccount; the Lease is the one the Deployment campaigns for", () => {
    const sa = (o: Obj): string => {
      const s = podSpecOf(o).serviceAccountName!;
      return `${o.metadata.namespace}/${s}`;
    };
    const deployment = base.find((o) => o.kind === 'Deployment')!;
    const daemonSet = base.find((o) => o.kind === 'DaemonSet')!;
    const bound = new Map<string, string[]>();
    for (const b of base.filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')) {
      const ref = b['roleRef'] as { kind: string; name: string };
      const role =
        ref.kind === 'Role' ? `Role/${b.metadata.namespace}/${ref.name}` : `ClusterRole/${ref.name}`;
      const subjects = (b['subjects'] as { kind: string; name: string; namespace: string }[]).map(
        (s) => `${s.kind}:${s.namespace}/${s.name}`,
      );
      bound.set(role, subjects);
    }
    assert.deepEqual(Object.fromEntries([...bound].sort()), {
      'ClusterRole/svcplane:controller-manager': [`ServiceAccount:${sa(deployment)}`],
      // `svcplane dashboard` runs wherever its user runs it, with a token for this ServiceAccount.
      'ClusterRole/svcplane:dashboard': ['ServiceAccount:svcplane-system/svcplane-dashboard'],
      'ClusterRole/svcplane:wrapper': [`ServiceAccount:${sa(daemonSet)}`],
      'Role/svcplane-system/svcplane:controller-manager:leader-election': [
        `ServiceAccount:${sa(deployment)}`,
      ],
    });
    const args = podSpecOf(deployment).containers[0]!.args!;
    const flag = (name: string): string | undefined =>
      args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
    assert.equal(args[0], 'controller-manager');
    assert.ok(args.includes('--leader-elect'));
    assert.equal(flag('leader-elect-resource-namespace'), deployment.metadata.namespace);
    assert.equal(flag('leader-elect-resource-name'), 'svcplane-controller-manager');
    assert.deepEqual(flag('controllers')!.split(','), ['servicegrid', 'deploymentgrid', 'servicetopology']);
    for (const c of flag('controllers')!.split(','))
      assert.ok((KNOWN_CONTROLLERS as readonly string[]).includes(c));
    assert.equal((deployment['spec'] as { replicas: number }).replicas, 2);
  });

  it('every container is bounded, non-root (the data directory chown alone excepted) and read-only', () => {
    for (const [name, objs] of variants()) {
      for (const w of objs.filter((o) => o.kind === 'Deployment' || o.kind === 'DaemonSet')) {
        const pod = podSpecOf(w);
        assert.equal(pod.securityContext?.runAsNonRoot, true, `${name}: ${w.kind}`);
        assert.ok((pod.securityContext?.runAsUser ?? 0) > 0, `${name}: ${w.kind}`);
        for (const c of [...(pod.initContainers ?? []), ...pod.containers]) {
          const where = `${name}: ${w.kind} ${w.metadata.name} container ${c.name}`;
          for (const k of ['requests', 'limits'] as const)
            for (const r of ['cpu', 'memory']) assert.ok(c.resources?.[k]?.[r], `${where}: ${k}.${r}`);
          const sc: NonNullable<Container['securityContext']> = c.securityContext ?? {};
          assert.equal(sc.readOnlyRootFilesystem, true, where);
          assert.equal(sc.allowPrivilegeEscalation, false, where);
          assert.deepEqual(sc.capabilities?.drop, ['ALL'], where);
          const user: number | undefined = sc.runAsUser ?? pod.securityContext?.runAsUser;
          if (c.name === 'data-dir-owner') {
            assert.equal(w.kind, 'DaemonSet');
            assert.equal(user, 0);
            assert.deepEqual(sc.capabilities?.add, ['CHOWN'], where);
            assert.deepEqual(c.command, [
              'chown',
              `${pod.securityContext!.runAsUser}:${pod.securityContext!.runAsUser}`,
              '/var/lib/svcplane-wrapper',
            ]);
          } else {
            assert.ok(user !== undefined && user > 0, `${where} runs as root`);
            assert.notEqual(sc.runAsNonRoot, false, where);
            assert.equal(sc.capabilities?.add, undefined, where);
          }
        }
      }
    }
  });

  it('the image is configurable with `images:`', () => {
    const images = (objs: Obj[]): string[] =>
      objs
        .filter((o) => o.kind === 'Deployment' || o.kind === 'DaemonSet')
        .flatMap((o) =>
          [...(podSpecOf(o).initContainers ?? []), ...podSpecOf(o).containers].map((c) => c.image),
        );
    assert.deepEqual(new Set(images(base)), new Set(['svcplane:0.2.0']));
    assert.deepEqual(new Set(images(imaged)), new Set(['registry.example/svcplane:v9']));
  });

  it("the wrapper keeps SuperEdge's port layout, takes its flags, and keeps its data on the host", () => {
    const wrapperArgs = (objs: Obj[]): string[] =>
      podSpecOf(objs.find((o) => o.kind === 'DaemonSet')!).containers[0]!.args!;
    const ds = base.find((o) => o.kind === 'DaemonSet')!;
    const pod = podSpecOf(ds);
    assert.equal(pod.hostNetwork, true);
    const args = wrapperArgs(base);
    assert.equal(args[0], 'wrapper');
    assert.ok(
      args.includes('--insecure-bind-address=127.0.0.1:51006'),
      'kube-proxy at http://127.0.0.1:51006',
    );
    assert.ok(args.includes('--bind-address=127.0.0.1:51007'));
    assert.ok(args.includes('--hostname=$(NODE_NAME)'));
    assert.ok(args.includes('--data-dir=/var/lib/svcplane-wrapper'));
    assert.deepEqual(
      pod.volumes?.find((v) => v.name === 'data')?.hostPath?.path,
      '/var/lib/svcplane-wrapper',
    );
    // SuperEdge's flags in the command line are ones `svcplane wrapper` takes.
    assert.doesNotThrow(() => superEdgeFlags(args.slice(1)));
    const autonomy = wrapperArgs(edgeHealth).filter((a) => !args.includes(a));
    assert.deepEqual(autonomy, [
      '--service-autonomy-enhancement=enabled=true,interval=30,address=http://127.0.0.1:51005/localinfo',
    ]);
  });
});

describe('deploy/kubeconfig', () => {
  it('both kubeconfigs load and send the ServiceAccount token with the cluster CA', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'svcplane-deploy-kc-'));
    try {
      writeFileSync(path.join(dir, 'token'), 'sa-token');
      writeFileSync(
        path.join(dir, 'ca.crt'),
        '-----BEGIN CERTIFICATE-----\nnot really\n-----END CERTIFICATE-----\n',
      );
      const cases: [string, string][] = [
        ['controller-manager.kubeconfig', 'https://kubernetes.default.svc:443'],
        ['wrapper.kubeconfig', 'https://apiserver.invalid:6443'],
      ];
      for (const [file, server] of cases) {
        const text = readFileSync(path.join(DEPLOY, 'kubeconfig', file), 'utf8');
        assert.match(text, /\/var\/run\/secrets\/kubernetes\.io\/serviceaccount\/token/);
        const local = path.join(dir, file);
        writeFileSync(local, text.replaceAll('/var/run/secrets/kubernetes.io/serviceaccount', dir));
        const kc = loadKubeconfig({ path: local });
        try {
          assert.equal(kc.server, server);
          const creds = await kc.credentials();
          assert.deepEqual(creds.headers, { Authorization: 'Bearer sa-token' });
          assert.match(String(creds.ca), /not really/);
        } finally {
          kc.close();
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('deploy/Dockerfile', () => {
  const text = readFileSync(path.join(DEPLOY, 'Dockerfile'), 'utf8');
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const stages: { name: string; lines: string[] }[] = [];
  for (const l of lines) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?$/i.exec(l);
    if (from !== null) stages.push({ name: from[2] ?? '', lines: [] });
    else stages.at(-1)?.lines.push(l);
  }

  it('is multi-stage on the Node 20 Debian slim base', () => {
    assert.ok(stages.length >= 2, 'multi-stage');
    assert.match(text, /^ARG NODE_IMAGE=node:20-[a-z]+-slim$/m);
    for (const l of lines.filter((x) => /^FROM /i.test(x))) assert.match(l, /^FROM \$\{NODE_IMAGE\} AS \w+$/);
  });

  it('the runtime stage runs as a numeric non-root user and copies no dev dependency', () => {
    const runtime = stages.at(-1)!;
    const user = runtime.lines.filter((l) => /^USER /i.test(l));
    assert.equal(user.length, 1);
    const m = /^USER (\d+)(?::(\d+))?$/.exec(user[0]!);
    assert.ok(m !== null, `numeric USER: ${user[0]}`);
    assert.notEqual(Number(m[1]), 0);
    assert.ok(!runtime.lines.some((l) => /npm (ci|install)/.test(l)), 'no install in the runtime stage');
    const copies = runtime.lines.filter((l) => /^COPY /i.test(l));
    const nodeModules = copies.filter((l) => l.includes('node_modules'));
    assert.equal(nodeModules.length, 1);
    const from = /--from=(\S+)/.exec(nodeModules[0]!)?.[1];
    const source = stages.find((s) => s.name === from);
    assert.ok(source !== undefined, `node_modules from a stage: ${nodeModules[0]}`);
    assert.ok(
      source.lines.some((l) => /npm ci\b.*--omit=dev/.test(l)),
      'node_modules comes from a stage that installed production dependencies only',
    );
    assert.ok(!source.lines.some((l) => /npm (ci|install)\b(?!.*--omit=dev)/.test(l)), 'and nothing else');
    // What comes from the build stage is the compiled output alone.
    for (const c of copies.filter((l) => /--from=build\b/.test(l))) assert.match(c, /\/dist \.\/dist$/);
  });

  it('.dockerignore keeps node_modules, dist and local state out of the context', () => {
    const ignore = readFileSync(path.join(root, '.dockerignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'));
    assert.equal(ignore[0], '*', 'everything is ignored unless named');
    for (const l of ignore.filter((x) => x.startsWith('!')))
      assert.doesNotMatch(l, /node_modules|dist|\.svcplane/, l);
  });
});
