// ServiceGrid / DeploymentGrid controllers benchmark (issue 12): how long the `servicegrid` and
// `deploymentgrid` controllers take to stamp out what 1,000 ServiceGrids and 100 DeploymentGrids over
// 100 units ask for, how long one node relabel takes to settle, and what that costs them in CPU and
// memory.
//
// The shape (full size; --quick is smaller, with the same steps and checks):
//   - 1,000 nodes, each labelled `unit=<value>` with 100 values u000 … u099: the last node is alone in
//     unit u099, the other 999 share u000 … u098 (10 or 11 each); 10 namespaces;
//   - 1,000 ServiceGrids (`gridUniqKey: unit`, a one-port ServiceSpec) → 1,000 Services `<sg>-svc`;
//   - 100 DeploymentGrids (`gridUniqKey: unit`, a one-replica DeploymentSpec) → one Deployment per grid
//     and unit, `<dg>-<unit>`: 10,000 Deployments. (No Deployment controller runs: they stay at
//     status {}.)
//
// The steps, the same for each subject below:
//   1. namespaces and nodes (plain POSTs), then a wait until the controllers are quiet, so they know
//      every unit before the first grid arrives (as when grids are applied to a running cluster);
//   2. every grid POSTed (32 at a time, SGs and DGs interleaved); convergence = from the first grid POST
//      to the arrival, at a watcher, of the event that completes the expected set: every Service and
//      Deployment present, carrying the contract's labels, annotation, nodeSelector and controller
//      ownerReference, and nothing else carrying the grid-selector label; then the time until every
//      grid's status is current (ServiceGrid: status.service and Ready=True; DeploymentGrid: its units);
//      then one LIST of each kind must show exactly that set (owner UIDs checked too);
//   3. a wait until the controllers are quiet (< 0.05 cores for `quietSeconds`): the work they still do
//      after convergence is reported as their backlog;
//   4. relabel: the node alone in u099 gets `unit=u100` (one merge PATCH), so u099 vanishes (100
//      Deployment deletes) and u100 appears (100 creates); settled = the event that makes the watched
//      set exactly the new one, timed from the PATCH response; then the DeploymentGrid statuses, a LIST
//      check of the new set, and a wait until quiet.
//
// The subjects. The timings are `svcplane up` as users run it (controllers on its worker thread, every
// default controller on: the endpoints controllers also make Endpoints and EndpointSlices for the 1,000
// Services). A thread's memory cannot be told apart from its process's, so, as the endpoints benchmark
// does, the same steps then run against `svcplane apiserver` with `svcplane controller-manager
// --controllers servicegrid,deploymentgrid` in a process of its own: its CPU (utime + stime) and RSS
// (VmHWM, VmRSS) are the grid controllers' alone. In `up`, "controllers CPU" is every thread but the
// main one (the worker thread, plus V8's and libuv's helper threads, which also collect the API
// server's garbage) and "API server CPU" the main thread's. All processes start at once; each subject
// then runs its steps alone.
//
// Also reported, per phase: the requests the API server served (its /metrics), the grid controllers'
// reconciles and their mean time (workqueue_* metrics: up's /metrics, the controller-manager's
// --metrics-bind-address), Warning Events about grids (writes that failed and were retried), Services
// and Deployments completed per second, and the machine's busy CPU split into the processes under test,
// the benchmark's own (this process and the watcher) and everything else, since the machine is shared.
//
// Knobs: SVCPLANE_BENCH_GRIDS_SUBJECTS=up | split | split,up (which, in that order; default up,split);
// SVCPLANE_BENCH_GRIDS_CONTROLLER_ARGS more controller-manager flags (e.g. "--concurrent-grid-syncs 20");
// SVCPLANE_BENCH_SERVER_NODE_ARGS (up and the apiserver) and SVCPLANE_BENCH_CONTROLLER_NODE_ARGS (the
// controller-manager) node flags, e.g. "--cpu-prof --cpu-prof-dir=DIR".
//
// No goal: the figures are reported with what bounds them (README). One run, no repetitions; the
// watcher is a separate process (this file forked with SVCPLANE_GRIDS_BENCH_ROLE=watcher). Everything
// shares the machine's CPUs (2 on the reference VM).
import { execFileSync, spawnSync } from 'node:child_process';
import http from 'node:http';
import type https from 'node:https';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import {
  scratchDir,
  startApiServer,
  startSvcplane,
  stopChild,
  svcplaneRuntime,
  track,
  writeKubeconfig,
  type ApiServerProc,
  type Proc,
  type SvcplaneRuntime,
} from './lib/cluster.js';
import { agentFor, epochMs, request, type Conn } from './lib/http.js';
import { cpuSeconds, memory, serveWorker, sleep, startServer, stopServer, Worker } from './lib/process.js';
import { Watch, type WatchEventLine } from './lib/watch.js';
import { percentile, type BenchContext, type BenchResult } from './run.js';
import {
  GRID_SELECTOR_LABEL,
  GRID_UNIQ_KEY_LABEL,
  GRID_UNIT_LABEL,
  SUPEREDGE_API_VERSION,
  TOPOLOGY_KEYS_ANNOTATION,
} from '../src/core/grids/objects.js';

/** The controllers measured; the controller-manager must know both. */
const CONTROLLERS = ['servicegrid', 'deploymentgrid'] as const;

const SELF = fileURLToPath(import.meta.url);
const ROLE_ENV = 'SVCPLANE_GRIDS_BENCH_ROLE';

// The contract (docs/design/grids.md; SuperEdge's labels), as the benchmark checks it.
const GRID_API = SUPEREDGE_API_VERSION;
/** The node label whose values are the units. */
const UNIT_KEY = 'unit';

interface Shape {
  readonly nodes: number;
  /** Distinct values of the unit label; the last one is on exactly one node. */
  readonly units: number;
  readonly namespaces: number;
  readonly serviceGrids: number;
  readonly deploymentGrids: number;
}

interface Sizes {
  readonly shape: Shape;
  /** Concurrent POSTs (namespaces, nodes, grids). */
  readonly concurrency: number;
  readonly convergeTimeoutS: number;
  readonly relabelTimeoutS: number;
  /** How long grid statuses may lag their objects before the benchmark gives up. */
  readonly statusTimeoutS: number;
  /** Quiet = under 0.05 cores for this long, sampled every `quietSampleMs`; waited for at most `settleMaxSeconds`. */
  readonly quietSeconds: number;
  readonly quietSampleMs: number;
  readonly settleMaxSeconds: number;
  /** How often the watcher is asked whether the expected set is complete. */
  readonly pollMs: number;
}

const FULL: Sizes = {
  shape: { nodes: 1000, units: 100, namespaces: 10, serviceGrids: 1000, deploymentGrids: 100 },
  concurrency: 32,
  convergeTimeoutS: 1200,
  relabelTimeoutS: 300,
  statusTimeoutS: 300,
  quietSeconds: 3,
  quietSampleMs: 500,
  settleMaxSeconds: 300,
  pollMs: 100,
};
const QUICK: Sizes = {
  shape: { nodes: 20, units: 10, namespaces: 2, serviceGrids: 50, deploymentGrids: 10 },
  concurrency: 16,
  convergeTimeoutS: 60,
  relabelTimeoutS: 30,
  statusTimeoutS: 30,
  quietSeconds: 0.5,
  quietSampleMs: 250,
  settleMaxSeconds: 15,
  pollMs: 25,
};

// ------------------------------------------------------------------------------------------ the shape

const pad = (n: number, width: number): string => String(n).padStart(width, '0');
const unitValue = (u: number): string => `u${pad(u, 3)}`;
const nodeName = (n: number): string => `node-${pad(n, 4)}`;
const namespaceName = (k: number): string => `bench-grids-${pad(k, 2)}`;
const serviceGridName = (i: number): string => `sg-${pad(i, 4)}`;
const deploymentGridName = (j: number): string => `dg-${pad(j, 3)}`;
const serviceGridNamespace = (shape: Shape, i: number): string => namespaceName(i % shape.namespaces);
const deploymentGridNamespace = (shape: Shape, j: number): string => namespaceName(j % shape.namespaces);

/** Node n's unit: the last node alone in the last unit, the others round-robin over the rest. */
const unitOfNode = (shape: Shape, n: number): number =>
  n === shape.nodes - 1 ? shape.units - 1 : n % (shape.units - 1);

/** The unit values on the nodes before the relabel, sorted. */
const initialUnits = (shape: Shape): string[] => Array.from({ length: shape.units }, (_, u) => unitValue(u));

/** The relabel: the last node moves from the last unit (which vanishes) to a value no node had. */
const relabelOf = (shape: Shape): { node: string; from: string; to: string } => ({
  node: nodeName(shape.nodes - 1),
  from: unitValue(shape.units - 1),
  to: unitValue(shape.units),
});

/** "ns/name" → the grid that must have made it (and the unit, for a Deployment). */
interface Produced {
  readonly grid: string;
  readonly unit?: string;
}

function expectedServices(shape: Shape): Map<string, Produced> {
  const out = new Map<string, Produced>();
  for (let i = 0; i < shape.serviceGrids; i++) {
    const grid = serviceGridName(i);
    out.set(`${serviceGridNamespace(shape, i)}/${grid}-svc`, { grid });
  }
  return out;
}

