// `svcplane explain service/NAME --node NODE` end to end: one `svcplane up`, simulated nodes started by
// `svcplane node` with --labels (one process after another, each with its own --pod-cidr), pods placed
// with spec.nodeName, and the real kubectl for every write. Covers the ordered spec.topologyKeys example
// (two zones and an empty third, then "*" added by `kubectl patch`), SuperEdge's service-group ServiceGrid
// (`topologyKeys` annotation on <sg>-svc; a node without the unit label, then labelled; a node with pods
// moved to another unit), the text rendering, and bad input (usage errors, a missing Service or Node).
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubectlFor, type Kubectl } from './testing/kubectl.js';
import { startUp, type TestServer } from './testing/server.js';
import { runSvcplane, type Run } from './testing/svcplane-run.js';
import { until } from './testing/until.js';

const BIN = new URL('../../bin/svcplane.js', import.meta.url).pathname;
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-explain-'));
after(() => rmSync(work, { recursive: true, force: true }));

const ZONE = 'topology.kubernetes.io/zone';
const WAIT = 30_000;

/** The `svcplane node` processes, in start order: name prefix, count, labels, a pod CIDR of their own. */
const NODE_GROUPS = [
  { name: 'z1', count: 2, labels: `${ZONE}=z1`, cidr: '10.244.0.0/23' },
  { name: 'z2', count: 1, labels: `${ZONE}=z2`, cidr: '10.244.2.0/23' },
  { name: 'z3', count: 1, labels: `${ZONE}=z3`, cidr: '10.244.4.0/23' },
  { name: 'u1', count: 2, labels: 'unit=u1', cidr: '10.244.6.0/23' },
  { name: 'u2', count: 1, labels: 'unit=u2', cidr: '10.244.8.0/23' },
  { name: 'bare', count: 1, labels: '', cidr: '10.244.10.0/23' },
] as const;

interface Verdict {
  endpoint: { addresses: string[]; ready: boolean; nodeName?: string; targetRef?: { name?: string } };
  kept: boolean;
  reason: string;
  detail?: string;
}
interface Traffic {
  rule: { kind: string; source: string; keys: string[] };
  pools: { pool: string; matchedKey?: string; matchedValue?: string; kept: number }[];
  verdicts: Verdict[];
}
interface Explained {
  service: { namespace: string; name: string };
  node: string;
  internal: Traffic;
  external?: Traffic;
  problems: { reason: string; message: string }[];
  nodeLabels: Record<string, string> | null;
  source: string;
}
const svcplane = (args: readonly string[]): Promise<Run> => runSvcplane(args, work);

