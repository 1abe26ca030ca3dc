// The proxy benchmark's sizes and knobs (SVCPLANE_BENCH_PROXY_NFT_FULL_REPS, _NFTABLES_FULL_REPS,
// _RESTORE_TIMEOUT_S, _P4_MODE, _P4_IPTABLES).
import type { ProxyEndpoint } from '../../src/core/proxy/types.js';
import type { SyncLog } from '../../src/proxy/sync.js';
import { type ClusterShape } from '../lib/preload.js';

export const SLICES_PATH = '/apis/discovery.k8s.io/v1/endpointslices';
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const SEED = 0x9b0c_0016;

function p4IptablesFlag(): 'system' | 'legacy' | undefined {
  const v = process.env.SVCPLANE_BENCH_PROXY_P4_IPTABLES;
  if (v === undefined || v === '') return undefined;
  if (v !== 'system' && v !== 'legacy')
    throw new Error(`SVCPLANE_BENCH_PROXY_P4_IPTABLES=${v}: system or legacy`);
  return v;
}

function p4ModeFlag(): 'nftables' | 'iptables' {
  const v = process.env.SVCPLANE_BENCH_PROXY_P4_MODE;
  if (v === undefined || v === '') return 'nftables';
  if (v !== 'nftables' && v !== 'iptables')
    throw new Error(`SVCPLANE_BENCH_PROXY_P4_MODE=${v}: nftables or iptables`);
  return v;
}

export interface Sizes {
  // P8a
  readonly reps: number;
  readonly keepAliveConns: number;
  readonly newConnConns: number;
  readonly warmupMs: number;
  readonly keepAliveMs: number;
  readonly newConnMs: number;
  // P8b
  readonly services: number;
  readonly endpointsPerService: number;
  readonly nftFullReps: number;
  readonly legacyFullReps: number;
  /** The nftables mode's full syncs onto an empty table, and as many resyncs onto the full one. */
  readonly nftablesFullReps: number;
  readonly partialReps: number;
  readonly renderReps: number;
  /** A P8b restore still running after this is killed and counted as failed. */
  readonly restoreTimeoutS: number;
  // P4
  readonly shape: ClusterShape;
  readonly flips: number;
  /** The proxy's mode in P4 (SVCPLANE_BENCH_PROXY_P4_MODE; default nftables). */
  readonly p4Mode: 'nftables' | 'iptables';
  /**
   * The proxy's iptables in P4: the machine's (`system`: iptables-nft on Debian 12) or `legacy`
   * (iptables-legacy, first on the proxy's PATH). SVCPLANE_BENCH_PROXY_P4_IPTABLES overrides.
   */
  readonly p4Iptables: 'system' | 'legacy';
  readonly convergeTimeoutS: number;
  readonly proxySyncTimeoutS: number;
  /** A flip whose partial sync does not arrive within this counts as lost. */
  readonly syncTimeoutS: number;
}

export const FULL: Sizes = {
  reps: 5,
  keepAliveConns: 64,
  newConnConns: 32,
  warmupMs: 500,
  keepAliveMs: 3000,
  newConnMs: 2000,
  services: 10_000,
  endpointsPerService: 10,
  nftFullReps: Math.max(1, Number(process.env.SVCPLANE_BENCH_PROXY_NFT_FULL_REPS ?? 2)),
  legacyFullReps: 5,
  nftablesFullReps: Math.max(1, Number(process.env.SVCPLANE_BENCH_PROXY_NFTABLES_FULL_REPS ?? 2)),
  partialReps: 20,
  renderReps: 5,
  restoreTimeoutS: Number(process.env.SVCPLANE_BENCH_PROXY_RESTORE_TIMEOUT_S ?? 60),
  shape: {
    nodes: 1000,
    zones: 10,
    namespaces: 10,
    services: 10_000,
    podsPerService: 10,
    serviceCidr: '10.96.0.0/12',
  },
  flips: 40,
  p4Mode: p4ModeFlag(),
  // One full restore of this ruleset with the machine's iptables-nft does not finish in 40 minutes here.
  p4Iptables: p4IptablesFlag() ?? 'legacy',
  convergeTimeoutS: 900,
  proxySyncTimeoutS: 3600,
  syncTimeoutS: 120,
};

export const QUICK: Sizes = {
  reps: 2,
  keepAliveConns: 16,
  newConnConns: 8,
  warmupMs: 150,
  keepAliveMs: 400,
  newConnMs: 300,
  services: 200,
  endpointsPerService: 10,
  nftFullReps: 2,
  legacyFullReps: 2,
  nftablesFullReps: 2,
  partialReps: 5,
  renderReps: 2,
  restoreTimeoutS: Number(process.env.SVCPLANE_BENCH_PROXY_RESTORE_TIMEOUT_S ?? 120),
  shape: {
    nodes: 20,
    zones: 2,
    namespaces: 2,
    services: 100,
    podsPerService: 5,
    serviceCidr: '10.96.0.0/12',
  },
  flips: 6,
  p4Mode: p4ModeFlag(),
  p4Iptables: p4IptablesFlag() ?? 'system',
  convergeTimeoutS: 60,
  proxySyncTimeoutS: 120,
  syncTimeoutS: 30,
};

export const quietLog: SyncLog = { info: () => {}, warn: () => {}, error: () => {} };

export const compareEndpoints = (a: ProxyEndpoint, b: ProxyEndpoint): number =>
  a.ip < b.ip ? -1 : a.ip > b.ip ? 1 : a.port - b.port;
