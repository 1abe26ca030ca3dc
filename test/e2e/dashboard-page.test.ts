// The dashboard's page in a real headless browser (Debian's chromium through playwright-core), against a
// stand-in server that answers the page's routes from a fixed model (testing/dashboard-fixture.ts): the
// cells, the explain panel, the Service view, the filters, the group-by picker, live updates over
// server-sent events, and virtualization at 1,000 nodes × 10,000 Services. It loads the BUILT page:
// `npm run build` first (npm test does).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import type { Cell, LayoutColumn, ServiceAnswer } from '../../src/core/dashboard/types.js';
import { openBrowser, saveScreenshot } from './testing/browser.js';
import type { BrowserSession } from './testing/browser.js';
import { PAGE_DIR, startFixtureServer } from './testing/dashboard-fixture.js';
import type { FixtureModel, FixtureNode, FixtureServer } from './testing/dashboard-fixture.js';

const WAIT_MS = 20_000;
const ZONE = 'topology.kubernetes.io/zone';

function assertBuilt(): void {
  for (const f of ['index.html', 'app.js', 'app.css']) {
    assert.ok(existsSync(path.join(PAGE_DIR, f)), `${PAGE_DIR}/${f} is missing: run \`npm run build\` first`);
  }
}

// The page's elements as the callbacks evaluated in it use them (the tests compile without the DOM's types).
interface El {
  readonly dataset: Record<string, string | undefined>;
  readonly className: string;
  readonly value: string;
  readonly style: { readonly top: string };
  closest(selector: string): El | null;
  querySelectorAll(selector: string): Iterable<El>;
}
/** A condition for waitForFunction: exactly `n` elements match. */
const count = (selector: string, n: number): string =>
  `document.querySelectorAll(${JSON.stringify(selector)}).length === ${n}`;

const cellSel = (node: string, service: string) => `.cell[data-node="${node}"][data-service="${service}"]`;

/** The matrix's cells as `node|service → state kept/total`, once none is pending. */
async function cellsShown(page: Page): Promise<Record<string, string>> {
  await page.waitForFunction(
    `document.querySelectorAll('.cell').length > 0 && !document.querySelector('.cell[data-state="pending"]')`,
    undefined,
    { timeout: WAIT_MS },
  );
  return page.$$eval('.cell', (els) =>
    Object.fromEntries(
      els.map((e) => {
        const d = (e as El).dataset;
        return [`${d['node']}|${d['service']}`, `${d['state']} ${d['kept']}/${d['total']}`];
      }),
    ),
  );
}

// ---- a seed-like model: 3 nodes in 2 units, a Service by unit (SuperEdge-style) and a Local one ----

interface Svc extends LayoutColumn {
  /** Endpoints: an address on a node. */
  readonly endpoints: readonly { readonly address: string; readonly node: string }[];
  /** The label key whose value must match (unit rules); undefined for a Local policy (same node). */
  readonly unitKey?: string;
}

