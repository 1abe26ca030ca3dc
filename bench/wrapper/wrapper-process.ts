// The wrapper's process: its environment, and the Service as its index sees it.
import type { KObject } from '../../src/api/object.js';

/** The Service as the wrapper's index sees it (sync.ts leaves the traffic policies to kube-proxy). */
export function withoutPolicies(svc: KObject): KObject {
  const spec = (svc as { spec?: Record<string, unknown> }).spec;
  if (spec === undefined) return svc;
  const { internalTrafficPolicy: _i, externalTrafficPolicy: _e, ...rest } = spec;
  return { ...svc, spec: rest } as KObject;
}

/** SVCPLANE_BENCH_WRAPPER_ENV ("K=V K=V"): environment for the wrapper process alone. */
export function wrapperEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of (process.env.SVCPLANE_BENCH_WRAPPER_ENV ?? '').split(' ')) {
    const eq = kv.indexOf('=');
    if (eq > 0) out[kv.slice(0, eq)] = kv.slice(eq + 1);
    else if (kv !== '') throw new Error(`SVCPLANE_BENCH_WRAPPER_ENV: "${kv}" is not NAME=VALUE`);
  }
  return out;
}
