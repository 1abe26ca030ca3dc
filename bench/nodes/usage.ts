// CPU and memory of the processes under test: in `up`, the main thread is the API server's and every other
// thread the controllers'.
import { type Proc } from '../lib/cluster.js';
import { cpuSeconds, memory, threadCpuSeconds, type Server } from '../lib/process.js';
import { machineBusySeconds } from '../lib/machine.js';

export interface Cpu {
  nodeS: number;
  controllersS: number;
  apiserverS: number;
  watcherS: number;
  machineS: number;
}

export interface Procs {
  up: Server;
  node?: Proc;
  watcherPid?: number;
}

export function cpu(p: Procs): Cpu {
  const apiserverS = threadCpuSeconds(p.up.pid, p.up.pid);
  const total = cpuSeconds(p.up.pid);
  return {
    nodeS: p.node === undefined ? 0 : cpuSeconds(p.node.pid),
    controllersS: total - apiserverS,
    apiserverS,
    watcherS: p.watcherPid === undefined ? 0 : cpuSeconds(p.watcherPid),
    machineS: machineBusySeconds(),
  };
}

export const cpuDelta = (a: Cpu, b: Cpu): Cpu => ({
  nodeS: b.nodeS - a.nodeS,
  controllersS: b.controllersS - a.controllersS,
  apiserverS: b.apiserverS - a.apiserverS,
  watcherS: b.watcherS - a.watcherS,
  machineS: b.machineS - a.machineS,
});

export const perSecond = (c: Cpu, s: number): Cpu => ({
  nodeS: c.nodeS / s,
  controllersS: c.controllersS / s,
  apiserverS: c.apiserverS / s,
  watcherS: c.watcherS / s,
  machineS: c.machineS / s,
});

export interface Mem {
  nodeRssMiB: number;
  nodePeakMiB: number;
  upRssMiB: number;
  upPeakMiB: number;
}

export function mem(p: Procs): Mem {
  const n = p.node === undefined ? { rssMiB: 0, hwmMiB: 0 } : memory(p.node.pid);
  const u = memory(p.up.pid);
  return { nodeRssMiB: n.rssMiB, nodePeakMiB: n.hwmMiB, upRssMiB: u.rssMiB, upPeakMiB: u.hwmMiB };
}