function expectedDeployments(shape: Shape, units: readonly string[]): Map<string, Produced> {
  const out = new Map<string, Produced>();
  for (let j = 0; j < shape.deploymentGrids; j++) {
    const grid = deploymentGridName(j);
    for (const unit of units) out.set(`${deploymentGridNamespace(shape, j)}/${grid}-${unit}`, { grid, unit });
  }
  return out;
}

/** What a produced object's name says it is: `sg-NNNN-svc`, `dg-NNN-uNNN`. */
function parseProduced(kind: Kind, name: string): Produced | undefined {
  const m = kind === 'services' ? /^(sg-\d{4})-svc$/.exec(name) : /^(dg-\d{3})-(u\d{3})$/.exec(name);
  if (m === null) return undefined;
  return m[2] === undefined ? { grid: m[1]! } : { grid: m[1]!, unit: m[2] };
}

// ---------------------------------------------------------------------------------- the objects sent

function namespaceBody(name: string): string {
  return JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

function nodeBody(shape: Shape, n: number): string {
  const name = nodeName(n);
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        [UNIT_KEY]: unitValue(unitOfNode(shape, n)),
      },
    },
  });
}

function serviceGridBody(shape: Shape, i: number): { path: string; body: string } {
  const name = serviceGridName(i);
  const ns = serviceGridNamespace(shape, i);
  return {
    path: `/apis/${GRID_API}/namespaces/${ns}/servicegrids`,
    body: JSON.stringify({
      apiVersion: GRID_API,
      kind: 'ServiceGrid',
      metadata: { name, namespace: ns },
      spec: {
        gridUniqKey: UNIT_KEY,
        template: {
          selector: { app: name },
          ports: [{ name: 'http', port: 80, targetPort: 8080, protocol: 'TCP' }],
        },
      },
    }),
  };
}

function deploymentGridBody(shape: Shape, j: number): { path: string; body: string } {
  const name = deploymentGridName(j);
  const ns = deploymentGridNamespace(shape, j);
  return {
    path: `/apis/${GRID_API}/namespaces/${ns}/deploymentgrids`,
    body: JSON.stringify({
      apiVersion: GRID_API,
      kind: 'DeploymentGrid',
      metadata: { name, namespace: ns },
      spec: {
        gridUniqKey: UNIT_KEY,
        template: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: {
              containers: [
                {
                  name: 'app',
                  image: 'registry.k8s.io/e2e-test-images/agnhost:2.53',
                  args: ['netexec', '--http-port=8080'],
                  ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
                },
              ],
            },
          },
        },
      },
    }),
  };
}

/** Every grid, ServiceGrids and DeploymentGrids interleaved so that both controllers work at once. */
function gridBodies(shape: Shape): Array<{ path: string; body: string }> {
  const out: Array<{ path: string; body: string }> = [];
  const every = Math.max(1, Math.floor(shape.serviceGrids / Math.max(1, shape.deploymentGrids)));
  let j = 0;
  for (let i = 0; i < shape.serviceGrids; i++) {
    out.push(serviceGridBody(shape, i));
    if ((i + 1) % every === 0 && j < shape.deploymentGrids) out.push(deploymentGridBody(shape, j++));
  }
  while (j < shape.deploymentGrids) out.push(deploymentGridBody(shape, j++));
  return out;
}

// --------------------------------------------------------------------------- checks of what was made

const at = (v: unknown, ...keys: string[]): unknown => {
  let o = v;
  for (const k of keys)
    o = o !== null && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined;
  return o;
};
const show = (v: unknown): string => (v === undefined ? '(none)' : JSON.stringify(v));

function ownerProblem(obj: unknown, kind: string, grid: string, uid: string | undefined): string | undefined {
  const refs = at(obj, 'metadata', 'ownerReferences');
  const controllers = Array.isArray(refs) ? refs.filter((r) => at(r, 'controller') === true) : [];
  if (controllers.length !== 1) return `${controllers.length} controller ownerReferences`;
  const r = controllers[0] as unknown;
  if (at(r, 'apiVersion') !== GRID_API || at(r, 'kind') !== kind || at(r, 'name') !== grid)
    return `controller ownerReference ${show(at(r, 'apiVersion'))} ${show(at(r, 'kind'))} ${show(at(r, 'name'))}`;
  if (uid !== undefined && at(r, 'uid') !== uid) return `controller ownerReference uid is not ${grid}'s`;
  return undefined;
}

function labelProblems(obj: unknown, want: Record<string, string>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(want)) {
    const have = at(obj, 'metadata', 'labels', k);
    if (have !== v) out.push(`label ${k}=${show(have)}, want ${v}`);
  }
  return out;
}

/** What is wrong with a Service that ServiceGrid `grid` must have made (undefined: nothing). */
function serviceProblem(obj: unknown, p: Produced, gridUid?: string): string | undefined {
  const problems = labelProblems(obj, { [GRID_SELECTOR_LABEL]: p.grid, [GRID_UNIQ_KEY_LABEL]: UNIT_KEY });
  const topologyKeys = at(obj, 'metadata', 'annotations', TOPOLOGY_KEYS_ANNOTATION);
  let keys: unknown;
  try {
    keys = typeof topologyKeys === 'string' ? JSON.parse(topologyKeys) : undefined;
  } catch {
    keys = undefined;
  }
  if (!Array.isArray(keys) || keys.length !== 1 || keys[0] !== UNIT_KEY)
    problems.push(`annotation ${TOPOLOGY_KEYS_ANNOTATION}=${show(topologyKeys)}`);
  const owner = ownerProblem(obj, 'ServiceGrid', p.grid, gridUid);
  if (owner !== undefined) problems.push(owner);
  if (at(obj, 'spec', 'selector', 'app') !== p.grid)
    problems.push(`selector ${show(at(obj, 'spec', 'selector'))}`);
  const ports = at(obj, 'spec', 'ports');
  if (!Array.isArray(ports) || ports.length !== 1 || at(ports[0], 'port') !== 80)
    problems.push(`ports ${show(ports)}`);
  return problems.length === 0 ? undefined : problems.join('; ');
}

/** What is wrong with a Deployment that DeploymentGrid `grid` must have made for `unit`. */
function deploymentProblem(obj: unknown, p: Produced, gridUid?: string): string | undefined {
  const unit = p.unit ?? '';
  const problems = labelProblems(obj, {
    [GRID_SELECTOR_LABEL]: p.grid,
    [GRID_UNIQ_KEY_LABEL]: UNIT_KEY,
    [GRID_UNIT_LABEL]: unit,
  });
  const nodeSelector = at(obj, 'spec', 'template', 'spec', 'nodeSelector');
  if (at(nodeSelector, UNIT_KEY) !== unit) problems.push(`nodeSelector ${show(nodeSelector)}`);
  const owner = ownerProblem(obj, 'DeploymentGrid', p.grid, gridUid);
  if (owner !== undefined) problems.push(owner);
  if (at(obj, 'spec', 'replicas') !== 1) problems.push(`replicas ${show(at(obj, 'spec', 'replicas'))}`);
  if (at(obj, 'spec', 'template', 'metadata', 'labels', 'app') !== p.grid)
    problems.push(`pod template labels ${show(at(obj, 'spec', 'template', 'metadata', 'labels'))}`);
  return problems.length === 0 ? undefined : problems.join('; ');
}

type Kind = 'services' | 'deployments';
const KINDS: readonly Kind[] = ['services', 'deployments'];
const PRODUCED_PATH: Record<Kind, string> = {
  services: '/api/v1/services',
  deployments: '/apis/apps/v1/deployments',
};
const checkProduced = (kind: Kind, obj: unknown, p: Produced, gridUid?: string): string | undefined =>
  kind === 'services' ? serviceProblem(obj, p, gridUid) : deploymentProblem(obj, p, gridUid);

type GridKind = 'servicegrids' | 'deploymentgrids';
const GRID_KINDS: readonly GridKind[] = ['servicegrids', 'deploymentgrids'];

/** Whether a grid's status says what it made: the ServiceGrid's Service and Ready, the DeploymentGrid's units. */
function gridStatusProblem(kind: GridKind, obj: unknown, units: readonly string[]): string | undefined {
  const name = String(at(obj, 'metadata', 'name'));
  const status = at(obj, 'status');
  if (kind === 'servicegrids') {
    if (at(status, 'service') !== `${name}-svc`) return `status.service ${show(at(status, 'service'))}`;
    const conditions = at(status, 'conditions');
    const ready = Array.isArray(conditions) ? conditions.find((c) => at(c, 'type') === 'Ready') : undefined;
    if (at(ready, 'status') !== 'True') return `Ready condition ${show(ready)}`;
    return undefined;
  }
  // status.units counts the units; status.states holds one DeploymentStatus per unit, keyed by value.
  const count = at(status, 'units');
  const states = at(status, 'states');
  const keys = states !== null && typeof states === 'object' ? Object.keys(states).sort() : undefined;
  if (count !== units.length) return `status.units ${show(count)}, want ${units.length}`;
  if (keys === undefined || keys.join(',') !== units.join(','))
    return `status.states has ${keys === undefined ? 'no units' : keys.join(',')}`;
  return undefined;
}

// ------------------------------------------------------------------------------------- the watcher

