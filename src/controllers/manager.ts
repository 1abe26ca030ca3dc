// The controller manager: the controllers svcplane runs against an API server, over one client and
// one set of shared informers. `svcplane up` runs it in-process against itself; `svcplane
// controller-manager --kubeconfig` runs it against any API server, optionally behind leader election.
import { Registry } from 'prom-client';
import type { ResourceInfo } from '../api/resources.js';
import type { Client } from '../runtime/client.js';
import { sleep } from '../runtime/sleep.js';
import { controllerTransform, SharedInformerFactory } from '../runtime/informer.js';
import { WorkqueueMetrics } from '../runtime/workqueue.js';
import { podViewOf } from './pod-view.js';
import { ClientEventRecorder } from '../runtime/events.js';
import { EndpointsController } from './endpoints/endpoints-controller.js';
import { EndpointSliceController } from './endpointslice/endpointslice-controller.js';
import { GarbageCollector } from './garbagecollector/garbage-collector.js';
import { NodeLifecycleController } from './nodelifecycle/node-lifecycle-controller.js';
import { PodGCController } from './podgc/pod-gc-controller.js';
import { ServiceTopologyController } from './servicetopology/servicetopology-controller.js';
import { ReplicaSetController } from './replicaset/replicaset-controller.js';
import { DeploymentController } from './deployment/deployment-controller.js';
import { Scheduler } from './scheduler/scheduler.js';
import { ServiceAccountsController } from './serviceaccounts/serviceaccounts-controller.js';
import { DeploymentGridController, DEPLOYMENTGRIDS } from './grids/deploymentgrid-controller.js';
import { ServiceGridController, SERVICEGRIDS } from './grids/servicegrid-controller.js';
import { ClusterRoleAggregationController } from './clusterroleaggregation/clusterrole-aggregation-controller.js';
import type { Logger } from '../runtime/logger.js';
import type { CertificateRequestParser } from '../api/certificate-request.js';
import { CsrApprovingController } from './csrapproving/csr-approving-controller.js';
import { CsrSigningController, type CsrSigner } from './csrsigning/csr-signing-controller.js';

const CRDS_MISSING = (controller: string, resource: string): string =>
  `${controller} controller not started: the API server does not serve superedge.io/v1 ${resource}; ` +
  `install the CRDs with 'svcplane crds | kubectl apply -f -' and restart`;

export const KNOWN_CONTROLLERS = [
  'endpoints',
  'endpointslice',
  'servicetopology',
  'garbagecollector',
  'servicegrid',
  'deploymentgrid',
  'nodelifecycle',
  'podgc',
  'replicaset',
  'deployment',
  'scheduler',
  'clusterrole-aggregation',
  'serviceaccount',
  'csrapproving',
  'csrsigning',
] as const;
export type ControllerName = (typeof KNOWN_CONTROLLERS)[number];

