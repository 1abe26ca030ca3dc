// A pod's readiness as a kubelet reports it, for the benchmarks that flip pods.

/** The Ready (and ContainersReady) conditions as a kubelet patches them: a strategic-merge PATCH body of pods/NAME/status. */
export function statusPatch(ready: boolean): string {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const status = ready ? 'True' : 'False';
  return JSON.stringify({
    status: {
      conditions: [
        { type: 'ContainersReady', status, lastTransitionTime: now, lastProbeTime: null },
        { type: 'Ready', status, lastTransitionTime: now, lastProbeTime: null },
      ],
    },
  });
}