interface PhaseStatus {
  /** Expected objects, present and as the contract says. */
  good: number;
  expected: number;
  /** Objects with the grid-selector label that are not expected. */
  stray: number;
  /** Expected objects present but wrong. */
  wrong: number;
  /** A few of the wrong and unexpected objects, with what is wrong (status replies only). */
  problems: string[];
  present: number;
  events: { ADDED: number; MODIFIED: number; DELETED: number };
  firstEventAt?: number;
  /** Objects that became as expected in each second since the phase began. */
  perSecond: number[];
  /** Services only: how many were there when the Deployments were complete (convergence). */
  servicesWhenDeploymentsDone?: number;
  /** Arrival of the event that made the set exactly the expected one. */
  doneAt?: number;
  /** Relabel only: every Deployment of the new unit there / none of the vanished unit's left. */
  appearDoneAt?: number;
  vanishDoneAt?: number;
}

/** The objects of one kind carrying the grid-selector label, against the set expected now. */
class ProducedTracker {
  private expected = new Map<string, Produced>();
  /** key → its problem ('' when it is as expected). */
  private readonly present = new Map<string, string>();
  private appear: string | undefined;
  private vanish: string | undefined;
  /** How many Deployments the appearing unit must get. */
  private appearWant = 0;
  private phaseStart = 0;
  private readonly unitGood = new Map<string, number>();
  private readonly unitPresent = new Map<string, number>();
  status: PhaseStatus = ProducedTracker.fresh(0);

  constructor(private readonly kind: Kind) {}

  private static fresh(expected: number): PhaseStatus {
    return {
      good: 0,
      expected,
      stray: 0,
      wrong: 0,
      problems: [],
      present: 0,
      events: { ADDED: 0, MODIFIED: 0, DELETED: 0 },
      perSecond: [],
    };
  }

  /** A new expected set: figures from now on are that phase's. */
  expect(
    expected: Map<string, Produced>,
    appear: string | undefined,
    vanish: string | undefined,
    now: number,
  ): void {
    this.expected = expected;
    this.appear = appear;
    this.vanish = vanish;
    this.appearWant = 0;
    for (const p of expected.values()) if (appear !== undefined && p.unit === appear) this.appearWant++;
    this.status = ProducedTracker.fresh(expected.size);
    this.phaseStart = now;
    this.recount(now);
  }

  private recount(t: number): void {
    const s = this.status;
    s.good = 0;
    s.stray = 0;
    s.wrong = 0;
    s.present = this.present.size;
    for (const [key, problem] of this.present) {
      if (!this.expected.has(key)) s.stray++;
      else if (problem === '') s.good++;
      else s.wrong++;
    }
    this.check(t);
  }

  /** The status now, with a few of the expected objects that are wrong and of the unexpected ones. */
  snapshot(): PhaseStatus {
    const problems: string[] = [];
    for (const [key, problem] of this.present) {
      if (problems.length >= 5) break;
      if (!this.expected.has(key)) problems.push(`${key}: not expected`);
      else if (problem !== '') problems.push(`${key}: ${problem}`);
    }
    return {
      ...this.status,
      events: { ...this.status.events },
      perSecond: [...this.status.perSecond],
      problems,
    };
  }

  private check(t: number): void {
    const s = this.status;
    if (s.doneAt === undefined && s.good === s.expected && s.stray === 0) s.doneAt = t;
    if (this.appear !== undefined && s.appearDoneAt === undefined) {
      if ((this.unitGood.get(this.appear) ?? 0) === this.appearWant) s.appearDoneAt = t;
    }
    if (
      this.vanish !== undefined &&
      s.vanishDoneAt === undefined &&
      (this.unitPresent.get(this.vanish) ?? 0) === 0
    )
      s.vanishDoneAt = t;
  }

  onEvent(ev: WatchEventLine, t: number): void {
    const meta = ev.object.metadata ?? {};
    const key = `${meta.namespace ?? ''}/${meta.name ?? ''}`;
    const s = this.status;
    if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') s.events[ev.type]++;
    s.firstEventAt ??= t;
    const parsed = parseProduced(this.kind, meta.name ?? '');
    const old = this.present.get(key);
    const problem =
      ev.type === 'DELETED'
        ? undefined
        : parsed === undefined
          ? 'not a name the benchmark expects'
          : (checkProduced(this.kind, ev.object, parsed) ?? '');
    const unit = parsed?.unit;
    const bump = (m: Map<string, number>, d: number): void => {
      if (unit !== undefined && d !== 0) m.set(unit, (m.get(unit) ?? 0) + d);
    };
    bump(this.unitPresent, (problem === undefined ? 0 : 1) - (old === undefined ? 0 : 1));
    bump(this.unitGood, (problem === '' ? 1 : 0) - (old === '' ? 1 : 0));
    if (problem === undefined) this.present.delete(key);
    else this.present.set(key, problem);
    // Counters: the key's contribution before and after.
    const expected = this.expected.has(key);
    const contribution = (p: string | undefined): [number, number, number] =>
      p === undefined ? [0, 0, 0] : !expected ? [0, 1, 0] : p === '' ? [1, 0, 0] : [0, 0, 1];
    const [g0, s0, w0] = contribution(old);
    const [g1, s1, w1] = contribution(problem);
    s.good += g1 - g0;
    if (g1 > g0) {
      const second = Math.max(0, Math.floor((t - this.phaseStart) / 1000));
      while (s.perSecond.length <= second) s.perSecond.push(0);
      s.perSecond[second]!++;
    }
    s.stray += s1 - s0;
    s.wrong += w1 - w0;
    s.present = this.present.size;
    this.check(t);
  }
}

/** The grids' statuses: how many say what their grid made. */
class GridTracker {
  /** key → the grid and what is wrong with its status ('' when current). */
  private readonly grids = new Map<string, { obj: unknown; problem: string }>();
  private units: readonly string[] = [];
  private current = 0;
  status: { current: number; grids: number; doneAt?: number; problems: string[] } = {
    current: 0,
    grids: 0,
    problems: [],
  };

  constructor(
    private readonly kind: GridKind,
    private readonly expectedGrids: number,
  ) {}

  expect(units: readonly string[], t: number): void {
    this.units = units;
    this.status = { current: 0, grids: 0, problems: [] };
    this.current = 0;
    for (const g of this.grids.values()) {
      g.problem = gridStatusProblem(this.kind, g.obj, units) ?? '';
      if (g.problem === '') this.current++;
    }
    this.update(t);
  }

  onEvent(ev: WatchEventLine, t: number): void {
    const key = `${ev.object.metadata?.namespace ?? ''}/${ev.object.metadata?.name ?? ''}`;
    if (this.grids.get(key)?.problem === '') this.current--;
    if (ev.type === 'DELETED') this.grids.delete(key);
    else {
      const problem = gridStatusProblem(this.kind, ev.object, this.units) ?? '';
      this.grids.set(key, { obj: ev.object, problem });
      if (problem === '') this.current++;
    }
    this.update(t);
  }

  private update(t: number): void {
    const s = this.status;
    s.current = this.current;
    s.grids = this.grids.size;
    if (s.doneAt === undefined && this.current === this.expectedGrids) s.doneAt = t;
  }

  /** The status now, with a few of the problems. */
  snapshot(): GridTracker['status'] {
    const problems: string[] = [];
    for (const [key, g] of this.grids) {
      if (g.problem === '') continue;
      problems.push(`${key}: ${g.problem}`);
      if (problems.length >= 3) break;
    }
    return { ...this.status, problems };
  }
}

type WatcherRequest =
  | { op: 'start'; conn: Conn; shape: Shape }
  | { op: 'expect'; units: string[]; appear?: string; vanish?: string }
  | { op: 'status' }
  | { op: 'stop' };

interface WatcherStatus {
  produced: Record<Kind, PhaseStatus>;
  grids: Record<GridKind, GridTracker['status']>;
  /** Per watch: connects, relists, errors and the last error. */
  health: Record<string, { connects: number; relists: number; errors: number; lastError?: string }>;
}

