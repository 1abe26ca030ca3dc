// `svcplane demo`'s script: SuperEdge's service-group example (a DeploymentGrid and a ServiceGrid over two units, then a
// node moved to the other unit) and the ordered topology keys example (without, then with `"*"`), shown by
// requests to the Service's cluster IP from every node. Each table row says whether what the node got
// fits what the topology rules say it should get; the demo fails when a row does not.
import type { KObject } from '../api/object.js';
import { mustFindResource } from '../api/resources.js';
import { LABEL_SERVICE_NAME } from '../core/endpointslices/types.js';
import type { Client } from '../runtime/client.js';
import type { NodeRules } from '../core/demo/node-rules.js';
import {
  answersFit,
  expectedForOrderedKeys,
  expectedForUnitKey,
  rulesCell,
  rulesFit,
  table,
  tally,
  type NodeLabels,
  type ReadyEndpoint,
} from './expect.js';
import type { Answer } from './probe.js';

const SERVICES = mustFindResource('', 'services');
const NODES = mustFindResource('', 'nodes');
const SLICES = mustFindResource('discovery.k8s.io', 'endpointslices');
const SERVICE_GRIDS = mustFindResource('superedge.io', 'servicegrids');
const DEPLOYMENT_GRIDS = mustFindResource('superedge.io', 'deploymentgrids');

export const UNIT_KEY = 'zone1';
export const ZONE_KEY = 'topology.kubernetes.io/zone';
const GRID_SERVICE = 'servicegrid-demo-svc';
const ZONE_SERVICE = 'zone-demo';
const REQUESTS = 12;

export interface DemoNode {
  readonly name: string;
  readonly unit: string;
  readonly zone: string;
}

export interface ScenarioHost {
  readonly client: Client;
  readonly nodes: readonly DemoNode[];
  /** `count` GETs to ip:port from `node`, one connection each. */
  probe(node: DemoNode, ip: string, port: number, count: number): Promise<Answer[]>;
  /** Where the client on `node` reaches ip:port (the cluster IP itself, or a userspace stand-in). */
  reach(node: DemoNode, ip: string, port: number): { host: string; port: number };
  /**
   * Kernel proxy modes: what `node`'s rules do with ip:port, shown in a column headed `title`; a row
   * fits only when they DNAT to exactly the expected nodes' endpoints (or refuse when none is expected).
   */
  readonly rules?: {
    readonly title: string;
    read(node: DemoNode, ip: string, port: number): Promise<NodeRules>;
  };
  readonly out: (s: string) => void;
  readonly timeoutMs: number;
}

export const DEPLOYMENT_GRID = {
  apiVersion: 'superedge.io/v1',
  kind: 'DeploymentGrid',
  metadata: { name: 'deploymentgrid-demo', namespace: 'default' },
  spec: {
    gridUniqKey: UNIT_KEY,
    template: {
      replicas: 2,
      selector: { matchLabels: { appGrid: 'echo' } },
      template: {
        metadata: { labels: { appGrid: 'echo' } },
        spec: {
          containers: [{ name: 'echo', image: 'superedge/echoserver:2.2', ports: [{ containerPort: 8080 }] }],
        },
      },
    },
  },
};

export const SERVICE_GRID = {
  apiVersion: 'superedge.io/v1',
  kind: 'ServiceGrid',
  metadata: { name: 'servicegrid-demo', namespace: 'default' },
  spec: {
    gridUniqKey: UNIT_KEY,
    template: { selector: { appGrid: 'echo' }, ports: [{ protocol: 'TCP', port: 80, targetPort: 8080 }] },
  },
};

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

type Expect = (client: string, eps: readonly ReadyEndpoint[], labels: NodeLabels) => Set<string>;

export class Scenario {
  failures = 0;

  constructor(private readonly h: ScenarioHost) {}

