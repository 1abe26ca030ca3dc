// The allocation benchmark's sizes and its cases: four ranges (/24, /16, /12, /12 prefilled) per backend.

export const NAMESPACE = 'bench-alloc';
export const PREFILL_NAMESPACE = 'bench-prefill';
export const NODE_PORTS = { base: 30000, size: 2768 }; // 30000-32767, the default

export interface Sizes {
  reps: number;
  /** Timed rounds per case per repetition. */
  rounds: number;
  /** Services created (timed) then deleted (untimed) per round; at most 253 (a /24 less `kubernetes`). */
  roundSize: number;
  clients: number;
  /** Untimed rounds per case before the first repetition, to warm each server's JIT. */
  warmupRounds: number;
  /** ClusterIP Services stored in the prefilled /12 before it is measured. */
  prefill: number;
  prefillClients: number;
}

export const FULL: Sizes = {
  reps: 5,
  rounds: 10,
  roundSize: 200,
  clients: 32,
  warmupRounds: 2,
  prefill: 10_000,
  prefillClients: 64,
};
/** Every case, figure and check of FULL on a few dozen Services (the figures mean nothing), in seconds. */
export const QUICK: Sizes = {
  reps: 1,
  rounds: 1,
  roundSize: 20,
  clients: 4,
  warmupRounds: 0,
  prefill: 50,
  prefillClients: 8,
};

export type CaseId = 'ip24' | 'ip16' | 'ip12' | 'ip12Prefilled';
export type Backend = 'sqlite' | 'etcd';

export interface Case {
  readonly id: CaseId;
  readonly label: string;
  readonly cidr: string;
  readonly prefill: boolean;
}

export const CASES: readonly Case[] = [
  { id: 'ip24', label: '/24', cidr: '10.0.0.0/24', prefill: false },
  { id: 'ip16', label: '/16', cidr: '10.0.0.0/16', prefill: false },
  { id: 'ip12', label: '/12', cidr: '10.96.0.0/12', prefill: false },
  { id: 'ip12Prefilled', label: '/12 prefilled', cidr: '10.96.0.0/12', prefill: true },
];
