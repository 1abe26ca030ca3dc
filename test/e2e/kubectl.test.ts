// kubectl end to end: the real kubectl binaries of this machine against a real `svcplane up`. Every
// kubectl version found runs the same table against its own server, with its own HOME and discovery
// cache. Steps within a version build on each other (apply first, then read, patch, delete), so they
// run in order. Where the acceptance list says "exact", the assertion compares kubectl's whole output.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { call, startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const SDK = '/usr/lib/google-cloud-sdk/bin';
const FIXTURES = new URL('./fixtures/kubectl/', import.meta.url).pathname;
// The newest kubectl we target and the older minors still in use; /usr/bin/kubectl when none is there.
const preferred = [33, 29, 28].map((m) => `${SDK}/kubectl.1.${m}`).filter((p) => existsSync(p));
const kubectls =
  preferred.length > 0 ? preferred : existsSync('/usr/bin/kubectl') ? ['/usr/bin/kubectl'] : [];

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-kubectl-'));
after(() => rmSync(work, { recursive: true, force: true }));

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/** One kubectl binary bound to one server, with a home and discovery cache of its own. */
interface Kubectl {
  readonly bin: string;
  readonly home: string;
  readonly srv: TestServer;
}

const kubectlEnv = (k: Kubectl): NodeJS.ProcessEnv => ({
  PATH: process.env['PATH'] ?? '',
  HOME: k.home,
  KUBECONFIG: k.srv.kubeconfig,
});
const kubectlArgs = (k: Kubectl, args: string[]): string[] => [
  `--cache-dir=${path.join(k.home, 'cache')}`,
  ...args,
];

function kubectl(k: Kubectl, ...args: string[]): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve) => {
    execFile(
      k.bin,
      kubectlArgs(k, args),
      { env: kubectlEnv(k), timeout: 30_000, cwd: k.home },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
        resolve({ code, stdout, stderr, ms: Date.now() - started });
      },
    );
  });
}

/** kubectl must succeed; returns its stdout. */
async function ok(k: Kubectl, ...args: string[]): Promise<string> {
  const r = await kubectl(k, ...args);
  assert.equal(r.code, 0, `kubectl ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** kubectl must fail (exit 1); returns its stderr. */
async function fails(k: Kubectl, ...args: string[]): Promise<string> {
  const r = await kubectl(k, ...args);
  assert.equal(r.code, 1, `kubectl ${args.join(' ')} should fail, exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stderr;
}

/** Table output as rows of whitespace-separated cells: for tables whose cells are never empty or spaced. */
const rows = (out: string): string[][] =>
  out
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => l.trim().split(/\s+/));
const names = (out: string, col = 0): string[] =>
  rows(out)
    .slice(1)
    .map((r) => r[col] ?? '');
const rowOf = (out: string, name: string, col = 0): string[] => {
  const r = rows(out).find((cells) => cells[col] === name);
  assert.ok(r !== undefined, `no row ${name} in:\n${out}`);
  return r;
};

/** Table output as records keyed by header, cut at the header's column offsets (cells may be empty). */
function table(out: string): Record<string, string>[] {
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  const columns = [...(lines[0] ?? '').matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], at: m.index }));
  return lines
    .slice(1)
    .map((l) =>
      Object.fromEntries(columns.map((c, i) => [c.name, l.slice(c.at, columns[i + 1]?.at).trim()])),
    );
}
const recordOf = (out: string, name: string): Record<string, string> => {
  const r = table(out).find((cells) => cells['NAME'] === name);
  assert.ok(r !== undefined, `no row ${name} in:\n${out}`);
  return r;
};