function watcherMain(): void {
  let watches: Array<[string, Watch]> = [];
  let shape: Shape | undefined;
  let produced: Record<Kind, ProducedTracker> | undefined;
  let grids: Record<GridKind, GridTracker> | undefined;
  const errors: Record<string, { count: number; last?: string }> = {};
  serveWorker<WatcherRequest>(async (msg) => {
    switch (msg.op) {
      case 'start': {
        for (const [, w] of watches) w.stop();
        shape = msg.shape;
        const p = {
          services: new ProducedTracker('services'),
          deployments: new ProducedTracker('deployments'),
        };
        const g = {
          servicegrids: new GridTracker('servicegrids', msg.shape.serviceGrids),
          deploymentgrids: new GridTracker('deploymentgrids', msg.shape.deploymentGrids),
        };
        produced = p;
        grids = g;
        const onError = (name: string) => (err: Error) => {
          const e = (errors[name] ??= { count: 0 });
          e.count++;
          e.last = err.message.slice(0, 300);
        };
        watches = [
          ...KINDS.map((k): [string, Watch] => [
            k,
            new Watch(
              msg.conn,
              PRODUCED_PATH[k],
              (ev, t) => {
                const before = p.deployments.status.doneAt;
                p[k].onEvent(ev, t);
                if (before === undefined && p.deployments.status.doneAt !== undefined)
                  p.services.status.servicesWhenDeploymentsDone = p.services.status.good;
              },
              { labelSelector: GRID_SELECTOR_LABEL },
              onError(k),
            ),
          ]),
          ...GRID_KINDS.map((k): [string, Watch] => [
            k,
            new Watch(msg.conn, `/apis/${GRID_API}/${k}`, (ev, t) => g[k].onEvent(ev, t), {}, onError(k)),
          ]),
        ];
        await Promise.all(watches.map(([, w]) => w.connected()));
        return process.pid;
      }
      case 'expect': {
        if (shape === undefined || produced === undefined || grids === undefined)
          throw new Error('not started');
        const now = epochMs();
        produced.services.expect(expectedServices(shape), undefined, undefined, now);
        produced.deployments.expect(expectedDeployments(shape, msg.units), msg.appear, msg.vanish, now);
        for (const k of GRID_KINDS) grids[k].expect(msg.units, now);
        return null;
      }
      case 'status': {
        if (produced === undefined || grids === undefined) throw new Error('not started');
        const out: WatcherStatus = {
          produced: {
            services: produced.services.snapshot(),
            deployments: produced.deployments.snapshot(),
          },
          grids: {
            servicegrids: grids.servicegrids.snapshot(),
            deploymentgrids: grids.deploymentgrids.snapshot(),
          },
          health: Object.fromEntries(
            watches.map(([name, w]) => [
              name,
              {
                connects: w.stats.connects,
                relists: w.stats.relists,
                errors: errors[name]?.count ?? 0,
                ...(errors[name]?.last === undefined ? {} : { lastError: errors[name]!.last }),
              },
            ]),
          ),
        };
        return out;
      }
      case 'stop':
        for (const [, w] of watches) w.stop();
        watches = [];
        return null;
    }
  });
}

if (process.env[ROLE_ENV] === 'watcher') watcherMain();

// ------------------------------------------------------------------------------------ HTTP helpers

interface Posted {
  /** Per request, ms from send to response. */
  ms: number[];
  failed: Array<{ path: string; status: number; text: string }>;
  seconds: number;
}

/** POSTs every body, `concurrency` at a time. */
async function postAll(
  agent: https.Agent,
  conn: Conn,
  reqs: ReadonlyArray<{ path: string; body: string }>,
  concurrency: number,
): Promise<Posted> {
  const ms: number[] = [];
  const failed: Posted['failed'] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, reqs.length) }, async () => {
      for (let i = next++; i < reqs.length; i = next++) {
        const r = reqs[i]!;
        const s = performance.now();
        const res = await request(agent, conn, 'POST', r.path, { body: r.body, keepText: true });
        ms.push(performance.now() - s);
        if (res.status !== 201)
          failed.push({ path: r.path, status: res.status, text: (res.text ?? '').slice(0, 300) });
      }
    }),
  );
  return { ms, failed, seconds: (performance.now() - t0) / 1000 };
}

function mustAllSucceed(what: string, p: Posted): void {
  const f = p.failed[0];
  if (f !== undefined)
    throw new Error(`${p.failed.length} ${what} POSTs failed; the first: ${f.path} → ${f.status} ${f.text}`);
}

async function getJson(agent: https.Agent, conn: Conn, p: string): Promise<unknown> {
  const res = await request(agent, conn, 'GET', p, { keepText: true });
  if (res.status !== 200) throw new Error(`GET ${p}: ${res.status} ${(res.text ?? '').slice(0, 300)}`);
  return JSON.parse(res.text ?? 'null') as unknown;
}

/** Requests the API server counted, by "VERB resource[/subresource]": how many and their total seconds. */
type ApiRequests = Record<string, { count: number; sumS: number }>;
const API_RESOURCES = [
  'services',
  'deployments',
  'servicegrids',
  'deploymentgrids',
  'nodes',
  'endpoints',
  'endpointslices',
  'events',
];

/** apiserver_request_duration_seconds from /metrics, for API_RESOURCES. */
async function apiRequests(agent: https.Agent, conn: Conn): Promise<ApiRequests> {
  const res = await request(agent, conn, 'GET', '/metrics', { accept: 'text/plain', keepText: true });
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
  const out: ApiRequests = {};
  for (const line of (res.text ?? '').split('\n')) {
    const m = /^apiserver_request_duration_seconds_(sum|count)\{([^}]*)\} (\S+)$/.exec(line);
    if (m === null) continue;
    const labels = Object.fromEntries([...m[2]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (!API_RESOURCES.includes(labels['resource'] ?? '')) continue;
    const key = `${labels['verb']} ${labels['resource']}${labels['subresource'] ? `/${labels['subresource']}` : ''}`;
    const e = (out[key] ??= { count: 0, sumS: 0 });
    if (m[1] === 'sum') e.sumS += Number(m[3]);
    else e.count += Number(m[3]);
  }
  return out;
}

type RequestCounts = Record<string, { requests: number; meanMs: number }>;

/** What the API server served between two scrapes (the benchmark's own requests included). */
function apiDelta(before: ApiRequests, after: ApiRequests): RequestCounts {
  const out: RequestCounts = {};
  for (const [k, a] of Object.entries(after)) {
    const b = before[k] ?? { count: 0, sumS: 0 };
    const n = a.count - b.count;
    if (n > 0) out[k] = { requests: n, meanMs: ((a.sumS - b.sumS) / n) * 1000 };
  }
  return out;
}

const fmtRequests = (r: RequestCounts): string =>
  Object.entries(r)
    .sort((a, b) => b[1].requests - a[1].requests)
    .map(([k, v]) => `${k} ${v.requests} (${v.meanMs.toFixed(1)} ms)`)
    .join(', ');

// -------------------------------------------------------------------------------------- the subjects

let ticksPerSec = 100;
try {
  ticksPerSec = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  /* Linux default */
}

/** CPU seconds of one thread (tid = pid: the main thread). */
function threadCpuSeconds(pid: number, tid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / ticksPerSec;
}

/** CPU seconds the whole machine has been busy (all CPUs: user, nice, system, irq, softirq, steal). */
function machineBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = f;
  return (user + nice + system + irq + softirq + steal) / ticksPerSec;
}

/** The watcher's pid, once it runs. */
let watcherPid: number | undefined;

/** CPU seconds of the benchmark's own processes: this one and the watcher. */
function benchCpuSeconds(): number {
  const own = process.cpuUsage();
  let watcher = 0;
  try {
    if (watcherPid !== undefined) watcher = cpuSeconds(watcherPid);
  } catch {
    /* exited */
  }
  return (own.user + own.system) / 1e6 + watcher;
}

interface CpuReading {
  /** The controllers' CPU: the controller-manager process; in up, every thread but the main one. */
  controllersS: number;
  /** The API server's: its process; in up, the main thread. */
  apiserverS: number;
  totalS: number;
  /** The benchmark's own processes: this one and the watcher. */
  benchS: number;
  /** Every process on the machine (busy time of /proc/stat): how much else competed for the CPUs. */
  machineS: number;
}

interface MemoryReading {
  /** The controller-manager's VmRSS and VmHWM (null in up: a thread's memory is its process's). */
  controllersRssMiB: number | null;
  controllersPeakMiB: number | null;
  /** The server process: the API server alone, or up (API server + controllers). */
  serverRssMiB: number;
  serverPeakMiB: number;
}

type SubjectName = 'up' | 'split';

interface Subject {
  readonly name: SubjectName;
  readonly setup: string;
  readonly conn: Conn;
  cpu(): CpuReading;
  memory(): MemoryReading;
  /** The CPU that must stay flat for the controllers to count as quiet. */
  quietCpuS(): number;
  /** Throws if a process under test has exited. */
  alive(): void;
  tails(): string;
  /** The controllers' Prometheus text (their workqueue_* metrics). */
  controllerMetrics(): Promise<string>;
  stop(): Promise<void>;
}

const nodeArgs = (env: string): string[] => (process.env[env] ?? '').split(' ').filter((a) => a !== '');

/** More `svcplane controller-manager` flags for the split subject, e.g. "--concurrent-grid-syncs 20". */
const extraControllerArgs = nodeArgs('SVCPLANE_BENCH_GRIDS_CONTROLLER_ARGS');

function httpGetText(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(text) : reject(new Error(`GET ${url}: ${res.statusCode}`)),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** Per grid controller's queue: keys added, reconciles done and their total seconds (workqueue_* metrics). */
type QueueCounts = Record<string, { adds: number; reconciles: number; workS: number }>;

function queueCounts(text: string): QueueCounts {
  const out: QueueCounts = {};
  for (const name of CONTROLLERS) out[name] = { adds: 0, reconciles: 0, workS: 0 };
  for (const line of text.split('\n')) {
    const m =
      /^(workqueue_adds_total|workqueue_work_duration_seconds_count|workqueue_work_duration_seconds_sum)\{name="([^"]+)"\} (\S+)$/.exec(
        line,
      );
    const q = m === null ? undefined : out[m[2]!];
    if (m === null || q === undefined) continue;
    if (m[1] === 'workqueue_adds_total') q.adds = Number(m[3]);
    else if (m[1] === 'workqueue_work_duration_seconds_count') q.reconciles = Number(m[3]);
    else q.workS = Number(m[3]);
  }
  return out;
}

/** Reconciles between two scrapes, with their mean time (a reconcile's time includes its API writes). */
type QueueFigures = Record<string, { adds: number; reconciles: number; meanMs: number }>;

