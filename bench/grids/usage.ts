// The CPU and memory readings the grids benchmark takes per phase.
export interface CpuReading {
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

export interface MemoryReading {
  /** The controller-manager's VmRSS and VmHWM (null in up: a thread's memory is its process's). */
  controllersRssMiB: number | null;
  controllersPeakMiB: number | null;
  /** The server process: the API server alone, or up (API server + controllers). */
  serverRssMiB: number;
  serverPeakMiB: number;
}