  /** Ready endpoints (address → node) of a Service, from its slices. */
  private async endpoints(service: string): Promise<{ eps: ReadyEndpoint[]; terminating: number }> {
    const list = await this.h.client.list(SLICES, {
      namespace: 'default',
      labelSelector: `${LABEL_SERVICE_NAME}=${service}`,
    });
    const eps: ReadyEndpoint[] = [];
    let terminating = 0;
    for (const s of list.items as Array<KObject & { endpoints?: Array<Record<string, unknown>> }>)
      for (const e of s.endpoints ?? []) {
        const c = (e['conditions'] ?? {}) as { ready?: boolean; terminating?: boolean };
        if (c.terminating === true) terminating++;
        if (c.ready === false) continue;
        eps.push({ ip: (e['addresses'] as string[])[0]!, node: String(e['nodeName'] ?? '') });
      }
    return { eps, terminating };
  }

  private async labels(): Promise<NodeLabels> {
    const list = await this.h.client.list(NODES);
    return new Map(list.items.map((n) => [n.metadata.name ?? '', n.metadata.labels ?? {}]));
  }

  private async clusterIP(service: string): Promise<{ ip: string; port: number }> {
    const deadline = Date.now() + this.h.timeoutMs;
    for (;;) {
      try {
        const svc = (await this.h.client.get(SERVICES, 'default', service)) as KObject & {
          spec?: { clusterIP?: string; ports?: Array<{ port: number }> };
        };
        const ip = svc.spec?.clusterIP;
        if (ip !== undefined && ip !== '' && ip !== 'None')
          return { ip, port: svc.spec?.ports?.[0]?.port ?? 80 };
      } catch {
        // not created yet
      }
      if (Date.now() > deadline)
        throw new Error(`Service ${service} has no cluster IP after ${this.h.timeoutMs / 1000} s`);
      await sleep(200);
    }
  }

  /** Waits until the Service has `want(count)` ready endpoints and none terminating. */
  private async settled(service: string, want: (n: number) => boolean): Promise<void> {
    const deadline = Date.now() + this.h.timeoutMs;
    for (;;) {
      const { eps, terminating } = await this.endpoints(service);
      if (want(eps.length) && terminating === 0) return;
      if (Date.now() > deadline)
        throw new Error(
          `${service}: ${eps.length} ready endpoints, ${terminating} terminating, after ${this.h.timeoutMs / 1000} s`,
        );
      await sleep(250);
    }
  }

  /**
   * Probes every node until its answers fit the expectation (the proxies converge within a sync or two),
   * then prints the table of one final round. `must` adds a condition a row must meet (e.g. traffic moved).
   */
  private async show(
    title: string,
    service: string,
    expect: Expect,
    must?: (node: DemoNode, answers: readonly Answer[]) => boolean,
  ): Promise<void> {
    const { ip, port } = await this.clusterIP(service);
    const deadline = Date.now() + this.h.timeoutMs;
    let rows: string[][] = [];
    let ok = false;
    while (!ok) {
      const [{ eps }, labels] = await Promise.all([this.endpoints(service), this.labels()]);
      rows = [];
      ok = true;
      for (const n of this.h.nodes) {
        const expected = expect(n.name, eps, labels);
        const at = this.h.reach(n, ip, port);
        const rules = await this.h.rules?.read(n, ip, port);
        const answers = await this.h.probe(n, at.host, at.port, REQUESTS);
        const fits =
          answersFit(answers, expected) &&
          (rules === undefined || rulesFit(rules, eps, expected)) &&
          (must?.(n, answers) ?? true);
        ok &&= fits;
        const l = labels.get(n.name) ?? {};
        rows.push([
          n.name,
          l[UNIT_KEY] ?? '-',
          l[ZONE_KEY] ?? '-',
          tally(answers),
          expected.size === 0 ? 'refused' : [...expected].sort().join(','),
          ...(rules === undefined ? [] : [rulesCell(rules, eps)]),
          fits ? 'ok' : 'WRONG',
        ]);
      }
      if (!ok && Date.now() < deadline) {
        await sleep(500);
        continue;
      }
      break;
    }
    if (!ok) this.failures++;
    const standIns = this.h.nodes
      .map((n) => [n.name, this.h.reach(n, ip, port)] as const)
      .filter(([, a]) => a.host !== ip || a.port !== port)
      .map(([n, a]) => `${n} at ${a.host}:${a.port}`);
    this.h.out(
      `\n${title}\n  ${service} ${ip}:${port}, ${REQUESTS} requests from each node (one connection each)` +
        (standIns.length === 0 ? '' : `\n  (userspace stand-ins for ${ip}:${port}: ${standIns.join(', ')})`) +
        '\n',
    );
    this.h.out(
      table(
        [
          'NODE',
          'UNIT (zone1)',
          'ZONE',
          '"node name:" OF THE ANSWERS',
          'EXPECTED',
          ...(this.h.rules === undefined ? [] : [this.h.rules.title]),
          '',
        ],
        rows,
      )
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n'),
    );
  }

