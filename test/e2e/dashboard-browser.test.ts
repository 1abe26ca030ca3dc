// The dashboard end to end, in Debian's chromium driven by playwright-core: `svcplane up`, three simulated
// nodes in two SuperEdge units (two zones), SuperEdge's service-group example (a DeploymentGrid and a
// ServiceGrid), a Service with spec.topologyKeys and one with a Local internal traffic policy, all
// written with the real kubectl. Every cell of the matrix must equal what `svcplane explain -o json`
// says of that node and Service; `kubectl label node` must change the right cells without a reload; a
// click opens the explain panel; up's /dashboard/ answers the API server's 401 without credentials and
// serves the page, live, through `kubectl proxy`. A screenshot of the matrix is saved as an artifact.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DEPLOYMENT_GRID, SERVICE_GRID, UNIT_KEY } from '../../src/demo/scenario.js';
import { openBrowser, saveScreenshot, type BrowserSession } from './testing/browser.js';
import { KUBECTL, kubectlFor, type Kubectl } from './testing/kubectl.js';
import { startNodeProcess, type NodeProcess } from './testing/node-process.js';
import { call, startUp, type TestServer } from './testing/server.js';
import { runSvcplane, type Run } from './testing/svcplane-run.js';
import { until } from './testing/until.js';

const BIN = path.resolve('bin/svcplane.js');
const work = mkdtempSync(path.join(tmpdir(), 'svcplane-dashboard-'));
after(() => rmSync(work, { recursive: true, force: true }));

const ZONE = 'topology.kubernetes.io/zone';
const WAIT = 60_000;
const GRID_SERVICE = `${SERVICE_GRID.metadata.name}-svc`;

/** Two units (the grid's key) in two zones: u1-0 and u1-1 in unit u1 / zone z1, u2-0 in unit u2 / zone z2. */
const NODE_GROUPS = [
  { name: 'u1', count: 2, labels: `${UNIT_KEY}=u1,${ZONE}=z1`, cidr: '10.244.0.0/23' },
  { name: 'u2', count: 1, labels: `${UNIT_KEY}=u2,${ZONE}=z2`, cidr: '10.244.2.0/23' },
] as const;
const NODES = ['u1-0', 'u1-1', 'u2-0'];

interface Traffic {
  rule: { kind: string };
  verdicts: { kept: boolean; endpoint: { ready: boolean; serving: boolean; terminating: boolean } }[];
}
interface Explained {
  internal: Traffic;
  external?: Traffic;
}

const svcplane = (args: readonly string[]): Promise<Run> => runSvcplane(args, work);

/** A long-running child, handed back once a line of its stdout matches `ready` (with that match). */
async function startChild(
  cmd: string,
  args: readonly string[],
  ready: RegExp,
  env: NodeJS.ProcessEnv,
): Promise<{ proc: ChildProcess; match: RegExpExecArray }> {
  const proc = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const match = await until(
    () => `${path.basename(cmd)} ${args[0] ?? ''} to print ${String(ready)}:\n${out}\n${err}`,
    30_000,
    () => {
      if (proc.exitCode !== null) throw new Error(`exited with ${proc.exitCode}: ${err}`);
      return ready.exec(out) ?? undefined;
    },
  );
  return { proc, match };
}

const stopChild = (p: ChildProcess | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (p === undefined || p.exitCode !== null || p.signalCode !== null) return resolve();
    p.once('exit', () => resolve());
    p.kill('SIGTERM');
  });

const list = (items: unknown[]): string => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
const pod = (name: string, node: string, labels: Record<string, string>): unknown => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, labels },
  spec: { nodeName: node, containers: [{ name: 'web', image: 'echo:v1', ports: [{ containerPort: 8080 }] }] },
});
const service = (name: string, spec: Record<string, unknown>): unknown => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { selector: { app: name }, ports: [{ port: 80, targetPort: 8080 }], ...spec },
});

/**
 * The state a cell must show for an explanation (core/dashboard/types.ts's CellState): with nothing kept,
 * dropped where the node proxy drops (a Local policy, and a usable endpoint elsewhere), else refused.
 */
function expectedCell(d: Explained): { kept: number; total: number; state: string } {
  const total = d.internal.verdicts.length;
  const kept = d.internal.verdicts.filter((v) => v.kept).length;
  const local = d.internal.rule.kind === 'local' || d.external?.rule.kind === 'local';
  const usable = d.internal.verdicts.some(
    (v) => v.endpoint.ready || (v.endpoint.serving && v.endpoint.terminating),
  );
  const state = kept > 0 ? (kept === total ? 'all' : 'some') : local && usable ? 'dropped' : 'refused';
  return { kept, total, state };
}