function queueDelta(a: QueueCounts, b: QueueCounts): QueueFigures {
  const out: QueueFigures = {};
  for (const [name, y] of Object.entries(b)) {
    const x = a[name] ?? { adds: 0, reconciles: 0, workS: 0 };
    const n = y.reconciles - x.reconciles;
    out[name] = {
      adds: y.adds - x.adds,
      reconciles: n,
      meanMs: n === 0 ? 0 : ((y.workS - x.workS) / n) * 1000,
    };
  }
  return out;
}

const fmtQueues = (q: QueueFigures): string =>
  Object.entries(q)
    .map(([k, v]) => `${k} ${v.reconciles} reconciles (${v.meanMs.toFixed(1)} ms mean)`)
    .join(', ');

async function startUp(root: string): Promise<Subject> {
  const dataDir = path.join(root, 'up');
  mkdirSync(dataDir, { recursive: true });
  const server = await startServer(dataDir);
  track(server.child);
  // Ready line first, then the controllers' worker: /readyz turns 200 once its informers synced.
  const agent = agentFor(server.conn, 1);
  try {
    const deadline = performance.now() + 120_000;
    for (;;) {
      const res = await request(agent, server.conn, 'GET', '/readyz');
      if (res.status === 200) break;
      if (performance.now() > deadline)
        throw new Error(`svcplane up: /readyz still ${res.status} after 120 s`);
      await sleep(50);
    }
  } finally {
    agent.destroy();
  }
  const pid = server.pid;
  return {
    name: 'up',
    setup:
      '`svcplane up` (embedded sqlite; every default controller on its worker thread, the grid controllers ' +
      'among them, the endpoints controllers also writing Endpoints and EndpointSlices for the grid Services)',
    conn: server.conn,
    cpu: () => {
      // The main thread first: the rest (read after) then never comes out below what it is.
      const apiserverS = threadCpuSeconds(pid, pid);
      const totalS = cpuSeconds(pid);
      return {
        controllersS: totalS - apiserverS,
        apiserverS,
        totalS,
        benchS: benchCpuSeconds(),
        machineS: machineBusySeconds(),
      };
    },
    memory: () => {
      const m = memory(pid);
      return {
        controllersRssMiB: null,
        controllersPeakMiB: null,
        serverRssMiB: m.rssMiB,
        serverPeakMiB: m.hwmMiB,
      };
    },
    quietCpuS: () => cpuSeconds(pid),
    alive: () => {
      if (server.child.exitCode !== null || server.child.signalCode !== null)
        throw new Error(`svcplane up exited (${server.child.exitCode ?? server.child.signalCode})`);
    },
    tails: () => `svcplane up stderr: ${server.stderrTail().slice(-3000)}`,
    // up's /metrics carries its worker's workqueue_* metrics too.
    controllerMetrics: async () => {
      const agent = agentFor(server.conn, 1);
      try {
        const res = await request(agent, server.conn, 'GET', '/metrics', {
          accept: 'text/plain',
          keepText: true,
        });
        if (res.status !== 200) throw new Error(`GET /metrics: ${res.status}`);
        return res.text ?? '';
      } finally {
        agent.destroy();
      }
    },
    stop: () => stopServer(server),
  };
}

async function startSplit(root: string, runtime: SvcplaneRuntime): Promise<Subject> {
  const dataDir = path.join(root, 'apiserver');
  mkdirSync(dataDir, { recursive: true });
  const api: ApiServerProc = await startApiServer(runtime, dataDir, [], {
    timeoutMs: 120_000,
    nodeArgs: nodeArgs('SVCPLANE_BENCH_SERVER_NODE_ARGS'),
  });
  const kubeconfig = path.join(root, 'kubeconfig');
  writeKubeconfig(kubeconfig, api);
  let cm: Proc;
  try {
    cm = await startSvcplane(
      'controller-manager',
      runtime,
      [
        'controller-manager',
        '--kubeconfig',
        kubeconfig,
        '--controllers',
        CONTROLLERS.join(','),
        '--metrics-bind-address',
        '127.0.0.1:0',
        ...extraControllerArgs,
      ],
      /controller-manager running/,
      { timeoutMs: 120_000, nodeArgs: nodeArgs('SVCPLANE_BENCH_CONTROLLER_NODE_ARGS') },
    );
  } catch (err) {
    await stopChild(api.child);
    throw err;
  }
  // Logged before the running line: {"msg":"serving metrics","url":"http://127.0.0.1:PORT"}.
  const metricsUrl = /"serving metrics".*?"url":"(http:\/\/[^"]+)"/.exec(cm.stderrTail())?.[1];
  if (metricsUrl === undefined) {
    await stopChild(cm.child);
    await stopChild(api.child);
    throw new Error(`controller-manager: no metrics URL in its log: ${cm.stderrTail().slice(-1000)}`);
  }
  return {
    name: 'split',
    setup:
      '`svcplane apiserver` (embedded sqlite) and `svcplane controller-manager --kubeconfig K --controllers ' +
      `${[CONTROLLERS.join(','), ...extraControllerArgs].join(' ')}\` (token auth over TLS on 127.0.0.1), ` +
      'each its own process',
    conn: api.conn,
    cpu: () => {
      const controllersS = cpuSeconds(cm.pid);
      const apiserverS = cpuSeconds(api.pid);
      return {
        controllersS,
        apiserverS,
        totalS: controllersS + apiserverS,
        benchS: benchCpuSeconds(),
        machineS: machineBusySeconds(),
      };
    },
    memory: () => {
      const c = memory(cm.pid);
      const a = memory(api.pid);
      return {
        controllersRssMiB: c.rssMiB,
        controllersPeakMiB: c.hwmMiB,
        serverRssMiB: a.rssMiB,
        serverPeakMiB: a.hwmMiB,
      };
    },
    quietCpuS: () => cpuSeconds(cm.pid),
    alive: () => {
      for (const p of [api, cm])
        if (p.child.exitCode !== null || p.child.signalCode !== null)
          throw new Error(`${p.name} exited (${p.child.exitCode ?? p.child.signalCode})`);
    },
    controllerMetrics: () => httpGetText(`${metricsUrl}/metrics`),
    tails: () =>
      `controller-manager stderr: ${cm.stderrTail().slice(-3000)}\napiserver stderr: ${api.stderrTail().slice(-2000)}`,
    stop: async () => {
      await stopChild(cm.child);
      await stopChild(api.child);
    },
  };
}

/** The controllers this runtime's controller-manager knows, from its --help. */
function knownControllers(runtime: SvcplaneRuntime): string[] {
  const r = spawnSync(process.execPath, [...runtime.argv, 'controller-manager', '--help'], {
    encoding: 'utf8',
  });
  const m = /known: ([\w, -]+)/.exec(r.stdout ?? '');
  if (r.status !== 0 || m === null) throw new Error(`controller-manager --help: ${r.status} ${r.stderr}`);
  return m[1]!.split(',').map((s) => s.trim());
}

// ------------------------------------------------------------------------------------ the steps

interface Settle {
  /** Until the first of the quiet samples (the whole wait when never quiet). */
  busyS: number;
  quiet: boolean;
  cpu: CpuReading;
}

const cpuDelta = (a: CpuReading, b: CpuReading): CpuReading => ({
  controllersS: b.controllersS - a.controllersS,
  apiserverS: b.apiserverS - a.apiserverS,
  totalS: b.totalS - a.totalS,
  benchS: b.benchS - a.benchS,
  machineS: b.machineS - a.machineS,
});

/** Waits until the subject's controllers use under 0.05 cores for `quietSeconds`. */
async function waitQuiet(s: Subject, z: Sizes): Promise<Settle> {
  const c0 = s.cpu();
  const t0 = performance.now();
  let quietMs = 0;
  let last = s.quietCpuS();
  while (performance.now() - t0 < z.settleMaxSeconds * 1000 && quietMs < z.quietSeconds * 1000) {
    const ts = performance.now();
    await sleep(z.quietSampleMs);
    s.alive();
    const now = s.quietCpuS();
    const dt = performance.now() - ts;
    quietMs = (now - last) * 1000 < 0.05 * dt ? quietMs + dt : 0;
    last = now;
  }
  const quiet = quietMs >= z.quietSeconds * 1000;
  const waited = (performance.now() - t0) / 1000;
  return { busyS: quiet ? Math.max(0, waited - quietMs / 1000) : waited, quiet, cpu: cpuDelta(c0, s.cpu()) };
}

/** One LIST of each kind: exactly the expected set, each object as the contract says (owner UIDs too). */
/**
 * The Warning Events about grids so far, by reason (with one message each): a write a controller had to
 * retry (a create that found its object already there, a conflict) shows here even when it healed.
 */
type Warnings = Record<string, { count: number; message: string }>;

async function gridWarnings(agent: https.Agent, conn: Conn): Promise<Warnings> {
  const out: Warnings = {};
  const items = at(await getJson(agent, conn, '/api/v1/events?fieldSelector=type%3DWarning'), 'items');
  for (const e of Array.isArray(items) ? items : []) {
    const kind = at(e, 'involvedObject', 'kind');
    if (kind !== 'ServiceGrid' && kind !== 'DeploymentGrid') continue;
    const reason = `${kind} ${String(at(e, 'reason'))}`;
    const w = (out[reason] ??= { count: 0, message: String(at(e, 'message')).slice(0, 300) });
    w.count += typeof at(e, 'count') === 'number' ? (at(e, 'count') as number) : 1;
  }
  return out;
}

