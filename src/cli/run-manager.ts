// Runs a ControllerManager as a command does (`svcplane controller-manager`, `svcplane scheduler`):
// at once, or behind leader election on a coordination.k8s.io Lease, until SIGTERM/SIGINT.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../runtime/logger.js';
import type { ControllerManager } from '../controllers/manager.js';
import type { Client } from '../runtime/client.js';
import { LeaderElector, leaseClient } from '../runtime/leader-election.js';
import { signalled } from './signals.js';

export interface RunManagerOptions {
  readonly client: Client;
  readonly manager: ControllerManager;
  readonly log: Logger;
  readonly out: (s: string) => void;
  /** What runs, for the log and the ready line: "controllers", "the scheduler". */
  readonly what: string;
  /** The ready line without the campaign: `svcplane: scheduler running`. */
  readonly banner: string;
  /** Campaign for this Lease (namespace, name); absent: run at once. */
  readonly leaderElection?: { readonly namespace: string; readonly name: string };
  /** Called once the manager runs (for readiness). */
  readonly onRunning?: () => void;
}

/**
 * The Lease `--leader-elect` campaigns for: `--leader-elect-resource-namespace` (default kube-system) and
 * `--leader-elect-resource-name` (default `defaultName`), as kube-controller-manager and kube-scheduler
 * read them; nothing without --leader-elect.
 */
export function leaderElectionFlags(
  values: Record<string, string | boolean | undefined>,
  defaultName: string,
): Pick<RunManagerOptions, 'leaderElection'> {
  if (values['leader-elect'] !== true) return {};
  return {
    leaderElection: {
      namespace: String(values['leader-elect-resource-namespace'] ?? 'kube-system'),
      name: String(values['leader-elect-resource-name'] ?? defaultName),
    },
  };
}

/**
 * Starts the manager (as the leader, when elected), waits for SIGTERM or SIGINT, then stops it. Like
 * kube-controller-manager and kube-scheduler, a leader that cannot start or that loses its Lease exits
 * with status 1, for its supervisor to restart it.
 */
export async function runManagerUntilSignal(o: RunManagerOptions): Promise<void> {
  const { client, manager, log } = o;
  let elector: LeaderElector | undefined;
  let shuttingDown = false;
  if (o.leaderElection !== undefined) {
    const { namespace, name } = o.leaderElection;
    const identity = `${hostname()}_${randomUUID()}`;
    elector = new LeaderElector(leaseClient(client), {
      namespace,
      name,
      identity,
      onStartedLeading: () => {
        log.info(`became the leader; starting ${o.what}`, { identity });
        manager
          .start()
          .then(() => o.onRunning?.())
          .catch((err: unknown) => {
            // A leader that cannot run must not keep the Lease: exit and let another lead.
            log.error(`${o.what} failed to start`, { err: String(err) });
            process.exit(1);
          });
      },
      onStoppedLeading: () => {
        if (shuttingDown) return;
        log.error('leader election lost', { identity });
        void manager.stop().finally(() => process.exit(1));
      },
      onNewLeader: (who) => log.info('new leader', { leader: who }),
    });
    elector.start();
    o.out(`${o.banner}, campaigning for ${namespace}/${name} as ${identity}`);
  } else {
    await manager.start();
    o.onRunning?.();
    o.out(o.banner);
  }
  await signalled();
  shuttingDown = true;
  await manager.stop();
  await elector?.stop();
}