export interface ControllerManagerOptions {
  readonly controllers: readonly ControllerName[];
  readonly concurrentEndpointSyncs?: number;
  /** EndpointSlice workers (kube's --concurrent-service-endpoint-syncs, default 5). */
  readonly concurrentServiceEndpointSyncs?: number;
  /** 1..1000, default 100. */
  readonly maxEndpointsPerSlice?: number;
  /** ServiceGrid and DeploymentGrid workers, each (default 5). */
  readonly concurrentGridSyncs?: number;
  /** Garbage collector workers (kube's --concurrent-gc-syncs, default 20). */
  readonly concurrentGCSyncs?: number;
  /** ReplicaSet workers (kube's --concurrent-replicaset-syncs, default 5). */
  readonly concurrentReplicaSetSyncs?: number;
  /** Deployment workers (kube's --concurrent-deployment-syncs, default 5). */
  readonly concurrentDeploymentSyncs?: number;
  /** Node lifecycle (kube-controller-manager's flags); every field optional, upstream's defaults. */
  readonly nodeLifecycle?: NodeLifecycleSettings;
  /** Pod GC: --terminated-pod-gc-threshold, and a period and orphan quarantine shorter for tests. */
  readonly podGC?: PodGCSettings;
  /** Scheduler workers, and so bindings in flight (kube-scheduler's parallelism, default 16). */
  readonly schedulerParallelism?: number;
  /**
   * The CSR controllers' X.509 tooling, injected by the command (the API server's pki): without it they
   * do not start; without `sign` (no --cluster-signing-cert-file/--cluster-signing-key-file) the signer does not.
   */
  readonly certificates?: CertificateControllerSettings;
  readonly log: Pick<Logger, 'info' | 'warn'>;
  /** Where the workqueue metrics go (`svcplane up` passes the apiserver's /metrics registry). */
  readonly metrics?: Registry;
  /**
   * Each controller's own client for its writes and events (kube-controller-manager's
   * --use-service-account-credentials); the shared informers read with the manager's client. Absent:
   * every controller uses the manager's client.
   */
  readonly clientFor?: (controller: ControllerName) => Client;
}

export interface NodeLifecycleSettings {
  readonly monitorPeriodMs?: number;
  readonly gracePeriodMs?: number;
  readonly startupGracePeriodMs?: number;
  readonly enablePodEviction?: boolean;
}

export interface CertificateControllerSettings {
  readonly parse: CertificateRequestParser;
  readonly sign?: CsrSigner;
  /** --cluster-signing-duration in seconds (default one year). */
  readonly signingDurationSeconds?: number;
}

export interface PodGCSettings {
  readonly terminatedPodThreshold?: number;
  readonly periodMs?: number;
  readonly quarantineMs?: number;
}

interface Runnable {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export class ControllerManager {
  readonly metrics: Registry;
  private readonly factory: SharedInformerFactory;
  private readonly running: Runnable[] = [];
  private readonly queueMetrics: WorkqueueMetrics;
  private readonly stopping = new AbortController();