const json = <T = Record<string, unknown>>(out: string): T => JSON.parse(out) as T;
interface Svc {
  metadata: {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: Record<string, unknown> & { ports: { name?: string; port: number; targetPort?: number | string }[] };
}

const serviceYAML = (name: string, spec: string): string => `apiVersion: v1
kind: Service
metadata:
  name: ${name}
  namespace: demo
spec:
${spec}`;

describe('kubectl end to end', () => {
  if (kubectls.length === 0)
    it('finds a kubectl binary', () =>
      assert.fail(
        `no kubectl found: looked for ${SDK}/kubectl.1.{33,29,28} and /usr/bin/kubectl; install kubectl to run this test`,
      ));

  for (const bin of kubectls) {
    describe(path.basename(bin), () => {
      let k: Kubectl;
      const dir = path.join(work, path.basename(bin));
      const file = (name: string, text?: string): string => {
        const p = path.join(dir, name);
        if (text !== undefined) writeFileSync(p, text);
        return p;
      };

      before(async () => {
        mkdirSync(path.join(dir, 'home'), { recursive: true });
        const srv = await startUp();
        k = { bin, home: path.join(dir, 'home'), srv };
      });
      after(async () => {
        await k?.srv.destroy();
      });

      it('apply creates namespaces, nodes (status kept), pods and services', async () => {
        const base = path.join(dir, 'base.yaml');
        copyFileSync(path.join(FIXTURES, 'base.yaml'), base);
        const out = await ok(k, 'apply', '-f', base);
        assert.equal(
          out,
          [
            'namespace/demo created',
            'node/n1 created',
            'pod/web-1 created',
            'pod/web-2 created',
            'service/web created',
            'service/db created',
            'service/ext created',
            '',
          ].join('\n'),
        );
        const addresses = json<{ status: { addresses: unknown } }>(
          await ok(k, 'get', 'node', 'n1', '-o', 'json'),
        ).status.addresses;
        assert.deepEqual(addresses, [
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'Hostname', address: 'n1' },
        ]);
        const wide = recordOf(await ok(k, 'get', 'nodes', '-o', 'wide'), 'n1');
        assert.equal(wide['INTERNAL-IP'], '10.0.0.1');
        assert.equal(wide['STATUS'], 'Unknown');
      });

      it('re-apply with a changed targetPort says configured (strategic merge patch); unchanged after', async () => {
        const base = readFileSync(path.join(FIXTURES, 'base.yaml'), 'utf8');
        const changed = base.replace('targetPort: 8080', 'targetPort: 9090');
        assert.notEqual(changed, base);
        const f = file('base-changed.yaml', changed);
        // -v=8 logs the requests: the change must go out as a strategic merge patch built on the port key.
        const r = await kubectl(k, 'apply', '-f', f, '-v=8');
        assert.equal(r.code, 0, r.stderr);
        const out = r.stdout;
        assert.match(out, /^service\/web configured$/m);
        assert.match(r.stderr, /PATCH.*\/api\/v1\/namespaces\/demo\/services\/web\?/);
        assert.match(r.stderr, /Content-Type: application\/strategic-merge-patch\+json/);
        assert.match(r.stderr, /\$setElementOrder\/ports/);
        assert.doesNotMatch(r.stderr, /PATCH.*\/services\/db\?/);
        assert.match(out, /^service\/db unchanged$/m);
        assert.match(out, /^namespace\/demo unchanged$/m);
        assert.match(out, /^node\/n1 unchanged$/m);
        assert.match(out, /^pod\/web-1 unchanged$/m);
        const svc = json<Svc>(await ok(k, 'get', 'svc', 'web', '-n', 'demo', '-o', 'json'));
        assert.deepEqual(svc.spec.ports, [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 9090 }]);
        const again = await ok(k, 'apply', '-f', f);
        assert.equal(again.split('\n').filter((l) => l.endsWith(' unchanged')).length, 7, again);
      });

      it('get -o wide prints the service columns and the selector', async () => {
        const out = await ok(k, 'get', 'svc', '-n', 'demo', '-o', 'wide');
        assert.deepEqual(rows(out)[0], [
          'NAME',
          'TYPE',
          'CLUSTER-IP',
          'EXTERNAL-IP',
          'PORT(S)',
          'AGE',
          'SELECTOR',
        ]);
        const web = rowOf(out, 'web');
        assert.equal(web.length, 7, web.join(' '));
        assert.equal(web[1], 'ClusterIP');
        assert.equal(web[3], '<none>');
        assert.equal(web[4], '80/TCP');
        assert.equal(web[6], 'app=web');
        const ext = rowOf(out, 'ext');
        assert.deepEqual(
          [ext[1], ext[3], ext[4], ext[6]],
          ['ExternalName', 'example.com', '<none>', '<none>'],
        );
        const pods = await ok(k, 'get', 'pods', '-n', 'demo', '-o', 'wide');
        assert.equal(recordOf(pods, 'web-1')['NODE'], 'n1');
        assert.equal(recordOf(pods, 'web-2')['NODE'], '<none>');
        assert.equal(recordOf(pods, 'web-1')['NOMINATED NODE'], '<none>');
      });

      it('get -o yaml prints the object', async () => {
        const out = await ok(k, 'get', 'svc', 'web', '-n', 'demo', '-o', 'yaml');
        const svc = parseYaml(out) as Svc & { kind: string; apiVersion: string; metadata: { name: string } };
        assert.equal(svc.kind, 'Service');
        assert.equal(svc.apiVersion, 'v1');
        assert.equal(svc.metadata.name, 'web');
        assert.equal(svc.spec.ports[0]?.targetPort, 9090);
        assert.equal(svc.spec['type'], 'ClusterIP');
        const list = parseYaml(await ok(k, 'get', 'svc', '-n', 'demo', '-o', 'yaml')) as {
          kind: string;
          items: { metadata: { name: string } }[];
        };
        assert.equal(list.kind, 'List');
        assert.deepEqual(list.items.map((i) => i.metadata.name).sort(), ['db', 'ext', 'web']);
      });

      it('get -A fills the NAMESPACE column', async () => {
        const out = await ok(k, 'get', 'svc', '-A');
        assert.deepEqual(rows(out)[0]?.slice(0, 3), ['NAMESPACE', 'NAME', 'TYPE']);
        assert.deepEqual(rowOf(out, 'web', 1).slice(0, 2), ['demo', 'web']);
        assert.deepEqual(rowOf(out, 'db', 1).slice(0, 2), ['demo', 'db']);
        const pods = await ok(k, 'get', 'pods', '-A');
        assert.deepEqual(names(pods, 1).sort(), ['web-1', 'web-2']);
        assert.ok(
          rows(pods)
            .slice(1)
            .every((r) => r[0] === 'demo'),
          pods,
        );
      });

      it('get -l and --field-selector filter', async () => {
        assert.deepEqual(names(await ok(k, 'get', 'svc', '-n', 'demo', '-l', 'app=web')), ['web']);
        assert.deepEqual(names(await ok(k, 'get', 'svc', '-n', 'demo', '-l', 'app!=web')).sort(), [
          'db',
          'ext',
        ]);
        assert.deepEqual(
          names(await ok(k, 'get', 'svc', '-n', 'demo', '--field-selector', 'metadata.name=web')),
          ['web'],
        );
        assert.deepEqual(
          names(await ok(k, 'get', 'svc', '-n', 'demo', '--field-selector', 'spec.type=ClusterIP')).sort(),
          ['db', 'web'],
        );
        assert.deepEqual(
          names(await ok(k, 'get', 'svc', '-A', '--field-selector', 'spec.type=ExternalName'), 1),
          ['ext'],
        );
        assert.deepEqual(
          names(await ok(k, 'get', 'pods', '-n', 'demo', '--field-selector', 'spec.nodeName=n1')),
          ['web-1'],
        );
        const none = await kubectl(k, 'get', 'pods', '-n', 'demo', '--field-selector', 'spec.nodeName=n2');
        assert.equal(none.code, 0, none.stderr);
        assert.equal(none.stdout, '');
        assert.equal(none.stderr, 'No resources found in demo namespace.\n');
      });

      it('get --show-labels and -L add label columns', async () => {
        const shown = await ok(k, 'get', 'svc', '-n', 'demo', '--show-labels');
        assert.equal(rows(shown)[0]?.at(-1), 'LABELS');
        assert.equal(rowOf(shown, 'web').at(-1), 'app=web');
        assert.equal(rowOf(shown, 'ext').at(-1), '<none>');
        const col = await ok(k, 'get', 'svc', '-n', 'demo', '-L', 'app');
        assert.equal(rows(col)[0]?.at(-1), 'APP');
        assert.equal(rowOf(col, 'web').at(-1), 'web');
        assert.equal(rowOf(col, 'db').at(-1), 'db');
      });

      it('describe service and node succeed', async () => {
        const svc = await ok(k, 'describe', 'service', 'web', '-n', 'demo');
        assert.match(svc, /^Name:\s+web$/m);
        assert.match(svc, /^Namespace:\s+demo$/m);
        assert.match(svc, /^Selector:\s+app=web$/m);
        assert.match(svc, /^TargetPort:\s+9090\/TCP$/m);
        const node = await ok(k, 'describe', 'node', 'n1');
        assert.match(node, /^Name:\s+n1$/m);
        assert.match(node, /^\s+InternalIP:\s+10\.0\.0\.1$/m);
        assert.match(node, /web-1/);
      });

      it('label, annotate and the three patch types change a service', async () => {
        const get = async (): Promise<Svc> =>
          json<Svc>(await ok(k, 'get', 'svc', 'web', '-n', 'demo', '-o', 'json'));
        assert.equal(await ok(k, 'label', 'svc', 'web', '-n', 'demo', 'tier=front'), 'service/web labeled\n');
        assert.equal(
          await ok(k, 'annotate', 'svc', 'web', '-n', 'demo', 'note=hello'),
          'service/web annotated\n',
        );
        let svc = await get();
        assert.deepEqual(svc.metadata.labels, { app: 'web', tier: 'front' });
        assert.equal(svc.metadata.annotations?.['note'], 'hello');

        const jsonPatch = '[{"op":"replace","path":"/spec/sessionAffinity","value":"ClientIP"}]';
        assert.equal(
          await ok(k, 'patch', 'svc', 'web', '-n', 'demo', '--type=json', '-p', jsonPatch),
          'service/web patched\n',
        );
        svc = await get();
        assert.equal(svc.spec['sessionAffinity'], 'ClientIP');

        const mergePatch = '{"spec":{"sessionAffinity":"None","sessionAffinityConfig":null}}';
        assert.equal(
          await ok(k, 'patch', 'svc', 'web', '-n', 'demo', '--type=merge', '-p', mergePatch),
          'service/web patched\n',
        );
        svc = await get();
        assert.equal(svc.spec['sessionAffinity'], 'None');
        assert.equal(svc.spec['sessionAffinityConfig'], undefined);

        // Strategic: the list merges on its key (port), so the port keeps its name.
        const strategic = '{"spec":{"ports":[{"port":80,"targetPort":7070}]}}';
        assert.equal(
          await ok(k, 'patch', 'svc', 'web', '-n', 'demo', '-p', strategic),
          'service/web patched\n',
        );
        svc = await get();
        assert.deepEqual(svc.spec.ports, [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 7070 }]);
      });

      it('a servicegrid takes a merge patch and refuses a strategic one (415)', async () => {
        const sg = path.join(dir, 'servicegrid.yaml');
        copyFileSync(path.join(FIXTURES, 'servicegrid.yaml'), sg);
        assert.equal(await ok(k, 'apply', '-f', sg), 'servicegrid.superedge.io/grid created\n');
        assert.equal(
          await ok(
            k,
            'patch',
            'sg',
            'grid',
            '-n',
            'demo',
            '--type=merge',
            '-p',
            '{"spec":{"gridUniqKey":"region"}}',
          ),
          'servicegrid.superedge.io/grid patched\n',
        );
        assert.equal(
          await ok(k, 'get', 'sg', 'grid', '-n', 'demo', '-o', 'jsonpath={.spec.gridUniqKey}'),
          'region',
        );
        const err = await fails(k, 'patch', 'sg', 'grid', '-n', 'demo', '-p', '{"spec":{"gridUniqKey":"x"}}');
        assert.equal(
          err,
          'error: application/strategic-merge-patch+json is not supported by superedge.io/v1, Kind=ServiceGrid: ' +
            'the body of the request was in an unknown format - accepted media types include: ' +
            'application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml\n',
        );
        const raw = await call(k.srv, 'PATCH', '/apis/superedge.io/v1/namespaces/demo/servicegrids/grid', {
          rawBody: '{"spec":{"gridUniqKey":"x"}}',
          contentType: 'application/strategic-merge-patch+json',
        });
        assert.equal(raw.status, 415, raw.text);
        assert.equal(
          await ok(k, 'get', 'sg', 'grid', '-n', 'demo', '-o', 'jsonpath={.spec.gridUniqKey}'),
          'region',
        );
      });

      it('node status changes through the status subresource only', async () => {
        const ready = (status: string): string =>
          JSON.stringify({
            status: {
              conditions: [
                {
                  type: 'Ready',
                  status,
                  reason: 'KubeletReady',
                  message: 'kubelet is posting ready status',
                  lastHeartbeatTime: '2024-01-01T00:00:00Z',
                  lastTransitionTime: '2024-01-01T00:00:00Z',
                },
              ],
            },
          });
        const readyOf = async (): Promise<string> =>
          ok(k, 'get', 'node', 'n1', '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}');
        assert.equal(
          await ok(k, 'patch', 'node', 'n1', '--subresource=status', '--type=merge', '-p', ready('True')),
          'node/n1 patched\n',
        );
        assert.equal(await readyOf(), 'True');
        assert.equal(rowOf(await ok(k, 'get', 'node', 'n1'), 'n1')[1], 'Ready');
        // Through the main resource, status is not writable: the patch changes nothing.
        assert.equal(
          await ok(k, 'patch', 'node', 'n1', '--type=merge', '-p', ready('False')),
          'node/n1 patched (no change)\n',
        );
        assert.equal(await readyOf(), 'True');
        // The addresses set on create survive the status patch (merge keeps other status fields).
        assert.equal(
          await ok(k, 'get', 'node', 'n1', '-o', 'jsonpath={.status.addresses[0].address}'),
          '10.0.0.1',
        );
      });

      it('apply --server-side creates, updates, reports conflicts and forces them', async () => {
        const yaml = (targetPort: number): string =>
          serviceYAML(
            'ssa',
            `  selector:\n    app: ssa\n  ports:\n  - name: http\n    port: 80\n    targetPort: ${targetPort}\n`,
          );
        const f = file('ssa.yaml', yaml(8080));
        assert.equal(await ok(k, 'apply', '--server-side', '-f', f), 'service/ssa serverside-applied\n');
        file('ssa.yaml', yaml(8081));
        assert.equal(await ok(k, 'apply', '--server-side', '-f', f), 'service/ssa serverside-applied\n');
        const port = (): Promise<string> =>
          ok(k, 'get', 'svc', 'ssa', '-n', 'demo', '-o', 'jsonpath={.spec.ports[0].targetPort}');
        assert.equal(await port(), '8081');
        // Another manager (kubectl-patch) takes the targetPort over.
        assert.equal(
          await ok(
            k,
            'patch',
            'svc',
            'ssa',
            '-n',
            'demo',
            '-p',
            '{"spec":{"ports":[{"port":80,"targetPort":8500}]}}',
          ),
          'service/ssa patched\n',
        );
        assert.equal(await port(), '8500');
        file('ssa.yaml', yaml(9000));
        const err = await fails(k, 'apply', '--server-side', '-f', f);
        assert.equal(
          err.split('\n')[0],
          'error: Apply failed with 1 conflict: conflict with "kubectl-patch" using v1: .spec.ports[port=80,protocol="TCP"].targetPort',
        );
        assert.match(err, /--force-conflicts/);
        assert.equal(await port(), '8500');
        assert.equal(
          await ok(k, 'apply', '--server-side', '--force-conflicts', '-f', f),
          'service/ssa serverside-applied\n',
        );
        assert.equal(await port(), '9000');
        const managers = json<{ metadata: { managedFields: { manager: string; operation: string }[] } }>(
          await ok(k, 'get', 'svc', 'ssa', '-n', 'demo', '-o', 'json', '--show-managed-fields'),
        ).metadata.managedFields.map((m) => `${m.manager}/${m.operation}`);
        assert.ok(managers.includes('kubectl/Apply'), managers.join(' '));
      });

      it('replace -f with a stale resourceVersion is a Conflict; a fresh one replaces', async () => {
        const stale = file('web-stale.yaml', await ok(k, 'get', 'svc', 'web', '-n', 'demo', '-o', 'yaml'));
        await ok(k, 'label', 'svc', 'web', '-n', 'demo', 'bump=1');
        const r = await kubectl(k, 'replace', '-f', stale);
        assert.equal(r.code, 1);
        assert.equal(r.stdout, '');
        assert.equal(
          r.stderr,
          `Error from server (Conflict): error when replacing "${stale}": Operation cannot be fulfilled on services "web": ` +
            'the object has been modified; please apply your changes to the latest version and try again\n',
        );
        const fresh = file(
          'web-fresh.yaml',
          (await ok(k, 'get', 'svc', 'web', '-n', 'demo', '-o', 'yaml')).replace(
            'targetPort: 7070',
            'targetPort: 6060',
          ),
        );
        assert.equal(await ok(k, 'replace', '-f', fresh), 'service/web replaced\n');
        assert.equal(
          await ok(k, 'get', 'svc', 'web', '-n', 'demo', '-o', 'jsonpath={.spec.ports[0].targetPort}'),
          '6060',
        );
      });

      it('exact errors: NotFound, AlreadyExists, Invalid', async () => {
        const nf = await kubectl(k, 'get', 'svc', 'nope');
        assert.equal(nf.code, 1);
        assert.equal(nf.stderr, 'Error from server (NotFound): services "nope" not found\n');

        const f = file('dup.yaml', serviceYAML('dup', '  ports:\n  - port: 80\n'));
        assert.equal(await ok(k, 'create', '-f', f), 'service/dup created\n');
        const dup = await kubectl(k, 'create', '-f', f);
        assert.equal(dup.code, 1);
        assert.equal(
          dup.stderr,
          `Error from server (AlreadyExists): error when creating "${f}": services "dup" already exists\n`,
        );
        const webFile = file('web-create.yaml', serviceYAML('web', '  ports:\n  - port: 80\n'));
        assert.equal(
          await fails(k, 'create', '-f', webFile),
          `Error from server (AlreadyExists): error when creating "${webFile}": services "web" already exists\n`,
        );

        const inv = file('invalid.yaml', serviceYAML('invalid', '  selector:\n    app: x\n'));
        const r = await kubectl(k, 'create', '-f', inv);
        assert.equal(r.code, 1);
        assert.equal(r.stderr, 'The Service "invalid" is invalid: spec.ports: Required value\n');
        await kubectl(k, 'get', 'svc', 'invalid', '-n', 'demo').then((g) => assert.equal(g.code, 1));

        // spec.topologyKeys (kube 1.17–1.21 rules): "*" may only come last.
        const topo = file(
          'topo.yaml',
          serviceYAML('topo', '  ports:\n  - port: 80\n  topologyKeys: ["*", "kubernetes.io/hostname"]\n'),
        );
        assert.equal(
          await fails(k, 'apply', '-f', topo),
          'The Service "topo" is invalid: spec.topologyKeys[0]: Invalid value: "*": "*" must be the last value specified\n',
        );
      });

      it('delete svc returns promptly', async () => {
        const r = await kubectl(k, 'delete', 'svc', 'dup', '-n', 'demo');
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /^service "dup" deleted( from demo namespace)?\n$/);
        assert.ok(r.ms < 5000, `delete took ${r.ms} ms`);
        assert.equal(
          (await kubectl(k, 'get', 'svc', 'dup', '-n', 'demo')).stderr,
          'Error from server (NotFound): services "dup" not found\n',
        );
      });

      it('get -w shows a service created by another client', async () => {
        const child = spawn(
          k.bin,
          kubectlArgs(k, ['get', 'svc', '-n', 'demo', '-w', '--request-timeout=30s']),
          {
            env: kubectlEnv(k),
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        try {
          // The header and the listed rows come first; the watch starts from the list's revision.
          await until('the initial list', 15_000, async () => /^web\s/m.test(out) || child.exitCode !== null);
          assert.match(out, /^NAME\s+TYPE\s+CLUSTER-IP/, err);
          assert.doesNotMatch(out, /^watched\s/m);
          const created = await call(k.srv, 'POST', '/api/v1/namespaces/demo/services', {
            body: {
              apiVersion: 'v1',
              kind: 'Service',
              metadata: { name: 'watched' },
              spec: { ports: [{ port: 8443 }] },
            },
          });
          assert.equal(created.status, 201, created.text);
          await until(
            'the watched row',
            15_000,
            // The whole row: a chunk boundary may split it.
            async () => /^watched\s.*\n/m.test(out) || child.exitCode !== null,
          );
          const row = rowOf(out, 'watched');
          assert.equal(row[1], 'ClusterIP');
          assert.equal(row[4], '8443/TCP');
        } finally {
          child.kill();
          await exited;
        }
      });

      it('delete namespace removes it and its contents', async () => {
        const f = file(
          'gone.yaml',
          `apiVersion: v1
kind: Namespace
metadata:
  name: gone
---
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: gone
spec:
  containers:
  - name: c
    image: nginx
---
${serviceYAML('s', '  ports:\n  - port: 80\n').replace('namespace: demo', 'namespace: gone')}`,
        );
        assert.equal(
          await ok(k, 'apply', '-f', f),
          'namespace/gone created\npod/p created\nservice/s created\n',
        );
        const r = await kubectl(k, 'delete', 'namespace', 'gone');
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, 'namespace "gone" deleted\n');
        await until('namespace gone to disappear', 10_000, async () => {
          const g = await kubectl(k, 'get', 'ns', 'gone');
          return g.code === 1 && g.stderr === 'Error from server (NotFound): namespaces "gone" not found\n';
        });
        for (const resource of ['pods', 'services']) {
          const list = await call(k.srv, 'GET', `/api/v1/namespaces/gone/${resource}`);
          assert.equal(list.status, 200, list.text);
          assert.deepEqual(list.json<{ items: unknown[] }>().items, [], resource);
        }
        // The other namespace is untouched (grid-svc is the ServiceGrid controller's, for sg/grid above).
        assert.deepEqual(names(await ok(k, 'get', 'svc', '-n', 'demo')).sort(), [
          'db',
          'ext',
          'grid-svc',
          'ssa',
          'watched',
          'web',
        ]);
      });

      it('api-resources lists the short names; get all lists pods and services', async () => {
        const out = await ok(k, 'api-resources');
        const shortNames = new Map<string, string>();
        for (const r of rows(out).slice(1)) if (r.length >= 5) shortNames.set(`${r[0]}@${r[2]}`, r[1]!);
        const expected: [string, string][] = [
          ['services@v1', 'svc'],
          ['endpoints@v1', 'ep'],
          ['nodes@v1', 'no'],
          ['pods@v1', 'po'],
          ['namespaces@v1', 'ns'],
          ['events@v1', 'ev'],
          ['deployments@apps/v1', 'deploy'],
          ['servicegrids@superedge.io/v1', 'sg'],
          ['deploymentgrids@superedge.io/v1', 'dg'],
        ];
        for (const [key, short] of expected) assert.equal(shortNames.get(key), short, `${key} in:\n${out}`);

        const all = await ok(k, 'get', 'all', '-n', 'demo');
        const listed = names(all.replace(/^NAME\s.*$/gm, 'NAME'));
        for (const n of ['pod/web-1', 'pod/web-2', 'service/web', 'service/db', 'service/ext'])
          assert.ok(listed.includes(n), `${n} in:\n${all}`);
      });

      // kubectl 1.33's generator commands (create namespace/service/deployment) send protobuf bodies,
      // which src/api/protobuf decodes (test/e2e/kubectl-protobuf.test.ts covers them in depth). Older
      // kubectl sends JSON.
      it('create namespace and create service clusterip (generator commands)', async () => {
        assert.equal(await ok(k, 'create', 'namespace', 'made'), 'namespace/made created\n');
        assert.equal(
          await ok(k, 'create', 'service', 'clusterip', 'made', '-n', 'demo', '--tcp=80:8080'),
          'service/made created\n',
        );
      });

      it('explain service.spec.ports shows targetPort', async () => {
        const out = await ok(k, 'explain', 'service.spec.ports');
        assert.match(out, /KIND:\s+Service/);
        assert.match(out, /^\s+targetPort\s+<(IntOrString|string)>/m);
      });
    });
  }
});
