// The controllers of `svcplane up`, on a worker thread of their own: the API server's event loop serves
// the API and nothing else. This is `svcplane controller-manager`'s manager and client runtime, reaching
// the server over a unix socket of its data dir (plain HTTP, a token of their own) instead of TLS.
// controller-host.ts starts it, restarts it when it dies, relays its metrics and readiness, and stops it.
import { parentPort, workerData } from 'node:worker_threads';
import { jsonLogger } from '../runtime/logger.js';
import {
  ControllerManager,
  type ControllerName,
  type NodeLifecycleSettings,
  type PodGCSettings,
} from '../controllers/manager.js';
import { Client } from '../runtime/client.js';
import { httpTransport } from '../runtime/http-transport.js';
import type { Transport } from '../runtime/transport.js';
import { serviceAccountClients } from '../controllers/controller-credentials.js';
import { LeaderElector, leaseClient } from '../runtime/leader-election.js';
import { certificateControllers, type ClusterSigningFiles } from './cluster-signing.js';

/** What the host hands the worker (structured-cloned). */
export interface ControllersWorkerData {
  readonly socketPath: string;
  /** The manager's own token (user system:kube-controller-manager): informers, leader election, tokens. */
  readonly token: string;
  /** The scheduler's token (user system:kube-scheduler). */
  readonly schedulerToken: string;
  /** Each controller as its own ServiceAccount (with RBAC), or all as the manager. */
  readonly serviceAccountCredentials?: boolean;
  readonly controllers: readonly ControllerName[];
  /** `svcplane up`'s --node-monitor-* flags (controller-manager's); absent: upstream's defaults. */
  readonly nodeLifecycle?: NodeLifecycleSettings;
  /** `svcplane up`'s --podgc-* and --terminated-pod-gc-threshold flags. */
  readonly podGC?: PodGCSettings;
  /** The CA the CSR signer issues with (`svcplane up`'s own DIR/pki/ca.crt and ca.key). */
  readonly clusterSigning?: ClusterSigningFiles;
  /**
   * Campaign for this Lease before running (a store several API servers share: etcd), so that one
   * `svcplane up` of several runs the controllers, as kube-controller-manager's --leader-elect does.
   */
  readonly leaderElection?: { readonly namespace: string; readonly name: string; readonly identity: string };
}

export type ToWorker = { readonly type: 'metrics'; readonly id: number } | { readonly type: 'stop' };
export type FromWorker =
  | { readonly type: 'ready' }
  | { readonly type: 'metrics'; readonly id: number; readonly text: string }
  | { readonly type: 'failed'; readonly error: string }
  | { readonly type: 'lost' };

const port = parentPort;
if (port === null) throw new Error('controllers-worker.ts runs as a worker thread of svcplane up');
const data = workerData as ControllersWorkerData;
const post = (m: FromWorker): void => port.postMessage(m);
const log = jsonLogger((l) => process.stderr.write(l), 'controllers');

/** A transport to the server's socket that sends `token()` as its bearer token. */
const socketTransport = (token: () => string | Promise<string>): Transport =>
  httpTransport({
    server: 'http://localhost',
    socketPath: data.socketPath,
    credentials: async () => ({ headers: { Authorization: `Bearer ${await token()}` } }),
  });
const transport = socketTransport(() => data.token);
const client = new Client(transport);
// Each controller runs as its own ServiceAccount (kube-controller-manager's
// --use-service-account-credentials), the scheduler as system:kube-scheduler; RBAC authorizes each by
// its bootstrap role.
const schedulerTransport = socketTransport(() => data.schedulerToken);
const scheduler = new Client(schedulerTransport);
const controllerClients = serviceAccountClients(client, socketTransport, (c) =>
  c === 'scheduler' ? scheduler : client,
);
const manager = new ControllerManager(client, {
  clientFor: (c) =>
    data.serviceAccountCredentials === true
      ? controllerClients.clientFor(c)
      : c === 'scheduler'
        ? scheduler
        : client,
  controllers: data.controllers,
  ...(data.nodeLifecycle === undefined ? {} : { nodeLifecycle: data.nodeLifecycle }),
  ...(data.podGC === undefined ? {} : { podGC: data.podGC }),
  certificates: certificateControllers(data.clusterSigning),
  log,
});

let stopping = false;
let elector: LeaderElector | undefined;
port.on('message', (m: ToWorker) => {
  if (m.type === 'metrics') {
    manager.metrics.metrics().then(
      (text) => post({ type: 'metrics', id: m.id, text }),
      () => post({ type: 'metrics', id: m.id, text: '' }),
    );
  } else if (m.type === 'stop' && !stopping) {
    stopping = true;
    void manager
      .stop()
      .catch((err: unknown) => log.warn('controllers did not stop cleanly', { err: String(err) }))
      // A leader releases its Lease, so another instance takes over at once.
      .then(() => elector?.stop())
      .finally(() => {
        transport.close();
        schedulerTransport.close();
        controllerClients.close();
        port.close(); // nothing else keeps this thread alive: it exits
      });
  }
});

const fail = (error: string): void => {
  post({ type: 'failed', error });
  process.exit(1); // ends this thread only; the host restarts it
};
const run = (): void => {
  manager.start().then(
    () => post({ type: 'ready' }),
    (err: unknown) => fail(String(err)),
  );
};

const election = data.leaderElection;
if (election === undefined) run();
else {
  elector = new LeaderElector(leaseClient(client), {
    namespace: election.namespace,
    name: election.name,
    identity: election.identity,
    onStartedLeading: () => {
      if (stopping) return; // won while stopping: the elector's stop gives the Lease back
      log.info('became the leader; starting the controllers', { identity: election.identity });
      run();
    },
    onStoppedLeading: () => {
      if (stopping) return;
      // As kube-controller-manager: a leader that loses its Lease stops; the host starts a new campaign.
      log.error('leader election lost; stopping the controllers', { identity: election.identity });
      void manager.stop().finally(() => {
        post({ type: 'lost' });
        process.exit(1); // the host starts a new worker, which campaigns again
      });
    },
    onNewLeader: (who) => {
      if (who === election.identity || who === '') return; // '' : released, a campaign follows
      log.info('another instance leads the controllers; standing by', { leader: who });
      post({ type: 'ready' }); // a standby is healthy: the API server it belongs to serves
    },
  });
  elector.start();
}