const fmtWarnings = (w: Warnings): string =>
  Object.entries(w)
    .map(([k, v]) => `${k} ×${v.count} (e.g. ${v.message})`)
    .join('; ');

async function listCheck(
  agent: https.Agent,
  conn: Conn,
  shape: Shape,
  units: readonly string[],
): Promise<{ services: number; deployments: number; listMs: number }> {
  const t0 = performance.now();
  const uids = new Map<string, string>();
  for (const k of GRID_KINDS) {
    const list = at(await getJson(agent, conn, `/apis/${GRID_API}/${k}`), 'items');
    for (const g of Array.isArray(list) ? list : [])
      uids.set(
        `${String(at(g, 'metadata', 'namespace'))}/${String(at(g, 'metadata', 'name'))}`,
        String(at(g, 'metadata', 'uid')),
      );
  }
  const expected = { services: expectedServices(shape), deployments: expectedDeployments(shape, units) };
  const counts = { services: 0, deployments: 0 };
  const problems: string[] = [];
  for (const kind of KINDS) {
    const list = at(
      await getJson(
        agent,
        conn,
        `${PRODUCED_PATH[kind]}?labelSelector=${encodeURIComponent(GRID_SELECTOR_LABEL)}`,
      ),
      'items',
    );
    const items = Array.isArray(list) ? list : [];
    counts[kind] = items.length;
    const seen = new Set<string>();
    const wrong: string[] = [];
    const stray: string[] = [];
    for (const obj of items) {
      const ns = String(at(obj, 'metadata', 'namespace'));
      const key = `${ns}/${String(at(obj, 'metadata', 'name'))}`;
      seen.add(key);
      const p = expected[kind].get(key);
      if (p === undefined) {
        stray.push(key);
        continue;
      }
      const problem = checkProduced(kind, obj, p, uids.get(`${ns}/${p.grid}`));
      if (problem !== undefined) wrong.push(`${key}: ${problem}`);
    }
    const missing = [...expected[kind].keys()].filter((k) => !seen.has(k));
    if (missing.length + stray.length + wrong.length > 0)
      problems.push(
        `${kind}: LIST has ${items.length}, expected ${expected[kind].size}; ${missing.length} missing ` +
          `(${missing.slice(0, 3).join(', ')}), ${stray.length} unexpected (${stray.slice(0, 3).join(', ')}), ` +
          `${wrong.length} wrong (${wrong.slice(0, 3).join(' | ')})`,
      );
  }
  if (problems.length > 0) throw new Error(`LIST check failed: ${problems.join('; ')}`);
  return { ...counts, listMs: performance.now() - t0 };
}

interface SubjectFigures {
  setup: string;
  /** 1-, 5- and 15-minute load averages when this subject's steps began. */
  loadAtStart: number[];
  /** Before the grids: nodes created and the controllers quiet. */
  before: { nodesS: number; memory: MemoryReading };
  create: { grids: number; seconds: number; postP50Ms: number; postP99Ms: number };
  convergence: {
    seconds: number;
    servicesS: number;
    deploymentsS: number;
    firstServiceS: number;
    firstDeploymentS: number;
    statusesS: { servicegrids: number; deploymentgrids: number };
    cpu: CpuReading;
    memory: MemoryReading;
    watchEvents: Record<Kind, PhaseStatus['events']>;
    apiserverRequests: RequestCounts;
    /** The grid controllers' reconciles (workqueue metrics), until the statuses were current. */
    queues: QueueFigures;
    /** Services and Deployments that became as expected in each second from just before the first POST. */
    servicesPerSecond: number[];
    deploymentsPerSecond: number[];
    /** Services there when the last Deployment arrived. */
    servicesWhenDeploymentsDone: number;
    listCheck: { services: number; deployments: number; listMs: number };
    /** Warning Events about grids, since the start. */
    warnings: Warnings;
  };
  settle: Settle & { memory: MemoryReading };
  relabel: {
    node: string;
    from: string;
    to: string;
    patchMs: number;
    seconds: number;
    firstEventS: number;
    newUnitCreatedS: number;
    oldUnitDeletedS: number;
    deploymentGridStatusesS: number;
    cpuToSettle: CpuReading;
    watchEvents: Record<Kind, PhaseStatus['events']>;
    apiserverRequests: RequestCounts;
    /** Until the controllers were quiet again. */
    queues: QueueFigures;
    listCheck: { services: number; deployments: number; listMs: number };
    /** Warning Events about grids, since the start. */
    warnings: Warnings;
  };
  settleAfterRelabel: Settle & { memory: MemoryReading };
  /** Over the whole subject: the processes' peak RSS. */
  peak: MemoryReading;
  watchHealth: WatcherStatus['health'];
  timeline: Array<{
    t: number;
    controllersCpuS: number;
    apiserverCpuS: number;
    controllersRssMiB: number | null;
    serverRssMiB: number;
  }>;
}

const progress = (st: WatcherStatus): string =>
  KINDS.map((k) => {
    const p = st.produced[k];
    return `${k} ${p.good}/${p.expected}${p.stray > 0 ? ` +${p.stray} unexpected` : ''}${p.wrong > 0 ? ` ${p.wrong} wrong` : ''}`;
  }).join(', ');

/** Polls the watcher until `done`, throwing a precise account when `timeoutS` passes first. */
async function waitWatcher(
  watcher: Worker<WatcherRequest>,
  s: Subject,
  z: Sizes,
  what: string,
  since: number,
  timeoutS: number,
  done: (st: WatcherStatus) => boolean,
  log: (l: string) => void,
): Promise<WatcherStatus> {
  let lastLog = performance.now();
  for (;;) {
    const st = await watcher.call<WatcherStatus>({ op: 'status' });
    if (done(st)) return st;
    s.alive();
    const elapsed = (epochMs() - since) / 1000;
    if (elapsed > timeoutS) {
      const problems = [
        ...KINDS.flatMap((k) => st.produced[k].problems),
        ...GRID_KINDS.flatMap((k) => st.grids[k].problems),
      ];
      throw new Error(
        `${what}: not done after ${timeoutS} s: ${progress(st)}; statuses current: ` +
          GRID_KINDS.map((k) => `${k} ${st.grids[k].current}/${st.grids[k].grids}`).join(', ') +
          (problems.length > 0 ? `; e.g. ${problems.slice(0, 6).join(' | ')}` : ''),
      );
    }
    if (performance.now() - lastLog > 10_000) {
      lastLog = performance.now();
      const c = s.cpu();
      log(`  ${elapsed.toFixed(0)} s: ${progress(st)}; controllers ${c.controllersS.toFixed(1)} CPU-s`);
    }
    await sleep(z.pollMs);
  }
}

