// The containers of the pods `svcplane node --serve-pods` runs: each container is the echo listeners on
// its ports (echo-server.ts). Starting a pod's containers opens them; a port someone else holds is a
// container that failed to start, and goes through the kubelet's CrashLoopBackOff (core/nodes/
// crash-loop.ts): the first failure is restarted at once, later ones after their back-off. The kubelet
// asks here before it reports a pod running, and feeds each pod's restarts to planPod.
import type { KObject } from '../api/object.js';
import {
  backingOff,
  restartsOf,
  startFailed,
  startWorked,
  tcpContainerPorts,
  type CrashLoop,
} from '../core/nodes/crash-loop.js';
import type { ContainerRestarts } from '../core/pods/pod-status.js';
import { PodServers, isPortTaken } from './echo-server.js';
import type { Logger } from '../runtime/logger.js';

export const isHostNetwork = (pod: KObject): boolean =>
  (pod as { spec?: { hostNetwork?: unknown } }).spec?.hostNetwork === true;

/** Every TCP containerPort of the pod's containers, once each. */
export const containerPorts = (pod: KObject): number[] => [
  ...new Set(tcpContainerPorts(pod as { spec?: unknown }).map((p) => p.port)),
];

export class PodContainers {
  private readonly servers = new PodServers();
  /** Pod key → its containers' restarts, once a start has failed. */
  private readonly loops = new Map<string, CrashLoop>();

  constructor(private readonly log: Pick<Logger, 'info' | 'warn'>) {}

  /** The pod's restarts for planPod (undefined: none), as of the pod with this UID. */
  restarts(key: string, uid: string): Record<string, ContainerRestarts> | undefined {
    const loop = this.loops.get(key);
    return loop === undefined || loop.uid !== uid ? undefined : restartsOf(loop);
  }

  /** How long the pod's containers still wait before their next start (undefined: they do not wait). */
  backoffMs(key: string, uid: string, nowMs: number): number | undefined {
    const loop = this.loops.get(key);
    return loop !== undefined && loop.uid === uid && backingOff(loop, nowMs)
      ? loop.nextStartMs - nowMs
      : undefined;
  }

  /**
   * Starts the pod's containers (opens what is not open) unless they wait out a back-off. Resolves to
   * true when their restarts changed, so the caller plans again.
   */
  async start(
    key: string,
    pod: KObject,
    node: string,
    ips: readonly string[],
    nowMs: number,
    now: string,
  ): Promise<boolean> {
    const uid = pod.metadata.uid ?? '';
    let loop = this.loops.get(key);
    if (loop !== undefined && loop.uid !== uid) loop = undefined;
    if (isHostNetwork(pod) || backingOff(loop, nowMs)) return false;
    let next = loop;
    for (;;) {
      const failures = await this.servers.ensure(key, {
        namespace: pod.metadata.namespace ?? '',
        name: pod.metadata.name ?? '',
        node,
        ips,
        ports: containerPorts(pod),
      });
      const taken = failures.filter(isPortTaken);
      // An address this host does not have cannot be served at all: the pod runs unserved.
      if (failures.length > taken.length)
        this.log.warn('cannot serve the pod on its IP', { pod: key, error: failures[0]!.message });
      if (taken.length === 0) {
        next = next && startWorked(next);
        break;
      }
      next = startFailed(next, pod, taken, nowMs, now);
      this.log.warn('container failed to start: its port is taken', {
        pod: key,
        containers: Object.keys(next.crashed),
        error: taken[0]!.message,
        restartCount: next.starts - 1,
        backoffSeconds: (next.nextStartMs - nowMs) / 1000,
      });
      // The first failure is restarted at once, as the kubelet does; later ones wait their back-off.
      if (backingOff(next, nowMs)) break;
    }
    if (next === loop || next === undefined) return false;
    if (Object.keys(next.crashed).length === 0)
      this.log.info('container started again', { pod: key, restartCount: next.starts - 1 });
    this.loops.set(key, next);
    return true;
  }

  /** Stops the pod's containers (its listeners close); `forget` also drops its restarts. */
  async stop(key: string, forget = false): Promise<void> {
    if (forget) this.loops.delete(key);
    await this.servers.close(key);
  }

  async stopAll(): Promise<void> {
    await this.servers.closeAll();
  }
}