describe('svcplane dashboard in chromium against svcplane up, simulated nodes and kubectl', () => {
  let srv: TestServer;
  let k: Kubectl;
  const nodes: NodeProcess[] = [];
  let dashboard: ChildProcess | undefined;
  let dashboardUrl = '';
  let browser: BrowserSession;

  const explainJson = async (svc: string, node: string): Promise<Explained & Record<string, unknown>> => {
    const r = await svcplane([
      'explain',
      `service/${svc}`,
      '--node',
      node,
      '--kubeconfig',
      srv.kubeconfig,
      '-o',
      'json',
    ]);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as Explained & Record<string, unknown>;
  };
  /** The cells the page shows now: "node|namespace/name" → kept, total, state. */
  const pageCells = async (): Promise<Map<string, { kept: number; total: number; state: string }>> => {
    const cells = await browser.page.$$eval('[data-node][data-service][data-state]', (els) =>
      els.map((e) => {
        const d = (e as unknown as { dataset: Record<string, string | undefined> }).dataset;
        return [`${d['node']}|${d['service']}`, d['kept'], d['total'], d['state']] as const;
      }),
    );
    return new Map(
      cells.map(([key, kept, total, state]) => [
        key,
        { kept: Number(kept), total: Number(total), state: state! },
      ]),
    );
  };

  before(async () => {
    srv = await startUp();
    const home = path.join(work, 'home');
    mkdirSync(home);
    k = kubectlFor(srv, home);
    const env = { PATH: process.env['PATH'] ?? '', HOME: work };
    // One after another, each with its own --pod-cidr (two starting together could take the same range).
    for (const [i, g] of NODE_GROUPS.entries())
      nodes.push(
        await startNodeProcess(
          [
            '--kubeconfig',
            srv.kubeconfig,
            '--name',
            g.name,
            '--count',
            String(g.count),
            '--labels',
            g.labels,
            '--pod-cidr',
            g.cidr,
            '--node-ip',
            `127.0.2.${1 + 10 * i}`,
            '--root-dir',
            path.join(work, 'nodes'),
          ],
          env,
        ),
      );
    await k(['apply', '-f', '-'], list([DEPLOYMENT_GRID, SERVICE_GRID]));
    await k(
      ['apply', '-f', '-'],
      list([
        pod('zoned-a', 'u1-0', { app: 'zoned' }),
        service('zoned', { topologyKeys: [ZONE] }),
        pod('local-a', 'u1-0', { app: 'local' }),
        service('local', { internalTrafficPolicy: 'Local' }),
      ]),
    );
    // The grid's two units run two pods each; the other two Services one pod each.
    for (const [svc, n] of [
      [GRID_SERVICE, 4],
      ['zoned', 1],
      ['local', 1],
    ] as const)
      await until(
        `${n} endpoints of ${svc}`,
        WAIT,
        async () => {
          const r = await svcplane([
            'explain',
            `service/${svc}`,
            '--node',
            'u1-0',
            '--kubeconfig',
            srv.kubeconfig,
            '-o',
            'json',
          ]);
          if (r.code !== 0) return false;
          const d = JSON.parse(r.stdout) as { internal: { verdicts: { endpoint: { ready: boolean } }[] } };
          return d.internal.verdicts.length === n && d.internal.verdicts.every((v) => v.endpoint.ready);
        },
        250,
      );
    const started = await startChild(
      process.execPath,
      [BIN, 'dashboard', '--kubeconfig', srv.kubeconfig, '--bind-address', '127.0.0.1:0'],
      /(http:\/\/127\.0\.0\.1:\d+\/)/,
      env,
    );
    dashboard = started.proc;
    dashboardUrl = started.match[1]!;
    browser = await openBrowser({ width: 1400, height: 620 });
  });
  after(async () => {
    await browser?.close();
    await stopChild(dashboard);
    await Promise.all(nodes.map((n) => stopChild(n.proc)));
    await srv?.destroy();
  });

  it('every cell equals svcplane explain -o json for its node and Service', async () => {
    await browser.page.goto(dashboardUrl);
    await browser.page.waitForSelector('html[data-matrix="painted"]', { timeout: WAIT });
    const services = [`default/${GRID_SERVICE}`, 'default/zoned', 'default/local', 'default/kubernetes'];
    const cells = await until('every node × Service cell to be drawn', WAIT, async () => {
      const c = await pageCells();
      return NODES.every((n) => services.every((s) => c.has(`${n}|${s}`))) ? c : undefined;
    });
    for (const node of NODES)
      for (const key of services) {
        const want = expectedCell(await explainJson(key.split('/')[1]!, node));
        assert.deepEqual(cells.get(`${node}|${key}`), want, `${node} × ${key}`);
      }
    // The states the cluster was built to show.
    assert.equal(cells.get(`u2-0|default/zoned`)?.state, 'refused');
    assert.equal(cells.get(`u1-1|default/local`)?.state, 'dropped');
    assert.equal(cells.get(`u1-0|default/${GRID_SERVICE}`)?.state, 'some');
    // The explain answer behind a cell is explain's JSON, whole.
    for (const node of NODES) {
      const answer = (await browser.page.evaluate(
        async (u) => (await fetch(u)).json(),
        `api/explain?node=${node}&service=default/zoned`,
      )) as { json: unknown };
      assert.deepEqual(answer.json, await explainJson('zoned', node));
    }
    await saveScreenshot(browser.page, 'dashboard-matrix');
  });

  it('a click on a cell opens the explain panel with its decision', async () => {
    await browser.page.click('[data-node="u2-0"][data-service="default/zoned"]');
    const panel = browser.page.getByRole('dialog', { name: 'explain' });
    await panel.waitFor({ timeout: WAIT });
    const text = await panel.innerText();
    assert.match(text, /Service default\/zoned, seen from node u2-0/);
    assert.match(text, /no key of .*topology\.kubernetes\.io\/zone.* matched/);
    await saveScreenshot(browser.page, 'dashboard-explain');
    await panel.getByRole('button', { name: 'close' }).click();
  });

  it("a click on a Service's header opens its view: endpoints by unit and node, and each unit's flows", async () => {
    await browser.page.click(`button.col-header[data-service="default/${GRID_SERVICE}"]`);
    const view = browser.page.getByRole('dialog', { name: 'service' });
    await view.waitFor({ timeout: WAIT });
    // Two pods in each unit; the SuperEdge rule keeps each unit's traffic in the unit.
    await view.locator('[data-from]').first().waitFor({ timeout: WAIT });
    for (const unit of ['u1', 'u2']) {
      assert.equal(await view.locator(`[data-unit="${unit}"] [data-address]`).count(), 2, unit);
      const flows = view.locator(`[data-from="${unit}"] [data-to]`);
      assert.deepEqual(await flows.evaluateAll((els) => els.map((e) => e.getAttribute('data-to'))), [unit]);
    }
    await saveScreenshot(browser.page, 'dashboard-service');
    await view.getByRole('button', { name: 'close' }).click();
  });

  it('kubectl label node changes the right cells without a reload', async () => {
    await browser.page.evaluate(
      () => ((globalThis as unknown as { notReloaded: boolean }).notReloaded = true),
    );
    const before = await pageCells();
    await k(['label', 'node', 'u2-0', `${ZONE}=z1`, '--overwrite']);
    const wantZoned = expectedCell(await explainJson('zoned', 'u2-0'));
    assert.equal(wantZoned.state, 'all');
    const afterCells = await until('u2-0 × zoned to become all', WAIT, async () => {
      const c = await pageCells();
      return c.get('u2-0|default/zoned')?.state === 'all' ? c : undefined;
    });
    assert.deepEqual(afterCells.get('u2-0|default/zoned'), wantZoned);
    // Only that node's cells of rules that read the zone changed.
    for (const [key, cell] of before) {
      if (key === 'u2-0|default/zoned') continue;
      assert.deepEqual(afterCells.get(key), cell, key);
    }
    assert.equal(
      await browser.page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded),
      true,
    );
  });

  it("up's /dashboard/ answers 401 without credentials, and serves the page live through kubectl proxy", async () => {
    const anonymous = await call(srv, 'GET', '/dashboard/', { token: null });
    assert.equal(anonymous.status, 401);
    assert.deepEqual(
      { kind: anonymous.json()['kind'], reason: anonymous.json()['reason'], code: anonymous.json()['code'] },
      { kind: 'Status', reason: 'Unauthorized', code: 401 },
    );
    const proxy = await startChild(
      KUBECTL,
      ['proxy', '--port=0', '--address=127.0.0.1', `--kubeconfig=${srv.kubeconfig}`],
      /Starting to serve on 127\.0\.0\.1:(\d+)/,
      { PATH: process.env['PATH'] ?? '', HOME: work },
    );
    try {
      const page = await browser.context.newPage();
      await page.goto(`http://127.0.0.1:${proxy.match[1]!}/dashboard/`);
      await page.waitForSelector('html[data-matrix="painted"]', { timeout: WAIT });
      await page.waitForSelector('[data-node="u1-1"][data-service="default/zoned"][data-state="all"]', {
        timeout: WAIT,
      });
      // Live through the API server and kubectl proxy: a relabel arrives over the event stream.
      await k(['label', 'node', 'u1-1', `${ZONE}=z2`, '--overwrite']);
      await page.waitForSelector('[data-node="u1-1"][data-service="default/zoned"][data-state="refused"]', {
        timeout: WAIT,
      });
      await page.close();
    } finally {
      await stopChild(proxy.proc);
    }
  });
});
