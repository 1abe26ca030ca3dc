// The watcher process (this file, forked with SVCPLANE_GRIDS_BENCH_ROLE=watcher): tracks the produced
// Services and Deployments and the grids' statuses, and stamps when the expected set is complete.
import { fileURLToPath } from 'node:url';
import { epochMs, type Conn } from '../lib/http.js';
import { serveWorker } from '../lib/process.js';
import { Watch, type WatchEventLine } from '../lib/watch.js';
import { GRID_SELECTOR_LABEL } from '../../src/core/grids/objects.js';
import {
  GRID_API,
  type Shape,
  type Produced,
  expectedServices,
  expectedDeployments,
  parseProduced,
} from './shape.js';
import {
  type Kind,
  KINDS,
  PRODUCED_PATH,
  checkProduced,
  type GridKind,
  GRID_KINDS,
  gridStatusProblem,
} from './checks.js';

export const WORKER_MODULE = fileURLToPath(import.meta.url);
export const ROLE_ENV = 'SVCPLANE_GRIDS_BENCH_ROLE';

export interface PhaseStatus {
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

export type WatcherRequest =
  | { op: 'start'; conn: Conn; shape: Shape }
  | { op: 'expect'; units: string[]; appear?: string; vanish?: string }
  | { op: 'status' }
  | { op: 'stop' };

export interface WatcherStatus {
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