  constructor(
    private readonly client: Client,
    private readonly o: ControllerManagerOptions,
  ) {
    this.metrics = o.metrics ?? new Registry();
    const podView = podViewOf(o.controllers);
    this.factory = new SharedInformerFactory(client, {
      transform: (r) => controllerTransform(r, podView),
      reflector: {
        onError: (err) => o.log.warn('list/watch failed; retrying', { err: String(err) }),
      },
    });
    const queueMetrics = new WorkqueueMetrics(this.metrics);
    this.queueMetrics = queueMetrics;
    for (const name of o.controllers) {
      if (name === 'endpoints') {
        this.running.push(
          new EndpointsController(this.clientOf(name), this.factory, {
            workers: o.concurrentEndpointSyncs ?? 5,
            metrics: queueMetrics,
            onError: (key, err) => o.log.warn('endpoints sync failed', { key, err: String(err) }),
          }),
        );
      }
      if (name === 'endpointslice') {
        this.running.push(
          new EndpointSliceController(this.clientOf(name), this.factory, {
            workers: o.concurrentServiceEndpointSyncs ?? 5,
            ...(o.maxEndpointsPerSlice === undefined ? {} : { maxEndpointsPerSlice: o.maxEndpointsPerSlice }),
            metrics: queueMetrics,
            events: new ClientEventRecorder(this.clientOf(name), {
              component: 'endpoint-slice-controller',
              onError: (err) => o.log.warn('could not record an event', { err: String(err) }),
            }),
            onError: (key, err) => o.log.warn('endpointslice sync failed', { key, err: String(err) }),
          }),
        );
      }
      if (name === 'servicetopology') {
        this.running.push(
          new ServiceTopologyController(this.factory, {
            metrics: queueMetrics,
            events: new ClientEventRecorder(this.clientOf(name), {
              component: 'service-topology-controller',
              onError: (err) => o.log.warn('could not record an event', { err: String(err) }),
            }),
            onError: (key, err) => o.log.warn('service topology sync failed', { key, err: String(err) }),
          }),
        );
      }
      if (name === 'nodelifecycle') {
        this.running.push(
          new NodeLifecycleController(this.clientOf(name), this.factory, {
            ...o.nodeLifecycle,
            metrics: queueMetrics,
            events: new ClientEventRecorder(this.clientOf(name), {
              component: 'node-controller',
              onError: (err) => o.log.warn('could not record an event', { err: String(err) }),
            }),
            onError: (key, err) => o.log.warn('node lifecycle sync failed', { key, err: String(err) }),
            log: (msg, fields) => o.log.info(msg, fields),
          }),
        );
      }
      if (name === 'podgc') {
        this.running.push(
          new PodGCController(this.clientOf(name), this.factory, {
            ...o.podGC,
            onError: (key, err) => o.log.warn('pod garbage collection failed', { key, err: String(err) }),
            log: (msg, fields) => o.log.info(msg, fields),
          }),
        );
      }
      if (name === 'garbagecollector') {
        this.running.push(
          new GarbageCollector(this.clientOf(name), this.factory, {
            workers: o.concurrentGCSyncs ?? 20,
            metrics: queueMetrics,
            onError: (uid, err) => o.log.warn('garbage collection failed', { uid, err: String(err) }),
            log: (msg, fields) => o.log.info(msg, fields),
          }),
        );
      }
      if (name === 'replicaset') {
        this.running.push(
          new ReplicaSetController(this.clientOf(name), this.factory, {
            workers: o.concurrentReplicaSetSyncs ?? 5,
            metrics: queueMetrics,
            events: new ClientEventRecorder(this.clientOf(name), {
              component: 'replicaset-controller',
              onError: (err) => o.log.warn('could not record an event', { err: String(err) }),
            }),
            onError: (key, err) => o.log.warn('replicaset sync failed', { key, err: String(err) }),
          }),
        );
      }
      if (name === 'deployment') {
        this.running.push(
          new DeploymentController(this.clientOf(name), this.factory, {
            workers: o.concurrentDeploymentSyncs ?? 5,
            metrics: queueMetrics,
            events: new ClientEventRecorder(this.clientOf(name), {
              component: 'deployment-controller',
              onError: (err) => o.log.warn('could not record an event', { err: String(err) }),
            }),
            onError: (key, err) => o.log.warn('deployment sync failed', { key, err: String(err) }),
          }),
        );
      }
      if (name === 'serviceaccount') {
        this.running.push(
          new ServiceAccountsController(this.clientOf(name), this.factory, {
            metrics: queueMetrics,
            onError: (key, err) => o.log.warn('serviceaccount sync failed', { key, err: String(err) }),
          }),
        );
      }
      if (name === 'csrapproving' || name === 'csrsigning') this.addCsrController(name, queueMetrics);
      if (name === 'scheduler') {
        this.running.push(
          new Scheduler(this.clientOf(name), this.factory, {
            ...(o.schedulerParallelism === undefined ? {} : { parallelism: o.schedulerParallelism }),
            metrics: queueMetrics,
            events: new ClientEventRecorder(this.clientOf(name), {
              component: 'default-scheduler',
              onError: (err) => o.log.warn('could not record an event', { err: String(err) }),
            }),
            onError: (key, err) => o.log.warn('scheduling failed', { key, err: String(err) }),
          }),
        );
      }
      if (name === 'clusterrole-aggregation') {
        this.running.push(
          new ClusterRoleAggregationController(this.clientOf(name), this.factory, {
            metrics: queueMetrics,
            onError: (key, err) => o.log.warn('clusterrole aggregation failed', { key, err: String(err) }),
          }),
        );
      }
    }
  }

  private clientOf(controller: ControllerName): Client {
    return this.o.clientFor?.(controller) ?? this.client;
  }