async function measure(
  ctx: BenchContext,
  z: Sizes,
  s: Subject,
  watcher: Worker<WatcherRequest>,
): Promise<SubjectFigures> {
  const shape = z.shape;
  const log = (l: string): void => ctx.log(`${s.name}: ${l}`);
  const agent = agentFor(s.conn, z.concurrency);
  const timeline: SubjectFigures['timeline'] = [];
  const loadAtStart = loadavg();
  const t0 = performance.now();
  const sample = (): void => {
    try {
      const c = s.cpu();
      const m = s.memory();
      timeline.push({
        t: Math.round((performance.now() - t0) / 100) / 10,
        controllersCpuS: Math.round(c.controllersS * 100) / 100,
        apiserverCpuS: Math.round(c.apiserverS * 100) / 100,
        controllersRssMiB: m.controllersRssMiB === null ? null : Math.round(m.controllersRssMiB),
        serverRssMiB: Math.round(m.serverRssMiB),
      });
    } catch {
      /* exited: alive() reports it */
    }
  };
  const sampler = setInterval(sample, 1000);
  try {
    // ---- namespaces and nodes, then quiet
    const tn = performance.now();
    const nss = Array.from({ length: shape.namespaces }, (_, k) => ({
      path: '/api/v1/namespaces',
      body: namespaceBody(namespaceName(k)),
    }));
    mustAllSucceed('namespace', await postAll(agent, s.conn, nss, z.concurrency));
    const nodes = Array.from({ length: shape.nodes }, (_, n) => ({
      path: '/api/v1/nodes',
      body: nodeBody(shape, n),
    }));
    mustAllSucceed('node', await postAll(agent, s.conn, nodes, z.concurrency));
    const nodesS = (performance.now() - tn) / 1000;
    await waitQuiet(s, z);
    const memBefore = s.memory();
    log(
      `${shape.nodes} nodes in ${shape.units} units in ${nodesS.toFixed(1)} s; server RSS ${memBefore.serverRssMiB.toFixed(0)} MiB`,
    );

    // ---- the grids, and convergence
    const units = initialUnits(shape);
    watcherPid = await watcher.call<number>({ op: 'start', conn: s.conn, shape });
    await watcher.call({ op: 'expect', units });
    const api0 = await apiRequests(agent, s.conn);
    const q0 = queueCounts(await s.controllerMetrics());
    const cpu0 = s.cpu();
    const grids = gridBodies(shape);
    const gridsAt = epochMs();
    const posted = await postAll(agent, s.conn, grids, z.concurrency);
    mustAllSucceed('grid', posted);
    const create = {
      grids: grids.length,
      seconds: posted.seconds,
      postP50Ms: percentile(posted.ms, 50),
      postP99Ms: percentile(posted.ms, 99),
    };
    const nDeployments = shape.deploymentGrids * shape.units;
    log(
      `${shape.serviceGrids} ServiceGrids + ${shape.deploymentGrids} DeploymentGrids created in ${create.seconds.toFixed(1)} s ` +
        `(POST p50 ${create.postP50Ms.toFixed(1)} ms, p99 ${create.postP99Ms.toFixed(1)} ms); waiting for ` +
        `${shape.serviceGrids} Services and ${nDeployments} Deployments`,
    );
    const st = await waitWatcher(
      watcher,
      s,
      z,
      'convergence',
      gridsAt,
      z.convergeTimeoutS,
      (w) => KINDS.every((k) => w.produced[k].doneAt !== undefined),
      log,
    );
    const cpu1 = s.cpu();
    const mem1 = s.memory();
    const sec = (at1: number | undefined): number => (at1 === undefined ? NaN : (at1 - gridsAt) / 1000);
    const servicesS = sec(st.produced.services.doneAt);
    const deploymentsS = sec(st.produced.deployments.doneAt);
    log(
      `converged in ${Math.max(servicesS, deploymentsS).toFixed(1)} s (Services ${servicesS.toFixed(1)} s, ` +
        `Deployments ${deploymentsS.toFixed(1)} s, when ${st.produced.services.servicesWhenDeploymentsDone ?? '?'} ` +
        `Services were there); controllers ${cpuDelta(cpu0, cpu1).controllersS.toFixed(1)} CPU-s, ` +
        `API server ${cpuDelta(cpu0, cpu1).apiserverS.toFixed(1)} CPU-s`,
    );
    const stStatus = await waitWatcher(
      watcher,
      s,
      z,
      'grid statuses',
      gridsAt,
      z.convergeTimeoutS + z.statusTimeoutS,
      (w) => GRID_KINDS.every((k) => w.grids[k].doneAt !== undefined),
      log,
    );
    const api1 = await apiRequests(agent, s.conn);
    const queues = queueDelta(q0, queueCounts(await s.controllerMetrics()));
    log(`controllers: ${fmtQueues(queues)}`);
    const apiserverRequests = apiDelta(api0, api1);
    log(`API server served (mean server time): ${fmtRequests(apiserverRequests)}`);
    const list1 = await listCheck(agent, s.conn, shape, units);
    const warnings1 = await gridWarnings(agent, s.conn);
    if (Object.keys(warnings1).length > 0) log(`note: Warning Events about grids: ${fmtWarnings(warnings1)}`);
    const convergence: SubjectFigures['convergence'] = {
      seconds: Math.max(servicesS, deploymentsS),
      servicesS,
      deploymentsS,
      firstServiceS: sec(st.produced.services.firstEventAt),
      firstDeploymentS: sec(st.produced.deployments.firstEventAt),
      statusesS: {
        servicegrids: sec(stStatus.grids.servicegrids.doneAt),
        deploymentgrids: sec(stStatus.grids.deploymentgrids.doneAt),
      },
      cpu: cpuDelta(cpu0, cpu1),
      memory: mem1,
      watchEvents: { services: st.produced.services.events, deployments: st.produced.deployments.events },
      apiserverRequests,
      queues,
      servicesPerSecond: st.produced.services.perSecond,
      deploymentsPerSecond: st.produced.deployments.perSecond,
      servicesWhenDeploymentsDone: st.produced.services.servicesWhenDeploymentsDone ?? NaN,
      listCheck: list1,
      warnings: warnings1,
    };

    // ---- settle
    const settle0 = await waitQuiet(s, z);
    const settle = { ...settle0, memory: s.memory() };
    log(
      `then busy ${settle.busyS.toFixed(1)} s${settle.quiet ? '' : ' (never quiet)'} (controllers ` +
        `${settle.cpu.controllersS.toFixed(1)} CPU-s); RSS ${fmtMem(settle.memory)}`,
    );

    // ---- relabel
    const r = relabelOf(shape);
    const newUnits = [...units.filter((u) => u !== r.from), r.to].sort();
    await watcher.call({ op: 'expect', units: newUnits, appear: r.to, vanish: r.from });
    const api2 = await apiRequests(agent, s.conn);
    const q2 = queueCounts(await s.controllerMetrics());
    const rCpu0 = s.cpu();
    const sentAt = epochMs();
    const res = await request(agent, s.conn, 'PATCH', `/api/v1/nodes/${r.node}`, {
      body: JSON.stringify({ metadata: { labels: { [UNIT_KEY]: r.to } } }),
      contentType: 'application/merge-patch+json',
      keepText: true,
    });
    const acceptedAt = epochMs();
    if (res.status !== 200)
      throw new Error(`PATCH node ${r.node}: ${res.status} ${(res.text ?? '').slice(0, 300)}`);
    const rst = await waitWatcher(
      watcher,
      s,
      z,
      'relabel',
      acceptedAt,
      z.relabelTimeoutS,
      (w) => KINDS.every((k) => w.produced[k].doneAt !== undefined),
      log,
    );
    const rCpu1 = s.cpu();
    const rsec = (at1: number | undefined): number => (at1 === undefined ? NaN : (at1 - acceptedAt) / 1000);
    const rStatus = await waitWatcher(
      watcher,
      s,
      z,
      'DeploymentGrid statuses after the relabel',
      acceptedAt,
      z.relabelTimeoutS + z.statusTimeoutS,
      (w) => w.grids.deploymentgrids.doneAt !== undefined,
      log,
    );
    const list2 = await listCheck(agent, s.conn, shape, newUnits);
    const warnings2 = await gridWarnings(agent, s.conn);
    const settle1 = await waitQuiet(s, z);
    const api3 = await apiRequests(agent, s.conn);
    const rQueues = queueDelta(q2, queueCounts(await s.controllerMetrics()));
    const settleAfterRelabel = { ...settle1, memory: s.memory() };
    const relabel: SubjectFigures['relabel'] = {
      ...r,
      patchMs: acceptedAt - sentAt,
      seconds: rsec(rst.produced.deployments.doneAt),
      firstEventS: rsec(rst.produced.deployments.firstEventAt),
      newUnitCreatedS: rsec(rst.produced.deployments.appearDoneAt),
      oldUnitDeletedS: rsec(rst.produced.deployments.vanishDoneAt),
      deploymentGridStatusesS: rsec(rStatus.grids.deploymentgrids.doneAt),
      cpuToSettle: cpuDelta(rCpu0, rCpu1),
      watchEvents: { services: rst.produced.services.events, deployments: rst.produced.deployments.events },
      apiserverRequests: apiDelta(api2, api3),
      queues: rQueues,
      listCheck: list2,
      warnings: warnings2,
    };
    log(
      `relabel ${r.node} ${UNIT_KEY}=${r.from}→${r.to}: settled in ${relabel.seconds.toFixed(2)} s (${r.to}'s ` +
        `${shape.deploymentGrids} Deployments created at ${relabel.newUnitCreatedS.toFixed(2)} s, ${r.from}'s deleted at ` +
        `${relabel.oldUnitDeletedS.toFixed(2)} s, statuses at ${relabel.deploymentGridStatusesS.toFixed(2)} s); ` +
        `controllers ${relabel.cpuToSettle.controllersS.toFixed(2)} CPU-s to settle, ` +
        `${settleAfterRelabel.cpu.controllersS.toFixed(2)} more until quiet`,
    );
    log(`API server served for the relabel: ${fmtRequests(relabel.apiserverRequests)}`);
    log(`controllers, for the relabel: ${fmtQueues(rQueues)}`);
    const end = await watcher.call<WatcherStatus>({ op: 'status' });
    await watcher.call({ op: 'stop' });
    sample();
    return {
      setup: s.setup,
      loadAtStart,
      before: { nodesS, memory: memBefore },
      create,
      convergence,
      settle,
      relabel,
      settleAfterRelabel,
      peak: s.memory(),
      watchHealth: end.health,
      timeline,
    };
  } catch (err) {
    ctx.log(s.tails());
    throw err;
  } finally {
    clearInterval(sampler);
    agent.destroy();
  }
}

const fmtMem = (m: MemoryReading): string =>
  m.controllersRssMiB === null
    ? `${m.serverRssMiB.toFixed(0)} MiB (process)`
    : `controller-manager ${m.controllersRssMiB.toFixed(0)} MiB, apiserver ${m.serverRssMiB.toFixed(0)} MiB`;

