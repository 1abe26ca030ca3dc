// The watcher process: watches EndpointSlices, Endpoints and pods, and reports when every Service lists
// its pods ready and when each flipped pod's condition reached each of them.
import { agentFor, request, type Conn } from '../lib/http.js';
import { serveWorker } from '../lib/process.js';
import { Watch, type WatchEventLine } from '../lib/watch.js';
import { SERVICE_NAME_LABEL, NS_PREFIX, type Target, TARGETS, WATCH_PATHS } from './shape.js';

interface TargetStatus {
  events: number;
  /** Services whose objects list exactly podsPerService ready endpoints. */
  converged: number;
  /** Arrival time of the event that made the last Service converge. */
  convergedAt?: number;
  firstEventAt?: number;
  connects: number;
  relists: number;
  errors: number;
  lastError?: string;
}

export interface Flip {
  pod: string;
  ready: boolean;
  sentAt: number;
  acceptedAt: number;
  status: number;
  error?: string;
}

export type WatcherRequest =
  | { op: 'start'; conn: Conn; services: number; podsPerService: number }
  | { op: 'status' }
  | { op: 'record' }
  | { op: 'match'; flips: Flip[] }
  | { op: 'stop' };

export type WatcherStatus = Record<Target, TargetStatus>;
/** Per flip, per target: when the watcher saw the flipped condition (undefined: not yet). */
export type MatchReply = Record<Target | 'pods', Array<number | undefined>>;

/** Ready endpoints per Service and each pod's last seen condition, from one kind of object. */
class ReadyTracker {
  readonly status: TargetStatus = { events: 0, converged: 0, connects: 0, relists: 0, errors: 0 };
  /** object key → its Service and its endpoints (pod key → ready). */
  private readonly objects = new Map<string, { svc: string; endpoints: Map<string, boolean> }>();
  private readonly readyPerService = new Map<string, number>();
  private readonly podReady = new Map<string, boolean>();
  /** pod key → [time, ready] of every change seen while recording. */
  readonly transitions = new Map<string, Array<[number, boolean]>>();
  recording = false;

  constructor(
    private readonly target: Target,
    private readonly services: number,
    private readonly expected: number,
  ) {}

  private endpointsOf(obj: Record<string, unknown>, ns: string): Map<string, boolean> {
    const out = new Map<string, boolean>();
    type Ref = { targetRef?: { name?: string; namespace?: string } };
    const add = (ref: Ref['targetRef'], ready: boolean): void => {
      if (ref?.name !== undefined) out.set(`${ref.namespace ?? ns}/${ref.name}`, ready);
    };
    if (this.target === 'slices') {
      for (const ep of (obj['endpoints'] as Array<Ref & { conditions?: { ready?: boolean } }> | null) ?? [])
        add(ep.targetRef, ep.conditions?.ready === true);
    } else {
      for (const ss of (obj['subsets'] as Array<{ addresses?: Ref[]; notReadyAddresses?: Ref[] }> | null) ??
        []) {
        for (const a of ss.addresses ?? []) add(a.targetRef, true);
        for (const a of ss.notReadyAddresses ?? []) add(a.targetRef, false);
      }
    }
    return out;
  }

  private addReady(svc: string, delta: number): void {
    if (delta === 0) return;
    const before = this.readyPerService.get(svc) ?? 0;
    const after = before + delta;
    this.readyPerService.set(svc, after);
    if (before === this.expected) this.status.converged--;
    if (after === this.expected) this.status.converged++;
  }

  onEvent(ev: WatchEventLine, t: number): void {
    const meta = ev.object.metadata ?? {};
    const ns = meta.namespace ?? '';
    if (!ns.startsWith(NS_PREFIX)) return;
    this.status.events++;
    this.status.firstEventAt ??= t;
    const key = `${ns}/${meta.name ?? ''}`;
    const labels = (meta as { labels?: Record<string, string> }).labels ?? {};
    const svc = this.target === 'slices' ? `${ns}/${labels[SERVICE_NAME_LABEL] ?? ''}` : key;
    const old = this.objects.get(key);
    const endpoints = ev.type === 'DELETED' ? new Map<string, boolean>() : this.endpointsOf(ev.object, ns);
    const count = (m: Map<string, boolean> | undefined): number => {
      let n = 0;
      for (const r of m?.values() ?? []) if (r) n++;
      return n;
    };
    if (old !== undefined) this.addReady(old.svc, -count(old.endpoints));
    this.addReady(svc, count(endpoints));
    if (ev.type === 'DELETED') this.objects.delete(key);
    else this.objects.set(key, { svc, endpoints });
    for (const [pod, ready] of endpoints) {
      if (this.podReady.get(pod) === ready) continue;
      this.podReady.set(pod, ready);
      if (this.recording) {
        let list = this.transitions.get(pod);
        if (list === undefined) this.transitions.set(pod, (list = []));
        list.push([t, ready]);
      }
    }
    if (this.status.converged === this.services && this.status.convergedAt === undefined)
      this.status.convergedAt = t;
  }