/** Starts one `svcplane node` process and hands it back once it printed its running line. */
async function startNodes(
  srv: TestServer,
  g: (typeof NODE_GROUPS)[number],
  i: number,
): Promise<ChildProcess> {
  const args = ['node', '--kubeconfig', srv.kubeconfig, '--name', g.name, '--count', String(g.count)];
  args.push('--pod-cidr', g.cidr, '--node-ip', `127.0.1.${1 + 10 * i}`);
  if (g.labels !== '') args.push('--labels', g.labels);
  const proc = spawn(process.execPath, [BIN, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '', HOME: work },
  });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  await until(
    () => `svcplane node --name ${g.name} to start:\n${out}\n${err}`,
    WAIT,
    () => {
      if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}: ${err}`);
      return /running/.test(out);
    },
    50,
  );
  return proc;
}

const pod = (name: string, node: string, labels: Record<string, string>): unknown => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: {
    nodeName: node,
    containers: [{ name: 'web', image: 'echo:v1', ports: [{ containerPort: 8080 }] }],
  },
});
const list = (items: unknown[]): string => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });

const keptIPs = (t: Traffic): string[] =>
  t.verdicts
    .filter((v) => v.kept)
    .flatMap((v) => v.endpoint.addresses)
    .sort();
/** The one line of a text explanation that starts with `prefix`. */
const lineOf = (text: string, prefix: string): string => {
  const found = text.split('\n').filter((l) => l.startsWith(prefix));
  assert.equal(found.length, 1, `one line starting with ${JSON.stringify(prefix)} in:\n${text}`);
  return found[0]!;
};

describe('svcplane explain against svcplane up, simulated nodes and kubectl', () => {
  let srv: TestServer;
  let k: Kubectl;
  const nodes: ChildProcess[] = [];
  let ips: Map<string, string>;

  const explain = (svc: string, node: string, extra: string[] = []): Promise<Run> =>
    svcplane(['explain', `service/${svc}`, '--node', node, '--kubeconfig', srv.kubeconfig, ...extra]);
  const explainJson = async (svc: string, node: string): Promise<Explained> => {
    const r = await explain(svc, node, ['-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    return JSON.parse(r.stdout) as Explained;
  };
  const explainText = async (svc: string, node: string): Promise<string> => {
    const r = await explain(svc, node);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  };
  /** Pod name → pod IP, for the pods that have one. */
  const podIPs = async (): Promise<Map<string, string>> => {
    const pods = JSON.parse(await k(['get', 'pods', '-o', 'json'])) as {
      items: { metadata: { name: string }; status?: { podIP?: string } }[];
    };
    return new Map(
      pods.items.flatMap((p) => (p.status?.podIP ? [[p.metadata.name, p.status.podIP] as const] : [])),
    );
  };
  const ipsOf = (...pods: string[]): string[] => pods.map((p) => ips.get(p)!).sort();
  /** Waits until explain sees `n` ready endpoints of the Service (its slices follow the pods). */
  const readyEndpoints = (svc: string, n: number): Promise<Explained> =>
    until(`${n} ready endpoints of ${svc}`, WAIT, async () => {
      const d = await explainJson(svc, 'z1-0');
      return d.internal.verdicts.length === n && d.internal.verdicts.every((v) => v.endpoint.ready)
        ? d
        : undefined;
    });

  before(async () => {
    srv = await startUp();
    const home = path.join(work, 'home');
    mkdirSync(home);
    k = kubectlFor(srv, home);
    // One after another, each with its own --pod-cidr: two processes starting together can allocate the
    // same range from --cluster-cidr.
    for (const [i, g] of NODE_GROUPS.entries()) nodes.push(await startNodes(srv, g, i));
  });
  after(async () => {
    await Promise.all(
      nodes.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once('exit', () => resolve());
            p.kill('SIGKILL');
          }),
      ),
    );
    await srv?.destroy();
  });

  it('ordered keys: spec.topologyKeys keeps the zone; an empty zone is refused until "*" is added', async () => {
    await k(
      ['apply', '-f', '-'],
      list([
        pod('web-z1-0', 'z1-0', { app: 'web' }),
        pod('web-z1-1', 'z1-1', { app: 'web' }),
        pod('web-z2-0', 'z2-0', { app: 'web' }),
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web' },
          spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }], topologyKeys: [ZONE] },
        },
      ]),
    );
    await readyEndpoints('web', 3);
    ips = await podIPs();

    const z1 = await explainJson('web', 'z1-0');
    assert.deepEqual(z1.service, { namespace: 'default', name: 'web' });
    assert.equal(z1.node, 'z1-0');
    assert.equal(z1.nodeLabels?.[ZONE], 'z1');
    assert.equal(z1.source, '1 EndpointSlice');
    assert.deepEqual(z1.internal.rule, { kind: 'ordered-keys', source: 'spec.topologyKeys', keys: [ZONE] });
    assert.equal(z1.external, undefined, 'a ClusterIP Service has no external traffic');
    assert.deepEqual(z1.problems, []);
    assert.deepEqual(keptIPs(z1.internal), ipsOf('web-z1-0', 'web-z1-1'));
    assert.equal(z1.internal.pools.length, 1);
    assert.equal(z1.internal.pools[0]!.matchedKey, ZONE);
    assert.equal(z1.internal.pools[0]!.matchedValue, 'z1');
    assert.equal(z1.internal.pools[0]!.kept, 2);
    for (const v of z1.internal.verdicts)
      assert.deepEqual(
        [v.reason, v.detail],
        v.kept ? ['key-match', `${ZONE}=z1`] : ['other-unit', `${ZONE}=z2`],
        JSON.stringify(v),
      );

    const z3 = await explainJson('web', 'z3-0');
    assert.deepEqual(keptIPs(z3.internal), []);
    assert.ok(
      z3.internal.verdicts.every((v) => v.reason === 'no-key-matched'),
      JSON.stringify(z3.internal.verdicts),
    );
    assert.equal(
      lineOf(await explainText('web', 'z3-0'), 'Internal traffic'),
      `Internal traffic (cluster IP): nothing: no key of ["${ZONE}"] matched a ready endpoint, so connections are refused`,
    );

    await k([
      'patch',
      'svc',
      'web',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { topologyKeys: [ZONE, '*'] } }),
    ]);
    const z3any = await explainJson('web', 'z3-0');
    assert.deepEqual(z3any.internal.rule.keys, [ZONE, '*']);
    assert.deepEqual(keptIPs(z3any.internal), ipsOf('web-z1-0', 'web-z1-1', 'web-z2-0'));
    assert.equal(z3any.internal.pools[0]!.matchedKey, '*');
    assert.ok(z3any.internal.verdicts.every((v) => v.kept && v.reason === 'any'));
    assert.equal(
      lineOf(await explainText('web', 'z3-0'), 'Internal traffic'),
      'Internal traffic (cluster IP): 3 of 3 endpoints through "*"',
    );
    const z1again = await explainJson('web', 'z1-0');
    assert.deepEqual(keptIPs(z1again.internal), ipsOf('web-z1-0', 'web-z1-1'));
    assert.equal(z1again.internal.pools[0]!.matchedKey, ZONE);
    const dropped = z1again.internal.verdicts.filter((v) => !v.kept);
    assert.deepEqual(
      dropped.map((v) => [v.endpoint.targetRef?.name, v.reason, v.detail]),
      [['web-z2-0', 'lower-preference', `${ZONE}=z1 matched first; this endpoint matches *`]],
    );
  });

  it('the text output: a header, the rule and one table row per endpoint', async () => {
    const text = await explainText('web', 'z2-0');
    const lines = text.trimEnd().split('\n');
    assert.equal(lines[0], `Service default/web, seen from node z2-0 (${ZONE}=z2)`);
    assert.equal(
      lineOf(text, 'Internal traffic'),
      `Internal traffic (cluster IP): 1 of 3 endpoints through ${ZONE}=z2`,
    );
    assert.match(
      lineOf(text, '  Rule: '),
      /^ {2}Rule: ordered topology keys \[.*\] from spec\.topologyKeys: /,
    );
    const header = lines.findIndex((l) => /^\s+ENDPOINT\s+POD\s+NODE\s+RESULT\s+WHY$/.test(l));
    assert.ok(header > 0, text);
    const rows = lines.slice(header + 1, header + 4).map((l) => l.trim().split(/\s{3,}/));
    assert.equal(lines[header + 4], '', 'exactly three rows, then a blank line');
    const expected = [
      ['web-z1-0', 'z1-0', 'dropped'],
      ['web-z1-1', 'z1-1', 'dropped'],
      ['web-z2-0', 'z2-0', 'kept'],
    ];
    assert.deepEqual(
      rows.map(([ip, p, n, result]) => [p, n, result, ip]).sort(),
      expected.map(([p, n, result]) => [p, n, result, ips.get(p!)]),
      text,
    );
    for (const row of rows)
      assert.equal(
        row[4],
        row[3] === 'kept'
          ? `first key that matches (${ZONE}=z2)`
          : `an earlier key matched (${ZONE}=z2 matched first; this endpoint matches *)`,
        JSON.stringify(row),
      );
    assert.match(text, /^External traffic: none /m);
    assert.match(lines.at(-1)!, /^Read from: 1 EndpointSlice, 8 Nodes\.$/);
  });

  it('a ServiceGrid: each unit keeps its own pods; an unlabelled node keeps none until labelled; a moved node', async () => {
    await k(
      ['apply', '-f', '-'],
      list([
        pod('echo-u1-0', 'u1-0', { appGrid: 'echo' }),
        pod('echo-u1-1', 'u1-1', { appGrid: 'echo' }),
        pod('echo-u2-0', 'u2-0', { appGrid: 'echo' }),
        {
          apiVersion: 'superedge.io/v1',
          kind: 'ServiceGrid',
          metadata: { name: 'echo' },
          spec: {
            gridUniqKey: 'unit',
            template: {
              selector: { appGrid: 'echo' },
              ports: [{ protocol: 'TCP', port: 80, targetPort: 8080 }],
            },
          },
        },
      ]),
    );
    await readyEndpoints('echo-svc', 3);
    ips = await podIPs();

    const byUnit = { 'u1-0': ['echo-u1-0', 'echo-u1-1'], 'u2-0': ['echo-u2-0'] } as const;
    for (const [node, pods] of Object.entries(byUnit)) {
      const unit = node.slice(0, 2);
      const d = await explainJson('echo-svc', node);
      assert.deepEqual(d.internal.rule, {
        kind: 'superedge',
        source: 'annotation topologyKeys',
        keys: ['unit'],
      });
      assert.deepEqual(keptIPs(d.internal), ipsOf(...pods), node);
      for (const v of d.internal.verdicts) {
        if (v.kept) assert.deepEqual([v.reason, v.detail], ['unit-match', `unit=${unit}`]);
        else assert.deepEqual([v.reason, v.detail], ['other-unit', `unit=${unit === 'u1' ? 'u2' : 'u1'}`]);
      }
    }

    const bare = await explainJson('echo-svc', 'bare-0');
    assert.deepEqual(keptIPs(bare.internal), []);
    assert.ok(bare.internal.verdicts.every((v) => v.reason === 'client-no-label'));
    assert.equal(
      lineOf(await explainText('echo-svc', 'bare-0'), 'Internal traffic'),
      'Internal traffic (cluster IP): nothing: node bare-0 has no label unit; label it (kubectl label node bare-0 unit=VALUE)',
    );

    await k(['label', 'node', 'bare-0', 'unit=u2']);
    const labelled = await explainJson('echo-svc', 'bare-0');
    assert.equal(labelled.nodeLabels?.['unit'], 'u2');
    assert.deepEqual(keptIPs(labelled.internal), ipsOf('echo-u2-0'));

    // u1-1 and its pod move to u2: u2's nodes now keep it, u1-0 keeps only its own.
    await k(['label', 'node', 'u1-1', 'unit=u2', '--overwrite']);
    assert.deepEqual(
      keptIPs((await explainJson('echo-svc', 'u2-0')).internal),
      ipsOf('echo-u1-1', 'echo-u2-0'),
    );
    assert.deepEqual(
      keptIPs((await explainJson('echo-svc', 'u1-1')).internal),
      ipsOf('echo-u1-1', 'echo-u2-0'),
    );
    assert.deepEqual(keptIPs((await explainJson('echo-svc', 'u1-0')).internal), ipsOf('echo-u1-0'));

    // A node that does not exist: exit 0, nothing kept, and the summary says why.
    const ghost = await explain('echo-svc', 'ghost');
    assert.equal(ghost.code, 0, ghost.stderr);
    assert.equal(
      lineOf(ghost.stdout, 'Service '),
      'Service default/echo-svc, seen from node ghost (not a known Node)',
    );
    assert.equal(
      lineOf(ghost.stdout, 'Internal traffic'),
      'Internal traffic (cluster IP): nothing: node ghost is not a known Node, so it has no labels to match (check --node, or that the node is registered)',
    );
    const ghostJson = await explainJson('echo-svc', 'ghost');
    assert.equal(ghostJson.nodeLabels, null);
    assert.ok(ghostJson.internal.verdicts.every((v) => !v.kept && v.reason === 'client-unknown'));
  });

  it('--edge-health: an endpoint on a node edge-health reports not Normal is dropped (node-unhealthy)', async () => {
    const health = createServer((_req, res) => {
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ 'z1-0': { Normal: true }, 'z1-1': { Normal: false } }));
    });
    await new Promise<void>((r) => health.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(health.address() as AddressInfo).port}/localinfo`;
    try {
      const r = await explain('web', 'z1-0', ['-o', 'json', '--edge-health', url]);
      assert.equal(r.code, 0, r.stderr);
      const d = JSON.parse(r.stdout) as Explained & { source: string };
      const of = (pod: string) => d.internal.verdicts.find((v) => v.endpoint.targetRef?.name === pod)!;
      assert.deepEqual([of('web-z1-1').kept, of('web-z1-1').reason], [false, 'node-unhealthy']);
      assert.equal(of('web-z1-0').kept, true);
      assert.match(d.source, /edge-health \(z1-1 unhealthy\)/);
      const text = await explainText('web', 'z1-0');
      assert.doesNotMatch(text, /edge-health|unhealthy/, 'without the flag, no health');
    } finally {
      await new Promise((r) => health.close(r));
    }
    const down = await explain('web', 'z1-0', ['--edge-health', url]);
    assert.equal(down.code, 1);
    assert.match(
      down.stderr,
      /^svcplane: --edge-health http:\/\/127\.0\.0\.1:\d+\/localinfo: no answer \(ECONNREFUSED\)\n$/,
    );
  });

  it('bad input: usage errors exit 2 with one line; a missing Service exits 1', async () => {
    const kc = ['--kubeconfig', srv.kubeconfig];
    const usage: [string[], string][] = [
      [['explain'], 'svcplane: a Service is required (svcplane explain service/NAME --node NODE)'],
      [['explain', 'pod/x', '--node', 'a', ...kc], 'svcplane: "pod/x": want service/NAME'],
      [['explain', 'service/web', ...kc], 'svcplane: --node is required: the client node to explain for'],
      [
        ['explain', 'service/web', '--node', 'z1-0', '-o', 'yaml', ...kc],
        'svcplane: invalid value "yaml" for --output: want one of text, json',
      ],
      [
        ['explain', 'service/web', '--node', 'z1-0', '--edge-health', 'localhost:51005', ...kc],
        'svcplane: --edge-health: "localhost:51005" is not an http or https URL',
      ],
    ];
    for (const [args, message] of usage) {
      const r = await svcplane(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '', args.join(' '));
      assert.match(r.stderr, /^svcplane: [^\n]+\n$/, `one line: ${JSON.stringify(r.stderr)}`);
      assert.equal(r.stderr, `${message}\n`);
    }
    const nope = await explain('nope', 'z1-0');
    assert.equal(nope.code, 1);
    assert.equal(nope.stdout, '');
    assert.equal(nope.stderr, 'svcplane: services "nope" not found\n');
  });
});