  async run(): Promise<void> {
    const c = this.h.client;
    this.h.out(
      "\n1. SuperEdge's service groups: a DeploymentGrid and a ServiceGrid keyed by zone1 (kubectl apply)",
    );
    await c.create(DEPLOYMENT_GRIDS, 'default', DEPLOYMENT_GRID);
    await c.create(SERVICE_GRIDS, 'default', SERVICE_GRID);
    const units = new Set(this.h.nodes.map((n) => n.unit));
    await this.settled(GRID_SERVICE, (n) => n === 2 * units.size);
    const unitExpect: Expect = (client, eps, labels) => expectedForUnitKey(client, UNIT_KEY, eps, labels);
    await this.show('   Each node reaches only the echo pods of its own unit:', GRID_SERVICE, unitExpect);

    const moved = this.h.nodes[0]!;
    const to = this.h.nodes.find((n) => n.unit !== moved.unit)?.unit ?? moved.unit;
    this.h.out(`\n2. kubectl label node ${moved.name} ${UNIT_KEY}=${to} --overwrite`);
    await c.patch(NODES, '', moved.name, 'merge', { metadata: { labels: { [UNIT_KEY]: to } } });
    // The grid drops the Deployment of a unit without nodes; wait for its pods to go.
    await this.settled(GRID_SERVICE, (n) => n > 0);
    await this.show(
      `   ${moved.name} is now in ${to}: its traffic goes to that unit's pods`,
      GRID_SERVICE,
      unitExpect,
      (n, answers) => n.name !== moved.name || answers.some((a) => a !== moved.name),
    );

    this.h.out(
      `\n3. Ordered topologyKeys: a Service with spec.topologyKeys ["${ZONE_KEY}"] over the same pods`,
    );
    await c.create(SERVICES, 'default', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: ZONE_SERVICE, namespace: 'default' },
      spec: {
        selector: { appGrid: 'echo' },
        ports: [{ port: 80, targetPort: 8080 }],
        topologyKeys: [ZONE_KEY],
      },
    });
    const bare = this.h.nodes[this.h.nodes.length - 1]!;
    this.h.out(`   kubectl label node ${bare.name} ${ZONE_KEY}-     (${bare.name} has no zone now)`);
    await c.patch(NODES, '', bare.name, 'merge', { metadata: { labels: { [ZONE_KEY]: null } } });
    await this.settled(ZONE_SERVICE, (n) => n > 0);
    await this.show(
      `   Without "*", a node whose zone has no pods, or that has no zone, is refused:`,
      ZONE_SERVICE,
      (client, eps, labels) => expectedForOrderedKeys(client, [ZONE_KEY], eps, labels),
      (n, answers) => n.name !== bare.name || answers.every((a) => a === 'refused'),
    );

    this.h.out(`\n4. kubectl patch svc ${ZONE_SERVICE} -p '{"spec":{"topologyKeys":["${ZONE_KEY}","*"]}}'`);
    await c.patch(SERVICES, 'default', ZONE_SERVICE, 'merge', { spec: { topologyKeys: [ZONE_KEY, '*'] } });
    await this.show(
      `   With "*" last, ${bare.name} reaches every endpoint; the others keep their zone:`,
      ZONE_SERVICE,
      (client, eps, labels) => expectedForOrderedKeys(client, [ZONE_KEY, '*'], eps, labels),
      (n, answers) => n.name !== bare.name || !answers.includes('refused'),
    );
  }
}