  /** When the watcher first saw `flip`'s condition at or after the flip was sent. */
  seen(flip: Flip): number | undefined {
    for (const [t, ready] of this.transitions.get(flip.pod) ?? [])
      if (ready === flip.ready && t >= flip.sentAt) return t;
    return undefined;
  }
}

/** Each bench pod's Ready condition as a watch on pods shows its changes (from the flips on). */
class PodTracker {
  readonly transitions = new Map<string, Array<[number, boolean]>>();
  errors = 0;

  onEvent(ev: WatchEventLine, t: number): void {
    const meta = ev.object.metadata ?? {};
    if (ev.type === 'DELETED' || !(meta.namespace ?? '').startsWith(NS_PREFIX)) return;
    const conditions =
      (ev.object['status'] as { conditions?: Array<{ type?: string; status?: string }> } | undefined)
        ?.conditions ?? [];
    const ready = conditions.some((c) => c.type === 'Ready' && c.status === 'True');
    const pod = `${meta.namespace}/${meta.name}`;
    let list = this.transitions.get(pod);
    if (list === undefined) this.transitions.set(pod, (list = []));
    if (list[list.length - 1]?.[1] !== ready) list.push([t, ready]);
  }

  seen(flip: Flip): number | undefined {
    for (const [t, ready] of this.transitions.get(flip.pod) ?? [])
      if (ready === flip.ready && t >= flip.sentAt) return t;
    return undefined;
  }
}

export function watcherMain(): void {
  let trackers: Record<Target, ReadyTracker> | undefined;
  let watches: Watch[] = [];
  let conn: Conn | undefined;
  const pods = new PodTracker();
  serveWorker<WatcherRequest>(async (msg) => {
    switch (msg.op) {
      case 'start': {
        const t = {
          slices: new ReadyTracker('slices', msg.services, msg.podsPerService),
          endpoints: new ReadyTracker('endpoints', msg.services, msg.podsPerService),
        };
        trackers = t;
        conn = msg.conn;
        watches = TARGETS.map(
          (target) =>
            new Watch(
              msg.conn,
              WATCH_PATHS[target],
              (ev, at) => t[target].onEvent(ev, at),
              {},
              (err) => {
                t[target].status.errors++;
                t[target].status.lastError = err.message.slice(0, 300);
              },
            ),
        );
        await Promise.all(watches.map((w) => w.connected()));
        return null;
      }
      case 'status': {
        if (trackers === undefined) throw new Error('not started');
        const out = {} as WatcherStatus;
        TARGETS.forEach((target, i) => {
          const s = trackers![target].status;
          s.connects = watches[i]!.stats.connects;
          s.relists = watches[i]!.stats.relists;
          out[target] = { ...s };
        });
        return out;
      }
      case 'record': {
        for (const target of TARGETS) trackers![target].recording = true;
        // Pod changes from now on (no initial state): when a flip became visible to watchers.
        const c = conn!;
        const agent = agentFor(c, 1);
        const res = await request(agent, c, 'GET', '/api/v1/pods?limit=1', { keepText: true });
        agent.destroy();
        const rv = (JSON.parse(res.text ?? '{}') as { metadata?: { resourceVersion?: string } }).metadata
          ?.resourceVersion;
        if (res.status !== 200 || rv === undefined) throw new Error(`GET pods: ${res.status}`);
        const w = new Watch(
          c,
          '/api/v1/pods',
          (ev, at) => pods.onEvent(ev, at),
          {},
          () => pods.errors++,
          rv,
        );
        watches.push(w);
        await w.connected();
        return null;
      }
      case 'match': {
        const out = {} as MatchReply;
        for (const target of TARGETS) out[target] = msg.flips.map((f) => trackers![target].seen(f));
        out.pods = msg.flips.map((f) => pods.seen(f));
        return out;
      }
      case 'stop':
        for (const w of watches) w.stop();
        watches = [];
        return null;
    }
  });
}