  private addCsrController(name: 'csrapproving' | 'csrsigning', metrics: WorkqueueMetrics): void {
    const { o } = this;
    const client = this.clientOf(name);
    const certs = o.certificates;
    const onError = (key: string, err: unknown): void =>
      o.log.warn(`${name} sync failed`, { key, err: String(err) });
    if (certs === undefined || (name === 'csrsigning' && certs.sign === undefined)) {
      o.log.warn(
        name === 'csrsigning'
          ? 'csrsigning controller not started: no --cluster-signing-cert-file and --cluster-signing-key-file'
          : 'csrapproving controller not started: no certificate request parser',
      );
      return;
    }
    if (name === 'csrapproving') {
      this.running.push(
        new CsrApprovingController(client, this.factory, { parse: certs.parse, metrics, onError }),
      );
      return;
    }
    this.running.push(
      new CsrSigningController(client, this.factory, {
        parse: certs.parse,
        sign: certs.sign!,
        ...(certs.signingDurationSeconds === undefined
          ? {}
          : { maxDurationSeconds: certs.signingDurationSeconds }),
        metrics,
        onError,
      }),
    );
  }
  /**
   * The grid controllers need the superedge.io kinds, which a real cluster serves only once their CRDs
   * are installed (`svcplane crds | kubectl apply -f -`). Without them a grid controller is skipped with
   * a warning that says so, as kube-controller-manager skips a controller whose API is not served; the
   * other controllers run.
   */
  private async addGridControllers(): Promise<void> {
    const { o } = this;
    const events = (name: ControllerName, component: string): ClientEventRecorder =>
      new ClientEventRecorder(this.clientOf(name), {
        component,
        onError: (err) => o.log.warn('could not record an event', { err: String(err) }),
      });
    if (o.controllers.includes('servicegrid')) {
      if (await this.serves(SERVICEGRIDS))
        this.running.push(
          new ServiceGridController(this.clientOf('servicegrid'), this.factory, {
            workers: o.concurrentGridSyncs ?? 5,
            metrics: this.queueMetrics,
            events: events('servicegrid', 'servicegrid-controller'),
            onError: (key, err) => o.log.warn('servicegrid sync failed', { key, err: String(err) }),
          }),
        );
      else o.log.warn(CRDS_MISSING('servicegrid', 'servicegrids'));
    }
    if (o.controllers.includes('deploymentgrid')) {
      if (await this.serves(DEPLOYMENTGRIDS))
        this.running.push(
          new DeploymentGridController(this.clientOf('deploymentgrid'), this.factory, {
            workers: o.concurrentGridSyncs ?? 5,
            metrics: this.queueMetrics,
            events: events('deploymentgrid', 'deploymentgrid-controller'),
            onError: (key, err) => o.log.warn('deploymentgrid sync failed', { key, err: String(err) }),
          }),
        );
      else o.log.warn(CRDS_MISSING('deploymentgrid', 'deploymentgrids'));
    }
  }

  /**
   * Whether the server serves a resource. Discovery can fail for a moment (a 503 while a CRD just
   * applied is being established): such errors are retried with backoff for about 15 s, then thrown.
   */
  private async serves(r: ResourceInfo): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.client.serves(r);
      } catch (err) {
        if (attempt >= 5)
          throw new Error(`discovery of ${r.group}/${r.version} failed: ${String(err)}`, { cause: err });
        this.o.log.warn('discovery failed; retrying', { group: r.group, err: String(err) });
        await sleep(500 * 2 ** attempt, this.stopping.signal);
      }
    }
  }

  /** Starts the informers, waits for their caches, then starts every controller. */
  async start(): Promise<void> {
    await this.addGridControllers();
    this.factory.start();
    await this.factory.waitForSync();
    await Promise.all(this.running.map((c) => c.start()));
    this.o.log.info('controllers started', { controllers: this.o.controllers });
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.all(this.running.map((c) => c.stop()));
    await this.factory.stop();
  }
}
