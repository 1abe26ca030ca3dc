// The endpoints benchmark's sizes, the controllers it runs and the two objects it watches.
import { type ClusterShape } from '../lib/preload.js';
// seeded, so every run flips the same pods

/** The controllers the benchmark runs; those the controller-manager does not know yet are left out. */
export const CONTROLLERS = ['endpoints', 'endpointslice'] as const;
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const NS_PREFIX = 'bench-ep-';

export interface Sizes {
  readonly shape: ClusterShape;
  /** Readiness flips per second, and for how long. */
  readonly flipRate: number;
  readonly flipSeconds: number;
  /** A pod flipped to not-ready is flipped back no sooner than this. */
  readonly restoreAfterMs: number;
  /** A flip not seen by the watcher this long after its PATCH was accepted counts as lost. */
  readonly seenTimeoutMs: number;
  readonly convergeTimeoutS: number;
  /**
   * After convergence the flips wait until the controller-manager is quiet (under 0.05 cores for
   * `quietSeconds` in a row), at most `settleMaxSeconds`: work it still does then is its own backlog.
   */
  readonly quietSeconds: number;
  readonly settleMaxSeconds: number;
  /** How long the settled controller-manager's idle CPU is sampled. */
  readonly idleSeconds: number;
}

/**
 * Namespaces the Services are spread over: by default 50 at full size (200 Services and 2,000 pods
 * each, inside upstream's per-namespace scalability thresholds of 5,000 Services and 3,000 pods), 5 in
 * quick mode. SVCPLANE_BENCH_ENDPOINTS_NAMESPACES=N overrides both (N=1: every Service and pod in one
 * namespace, the controllers' worst case, since a pod change is matched against every Service of its
 * namespace and a Service's sync against every pod of it).
 */
const namespaces = (byDefault: number): number => {
  const n = Math.trunc(Number(process.env.SVCPLANE_BENCH_ENDPOINTS_NAMESPACES ?? byDefault));
  return Number.isFinite(n) && n >= 1 ? n : byDefault;
};

export const FULL: Sizes = {
  shape: {
    nodes: 1000,
    zones: 10,
    namespaces: namespaces(50),
    services: 10_000,
    podsPerService: 10,
    serviceCidr: '10.96.0.0/12',
  },
  flipRate: 20,
  flipSeconds: 60,
  restoreAfterMs: 3000,
  seenTimeoutMs: 10_000,
  convergeTimeoutS: 1800,
  quietSeconds: 3,
  settleMaxSeconds: 180,
  idleSeconds: 2,
};
export const QUICK: Sizes = {
  shape: {
    nodes: 20,
    zones: 10,
    namespaces: namespaces(5),
    services: 100,
    podsPerService: 10,
    serviceCidr: '10.96.0.0/12',
  },
  flipRate: 20,
  flipSeconds: 2,
  restoreAfterMs: 500,
  seenTimeoutMs: 5000,
  convergeTimeoutS: 60,
  quietSeconds: 1,
  settleMaxSeconds: 15,
  idleSeconds: 0.5,
};

export type Target = 'slices' | 'endpoints';
export const TARGETS: readonly Target[] = ['slices', 'endpoints'];
export const WATCH_PATHS: Record<Target, string> = {
  slices: '/apis/discovery.k8s.io/v1/endpointslices',
  endpoints: '/api/v1/endpoints',
};