function seedModel(): FixtureModel & { nodes: FixtureNode[]; services: Svc[] } {
  const nodes: FixtureNode[] = [
    { name: 'edge-1', labels: { unit: 'u1', [ZONE]: 'z1' }, ready: true, health: 'healthy' },
    { name: 'edge-2', labels: { unit: 'u1', [ZONE]: 'z2' }, ready: true, health: 'healthy' },
    { name: 'edge-3', labels: { unit: 'u2', [ZONE]: 'z2' }, ready: false, health: 'unhealthy' },
  ];
  const services: Svc[] = [
    {
      key: 'shop/db',
      namespace: 'shop',
      name: 'db',
      rule: 'local',
      endpoints: [
        { address: '10.0.1.5', node: 'edge-1' },
        { address: '10.0.3.5', node: 'edge-3' },
      ],
    },
    {
      key: 'shop/web',
      namespace: 'shop',
      name: 'web',
      rule: 'superedge',
      grid: 'web',
      unitKey: 'unit',
      endpoints: [
        { address: '10.0.1.7', node: 'edge-1' },
        { address: '10.0.2.7', node: 'edge-2' },
      ],
    },
  ];
  const byName = (n: string) => nodes.find((x) => x.name === n)!;
  const keeps = (client: FixtureNode, s: Svc, ep: { node: string }): boolean =>
    s.unitKey === undefined
      ? ep.node === client.name
      : byName(ep.node).labels[s.unitKey] !== undefined &&
        byName(ep.node).labels[s.unitKey] === client.labels[s.unitKey];
  const svc = (c: LayoutColumn) => c as Svc;
  const cell = (n: FixtureNode, c: LayoutColumn): Cell => {
    const s = svc(c);
    const kept = s.endpoints.filter((ep) => keeps(n, s, ep)).length;
    const total = s.endpoints.length;
    const state =
      kept === total ? 'all' : kept > 0 ? 'some' : s.unitKey === undefined ? 'dropped' : 'refused';
    return { kept, total, state };
  };
  return {
    nodes,
    services,
    defaultGroupKey: 'unit',
    healthConfigured: true,
    cell,
    explain(n, c) {
      const s = svc(c);
      const verdicts = s.endpoints.map((ep) => ({
        endpoint: {
          id: `v4/${ep.address}`,
          pool: 'v4',
          addressType: 'IPv4',
          addresses: [ep.address],
          ready: true,
          serving: true,
          terminating: false,
          nodeName: ep.node,
        },
        kept: keeps(n, s, ep),
        reason: keeps(n, s, ep)
          ? s.unitKey
            ? 'unit-match'
            : 'same-node'
          : s.unitKey
            ? 'other-unit'
            : 'remote',
      }));
      const rule = {
        kind: s.rule,
        source: s.unitKey ? 'superedge annotation' : 'spec.internalTrafficPolicy',
        keys: s.unitKey ? [s.unitKey] : ['Local'],
      };
      const json = {
        service: { namespace: s.namespace, name: s.name },
        node: n.name,
        internal: {
          rule,
          pools: [{ pool: 'v4', servingTerminating: false, kept: verdicts.filter((v) => v.kept).length }],
          verdicts,
        },
        problems: [],
      };
      const text = [
        `Service ${s.key}, from node ${n.name}: ${rule.kind} (${rule.source})`,
        ...verdicts.map(
          (v) =>
            `  ${v.kept ? 'kept   ' : 'dropped'} ${v.endpoint.addresses[0]} on ${v.endpoint.nodeName}: ${v.reason}`,
        ),
      ].join('\n');
      return { json, text };
    },
    service(c, groupKey): ServiceAnswer {
      const s = svc(c);
      const unitOf = (n: FixtureNode) => (groupKey === '' ? null : (n.labels[groupKey] ?? null));
      const values = [...new Set(nodes.map(unitOf))];
      return {
        key: s.key,
        rule: `${s.rule}: ${s.unitKey ?? 'Local'}`,
        groupKey,
        units: values.map((value) => ({
          value,
          nodes: nodes
            .filter((n) => unitOf(n) === value)
            .map((n) => ({
              node: n.name,
              endpoints: s.endpoints
                .filter((ep) => ep.node === n.name)
                .map((ep) => ({
                  address: ep.address,
                  pod: `${s.name}-${ep.node}`,
                  ready: true,
                  serving: true,
                  terminating: false,
                })),
            })),
        })),
        unplaced: [],
        flows: values.map((from) => {
          const members = nodes.filter((n) => unitOf(n) === from);
          return {
            from,
            nodes: members.length,
            none: members.filter((n) => cell(n, s).kept === 0).length,
            to: values
              .map((value) => ({
                value,
                nodes: members.filter((n) =>
                  s.endpoints.some((ep) => keeps(n, s, ep) && unitOf(byName(ep.node)) === value),
                ).length,
              }))
              .filter((t) => t.nodes > 0),
          };
        }),
      };
    },
  };
}

