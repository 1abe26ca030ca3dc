// What every measured step of the wrapper benchmark is given: the run, the shape, and both servers.
import type https from 'node:https';
import type { CgroupCharge } from '../lib/cgroup.js';
import type { Conn } from '../lib/http.js';
import type { BenchContext } from '../run.js';
import type { Shape, Sizes } from './shape.js';

export interface Session {
  readonly ctx: BenchContext;
  readonly z: Sizes;
  readonly shape: Shape;
  /** The wrapper: an agent, its connection (its kubeconfig's URL, CA and token), its pid. */
  readonly wAgent: https.Agent;
  readonly wc: Conn;
  readonly wpid: number;
  /** `svcplane up`, upstream. */
  readonly upAgent: https.Agent;
  readonly up: Conn;
}

/** What the wrapper's memory cgroup charges, read at named points of the run. */
export interface Charges {
  readonly charges: Record<string, CgroupCharge | undefined>;
  readonly charge: () => CgroupCharge | undefined;
}