// ------------------------------------------------------------------------------------ orchestrator

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const z = ctx.quick ? QUICK : FULL;
  const shape = z.shape;
  if (shape.units < 2 || shape.nodes < shape.units)
    throw new Error('grids bench: need units ≥ 2 and nodes ≥ units');
  const loadAtStart = loadavg();
  if (loadAtStart[0]! > 1)
    ctx.log(
      `note: load average ${loadAtStart.map((x) => x.toFixed(1)).join(' ')} at start: other processes compete ` +
        'for the CPUs, so times are pessimistic',
    );
  const wanted = (process.env.SVCPLANE_BENCH_GRIDS_SUBJECTS ?? 'up,split').split(',').map((x) => x.trim());
  // In the order named (up first by default).
  const subjects = wanted.filter((x): x is SubjectName => x === 'up' || x === 'split');
  if (subjects.length === 0) throw new Error('SVCPLANE_BENCH_GRIDS_SUBJECTS: name up, split or both');
  const runtime = svcplaneRuntime();
  const known = knownControllers(runtime);
  const missing = CONTROLLERS.filter((c) => !known.includes(c));
  if (missing.length > 0)
    throw new Error(
      `this build's controller-manager does not know ${missing.join(', ')} (known: ${known.join(', ')}): nothing to measure`,
    );
  ctx.log(`svcplane from ${runtime.kind} (${runtime.why}); subjects: ${subjects.join(', ')}`);
  ctx.log(
    `shape: ${shape.nodes} nodes in ${shape.units} units (${relabelOf(shape).node} alone in ${relabelOf(shape).from}), ` +
      `${shape.serviceGrids} ServiceGrids and ${shape.deploymentGrids} DeploymentGrids over ${shape.namespaces} namespaces`,
  );

  const root = scratchDir(mkdtempSync(path.join(tmpdir(), 'svcplane-bench-grids-')));
  const started: Subject[] = [];
  let watcher: Worker<WatcherRequest> | undefined;
  try {
    // Every process starts at once (their start-up is not measured); each subject then runs alone.
    const t0 = performance.now();
    watcher = new Worker<WatcherRequest>(SELF, { [ROLE_ENV]: 'watcher' }, 'watcher');
    const starts = await Promise.allSettled(
      subjects.map((x) => (x === 'up' ? startUp(root) : startSplit(root, runtime))),
    );
    for (const st of starts) if (st.status === 'fulfilled') started.push(st.value);
    const failed = starts.find((st): st is PromiseRejectedResult => st.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    ctx.log(`processes ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const figures: Partial<Record<SubjectName, SubjectFigures>> = {};
    for (const s of started) {
      figures[s.name] = await measure(ctx, z, s, watcher);
      await s.stop();
    }
    return summarize(z, runtime, figures, loadAtStart);
  } finally {
    watcher?.stop();
    await Promise.all(started.map((s) => s.stop()));
    rmSync(root, { recursive: true, force: true });
  }
}

const SUBJECT_LABEL: Record<SubjectName, string> = {
  up: 'svcplane up',
  split: 'apiserver + controller-manager',
};

function summarize(
  z: Sizes,
  runtime: SvcplaneRuntime,
  figures: Partial<Record<SubjectName, SubjectFigures>>,
  loadAtStart: number[],
): BenchResult {
  const shape = z.shape;
  const round = (x: number | null | undefined): number | string =>
    x === null || x === undefined || Number.isNaN(x)
      ? ''
      : Math.abs(x) >= 100
        ? Math.round(x)
        : Math.round(x * 100) / 100;
  const r = relabelOf(shape);
  const nDeployments = shape.deploymentGrids * shape.units;
  const row = (
    metric: string,
    f: (x: SubjectFigures) => number | string | null,
  ): Record<string, string | number> => {
    const out: Record<string, string | number> = { metric };
    for (const name of ['up', 'split'] as const) {
      const x = figures[name];
      if (x === undefined) continue;
      const v = f(x);
      out[SUBJECT_LABEL[name]] = typeof v === 'string' ? v : round(v);
    }
    return out;
  };
  const pair = (a: number | null, b: number | null): string => `${round(a)} / ${round(b)}`;
  const table = [
    row(`grids created: ${shape.serviceGrids} SG + ${shape.deploymentGrids} DG (s)`, (x) => x.create.seconds),
    row('  grid POST p50 / p99 (ms)', (x) => pair(x.create.postP50Ms, x.create.postP99Ms)),
    row(
      `converged: ${shape.serviceGrids} Services + ${nDeployments} Deployments (s after 1st grid POST)`,
      (x) => x.convergence.seconds,
    ),
    row('  all Services / all Deployments there (s)', (x) =>
      pair(x.convergence.servicesS, x.convergence.deploymentsS),
    ),
    row('  grid statuses current: SG / DG (s)', (x) =>
      pair(x.convergence.statusesS.servicegrids, x.convergence.statusesS.deploymentgrids),
    ),
    row(
      'controllers CPU to converge (s; up: all but the main thread)',
      (x) => x.convergence.cpu.controllersS,
    ),
    row(
      `  Services there when the last Deployment was (of ${shape.serviceGrids})`,
      (x) => x.convergence.servicesWhenDeploymentsDone,
    ),
    row('  reconciles: ServiceGrid / DeploymentGrid (mean ms each)', (x) => {
      const q = x.convergence.queues;
      const f = (n: string): string => `${q[n]?.reconciles ?? 0} (${round(q[n]?.meanMs)})`;
      return `${f('servicegrid')} / ${f('deploymentgrid')}`;
    }),
    row('  Warning Events about grids (healed write errors)', (x) =>
      Object.values(x.convergence.warnings).reduce((a, w) => a + w.count, 0),
    ),
    row('API server CPU meanwhile (s; up: main thread)', (x) => x.convergence.cpu.apiserverS),
    row('machine busy meanwhile: under test / bench clients / others (cores)', (x) => {
      const c = x.convergence.cpu;
      const t = x.convergence.seconds;
      return `${round(c.totalS / t)} / ${round(c.benchS / t)} / ${round((c.machineS - c.totalS - c.benchS) / t)}`;
    }),
    row(
      'controllers busy after convergence (s, CPU-s)',
      (x) => `${round(x.settle.busyS)}${x.settle.quiet ? '' : '+'}, ${round(x.settle.cpu.controllersS)}`,
    ),
    row(`relabel ${r.from}→${r.to} settled (s after the PATCH response)`, (x) => x.relabel.seconds),
    row(`  ${r.to}'s Deployments all created / ${r.from}'s all deleted (s)`, (x) =>
      pair(x.relabel.newUnitCreatedS, x.relabel.oldUnitDeletedS),
    ),
    row('  DeploymentGrid statuses current (s)', (x) => x.relabel.deploymentGridStatusesS),
    row('controllers CPU for the relabel: to settle / until quiet (s)', (x) =>
      pair(
        x.relabel.cpuToSettle.controllersS,
        x.relabel.cpuToSettle.controllersS + x.settleAfterRelabel.cpu.controllersS,
      ),
    ),
    row(
      'API server CPU for the relabel, until quiet (s)',
      (x) => x.relabel.cpuToSettle.apiserverS + x.settleAfterRelabel.cpu.apiserverS,
    ),
    row('controller-manager RSS: peak / after settle (MiB)', (x) =>
      x.peak.controllersPeakMiB === null
        ? 'n/a (a thread)'
        : pair(x.peak.controllersPeakMiB, x.settleAfterRelabel.memory.controllersRssMiB),
    ),
    row('  before the grids (MiB)', (x) => x.before.memory.controllersRssMiB ?? 'n/a'),
    row('server process RSS: peak / after settle (MiB; up: API server + controllers)', (x) =>
      pair(x.peak.serverPeakMiB, x.settleAfterRelabel.memory.serverRssMiB),
    ),
    row('  before the grids (MiB)', (x) => x.before.memory.serverRssMiB),
  ];
  const loadEnd = loadavg();
  return {
    table,
    data: {
      sizes: z,
      setup: {
        svcplane: `${runtime.kind}: ${runtime.why}`,
        controllers: [...CONTROLLERS],
        subjects: Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, v.setup])),
        shape:
          `${shape.nodes} nodes labelled ${UNIT_KEY}=u000…${unitValue(shape.units - 1)} (${r.node} alone in ${r.from}, ` +
          `the rest round-robin over the other ${shape.units - 1}); ${shape.serviceGrids} ServiceGrids (one-port ` +
          `ServiceSpec) and ${shape.deploymentGrids} DeploymentGrids (one-replica DeploymentSpec), gridUniqKey ` +
          `${UNIT_KEY}, over ${shape.namespaces} namespaces, POSTed ${z.concurrency} at a time`,
        convergence:
          'from the first grid POST to the arrival at a watcher (labelSelector superedge.io/grid-selector) of the ' +
          'event that made the set of Services and Deployments exactly the expected one, each with the ' +
          "contract's labels, annotation, nodeSelector and controller ownerReference; then one LIST per kind " +
          'checks the same set (owner UIDs too)',
        relabel:
          `merge PATCH of ${r.node}'s ${UNIT_KEY} label ${r.from}→${r.to}; settled = the watcher's set is exactly ` +
          `the new one (${shape.deploymentGrids} Deployments of ${r.from} gone, ${shape.deploymentGrids} of ${r.to} ` +
          'there), timed from the PATCH response',
        quiet: `the controllers use under 0.05 cores for ${z.quietSeconds} s (up: the whole process)`,
        cpu:
          'utime + stime from /proc: the controller-manager process and the apiserver process; in up, the main ' +
          "thread (/proc/<pid>/task/<pid>) is the API server's and every other thread (the controllers' " +
          "worker, V8's and libuv's helpers) is counted as the controllers'",
        rss: 'VmHWM (peak) and VmRSS of /proc/<pid>/status; in up one process holds both API server and controllers',
        loadAverage: { start: loadAtStart, end: loadEnd },
      },
      subjects: figures,
    },
  };
}