describe('the dashboard page on a seed-like model (3 nodes × 2 Services)', () => {
  let server: FixtureServer;
  let browser: BrowserSession;
  let page: Page;
  const model = seedModel();

  before(async () => {
    assertBuilt();
    server = await startFixtureServer(model);
    browser = await openBrowser();
    page = browser.page;
    await page.goto(server.url);
    await page.waitForSelector('html[data-matrix="painted"]', { timeout: WAIT_MS });
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('draws every cell with the state and counts the server sent', async () => {
    // Marked painted only once the cells are drawn (tests and benchmarks wait for the mark).
    assert.equal(await page.locator('.cell:not([data-state="pending"])').count(), 6);
    assert.deepEqual(await cellsShown(page), {
      'edge-1|shop/db': 'some 1/2',
      'edge-2|shop/db': 'dropped 0/2',
      'edge-3|shop/db': 'some 1/2',
      'edge-1|shop/web': 'all 2/2',
      'edge-2|shop/web': 'all 2/2',
      'edge-3|shop/web': 'refused 0/2',
    });
    assert.equal(await page.textContent(cellSel('edge-1', 'shop/web')), '2');
    // Rows in their groups (unit, the default key), with health and readiness on the node.
    const groups = await page.$$eval('.group-header', (els) => els.map((e) => (e as El).dataset['group']));
    assert.deepEqual(groups, ['u1', 'u2']);
    assert.equal(await page.locator('[data-row-node="edge-3"] .dot.unhealthy').count(), 1);
    assert.equal(await page.locator('[data-row-node="edge-3"] .not-ready').count(), 1);
    assert.equal(await page.locator('[data-row-node="edge-1"] .not-ready').count(), 0);
    assert.ok(Number(await page.getAttribute('.matrix', 'data-generation')) >= 1);
    assert.equal(await page.evaluate(() => performance.getEntriesByName('matrix-painted').length), 1);
    assert.equal(await page.textContent('[role="status"][aria-label="live updates"]'), 'live');
  });

  it('shows the state and counts of a hovered cell', async () => {
    await page.hover(cellSel('edge-3', 'shop/web'));
    const tip = page.locator('[role="tooltip"]');
    await tip.waitFor({ timeout: WAIT_MS });
    assert.equal(await tip.textContent(), 'edge-3 → shop/web: refused, 0 of 2 endpoints');
  });

  it('opens the explain panel on click, with the text and each endpoint kept or dropped', async () => {
    await page.click(cellSel('edge-3', 'shop/web'));
    const panel = page.getByRole('dialog', { name: 'explain' });
    await panel.locator('pre').waitFor({ timeout: WAIT_MS });
    const expected = model.explain(model.nodes[2]!, model.services[1]!).text;
    assert.equal(await panel.locator('pre').textContent(), expected);
    assert.equal(await panel.locator('[data-rule]').getAttribute('data-rule'), 'superedge');
    const rows = await panel
      .locator('.verdicts tbody tr')
      .evaluateAll((els) => els.map((e) => [(e as El).dataset['endpoint'], e.className]));
    assert.deepEqual(rows, [
      ['v4/10.0.1.7', 'dropped'],
      ['v4/10.0.2.7', 'dropped'],
    ]);
    await saveScreenshot(page, 'dashboard-page-explain');
    await panel.getByRole('button', { name: 'close' }).click();
    await panel.waitFor({ state: 'detached', timeout: WAIT_MS });
  });

  it('opens the Service view from a column header: endpoints by unit and node, and the flows', async () => {
    await page.click('.col-header[data-service="shop/db"]');
    const view = page.getByRole('dialog', { name: 'service' });
    await view.locator('.flows').waitFor({ timeout: WAIT_MS });
    const placed = await view
      .locator('.unit .node-box')
      .evaluateAll((els) =>
        els.map((e) => [
          e.closest('.unit')!.dataset['unit'],
          (e as El).dataset['node'],
          [...e.querySelectorAll('.ep')].map((x) => x.dataset['address']).join(','),
        ]),
      );
    assert.deepEqual(placed, [
      ['u1', 'edge-1', '10.0.1.5'],
      ['u1', 'edge-2', ''],
      ['u2', 'edge-3', '10.0.3.5'],
    ]);
    // edge-2 (in u1) may use no endpoint of the Local Service: u1 is marked.
    assert.equal(await view.locator('.flow.starved').getAttribute('data-from'), 'u1');
    assert.equal(await view.locator('.unit.starved').getAttribute('data-unit'), 'u1');
    await saveScreenshot(page, 'dashboard-page-service');
    await page.keyboard.press('Escape');
    await view.waitFor({ state: 'detached', timeout: WAIT_MS });
  });

  it('narrows the columns by name, and the namespace select lists the namespaces', async () => {
    assert.deepEqual(
      await page
        .getByLabel('Namespace', { exact: true })
        .locator('option')
        .evaluateAll((o) => o.map((x) => (x as El).value)),
      ['', 'shop'],
    );
    await page.getByLabel('Name', { exact: true }).fill('web');
    await page.waitForFunction(count('.col-header', 1), undefined, {
      timeout: WAIT_MS,
    });
    assert.deepEqual(Object.keys(await cellsShown(page)).sort(), [
      'edge-1|shop/web',
      'edge-2|shop/web',
      'edge-3|shop/web',
    ]);
    await page.getByLabel('Name', { exact: true }).fill('');
    await page.waitForFunction(count('.col-header', 2), undefined, {
      timeout: WAIT_MS,
    });
  });

  it('regroups the rows by the label key picked', async () => {
    const picker = page.getByLabel('Group by');
    assert.deepEqual(await picker.locator('option').evaluateAll((o) => o.map((x) => (x as El).value)), [
      '',
      'unit',
      ZONE,
    ]);
    await picker.selectOption(ZONE);
    await page.waitForSelector('.group-header[data-group="z1"]', { timeout: WAIT_MS });
    const order = await page.$$eval('.group-header, .row-header', (els) =>
      els
        .map((e) => ({ top: parseFloat((e as El).style.top), d: (e as El).dataset }))
        .sort((a, b) => a.top - b.top)
        .map((x) => x.d['group'] ?? x.d['rowNode']),
    );
    assert.deepEqual(order, ['z1', 'edge-1', 'z2', 'edge-2', 'edge-3']);
    await picker.selectOption('');
    await page.waitForFunction(count('.group-header', 0), undefined, {
      timeout: WAIT_MS,
    });
    await picker.selectOption('unit');
    await page.waitForSelector('.group-header[data-group="u2"]', { timeout: WAIT_MS });
  });

  it('follows a relabel pushed over server-sent events, without a reload', async () => {
    await page.evaluate('window.marker = 1');
    server.change({ nodes: ['edge-3'], services: [] }, () => (model.nodes[2]!.labels['unit'] = 'u1'));
    await page.waitForSelector(`${cellSel('edge-3', 'shop/web')}[data-state="all"]`, { timeout: WAIT_MS });
    assert.equal((await cellsShown(page))['edge-3|shop/web'], 'all 2/2');
    await page.waitForFunction(count('.group-header', 1), undefined, {
      timeout: WAIT_MS,
    });
    assert.equal(await page.evaluate('window.marker'), 1);
    // A change to a Service alone refreshes the cells in place.
    server.change({ nodes: [], services: ['shop/db'] }, () => {
      (model.services[0] as { endpoints: Svc['endpoints'] }).endpoints = [
        { address: '10.0.2.5', node: 'edge-2' },
      ];
    });
    await page.waitForSelector(`${cellSel('edge-2', 'shop/db')}[data-state="all"]`, { timeout: WAIT_MS });
    assert.equal((await cellsShown(page))['edge-1|shop/db'], 'dropped 0/1');
    await saveScreenshot(page, 'dashboard-page-seed');
  });

  it('says when the event stream is down, and catches up on what it missed once it is back', async () => {
    const live = page.getByRole('status', { name: 'live updates' });
    server.dropStreams();
    // Changed while no stream is open: no event reaches the page.
    server.change({ nodes: ['edge-2'], services: [] }, () => (model.nodes[1]!.labels['unit'] = 'u2'));
    await page.waitForSelector('[data-live="reconnecting"]', { timeout: WAIT_MS });
    await page.waitForSelector('[data-live="live"]', { timeout: WAIT_MS });
    assert.equal(await live.textContent(), 'live');
    await page.waitForSelector(`${cellSel('edge-2', 'shop/web')}[data-state="some"]`, { timeout: WAIT_MS });
    assert.equal((await cellsShown(page))['edge-2|shop/web'], 'some 1/2');
  });
});

describe('the dashboard page at 1,000 nodes × 10,000 Services', () => {
  const NODES = 1000;
  const SERVICES = 10_000;
  const nodes: FixtureNode[] = Array.from({ length: NODES }, (_, i) => ({
    name: `n${String(i).padStart(4, '0')}`,
    labels: { unit: `u${i % 10}` },
    ready: true,
    health: 'unconfigured',
  }));
  const services: LayoutColumn[] = Array.from({ length: SERVICES }, (_, j) => ({
    key: `ns${j % 5}/s${String(j).padStart(5, '0')}`,
    namespace: `ns${j % 5}`,
    name: `s${String(j).padStart(5, '0')}`,
    rule: 'none' as const,
  })).sort((a, b) => (a.key < b.key ? -1 : 1));
  // A cell any test can recompute from the pair alone.
  const expected = (node: string, service: string): Cell => {
    const kept = (Number(node.slice(1)) * 7 + Number(service.slice(service.indexOf('/s') + 2))) % 4;
    return { kept, total: 3, state: kept === 3 ? 'all' : kept > 0 ? 'some' : 'refused' };
  };
  let server: FixtureServer;
  let browser: BrowserSession;

  before(async () => {
    assertBuilt();
    server = await startFixtureServer({
      nodes,
      services,
      defaultGroupKey: 'unit',
      healthConfigured: false,
      cell: (n, s) => expected(n.name, s.key),
      explain: () => ({ json: null, text: '' }),
      service: () => {
        throw new Error('not in this test');
      },
    });
    browser = await openBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  it('keeps only the viewport in the DOM, and shows the right pairs in the far corner', async () => {
    const { page } = browser;
    await page.goto(server.url);
    await page.waitForSelector('html[data-matrix="painted"]', { timeout: WAIT_MS * 3 });
    const check = async (): Promise<number> => {
      const shown = await cellsShown(page);
      for (const [pair, text] of Object.entries(shown)) {
        const [node, service] = pair.split('|') as [string, string];
        const c = expected(node, service);
        assert.equal(text, `${c.state} ${c.kept}/${c.total}`, pair);
      }
      return Object.keys(shown).length;
    };
    const first = await check();
    assert.ok(first > 100 && first < 3000, `${first} cells in the DOM`);
    assert.ok(await page.locator('.cell[data-node="n0000"][data-service="ns0/s00000"]').count());
    // unit u0's header row: its 100 nodes' states for the first Service (not only the rows on screen).
    const u0 = { all: 0, some: 0, refused: 0, dropped: 0 };
    for (const n of nodes.filter((x) => x.labels['unit'] === 'u0'))
      u0[expected(n.name, 'ns0/s00000').state]++;
    const summary = '.summary[data-group="u0"][data-service="ns0/s00000"]';
    assert.equal(
      await page.getAttribute(summary, 'data-summary'),
      `${u0.all}/${u0.some}/${u0.refused}/${u0.dropped}`,
    );
    // The scroll area has the full size: 10,000 columns of 22 px beside 220 px of node names.
    const size = await page.$eval('.matrix', (e) => [e.scrollWidth, e.scrollHeight]);
    assert.deepEqual(size, [220 + SERVICES * 22, 120 + (NODES + 10) * 22]);

    await page.$eval('.matrix', (e) => e.scrollTo(e.scrollWidth, e.scrollHeight));
    await page.waitForSelector(
      '.cell[data-node="n0999"][data-service="ns4/s09999"]:not([data-state="pending"])',
      {
        timeout: WAIT_MS,
      },
    );
    const last = await check();
    assert.ok(last > 100 && last < 3000, `${last} cells in the DOM`);
    assert.equal(await page.locator('.cell[data-node="n0000"]').count(), 0);
    assert.equal(await page.locator('.col-header[data-service="ns0/s00000"]').count(), 0);
    await saveScreenshot(page, 'dashboard-page-far-corner');
  });
});
