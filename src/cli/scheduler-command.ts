// `svcplane scheduler`: the default scheduler alone, against any Kubernetes API server through a
// kubeconfig (kube-scheduler's flag names). It is the controller manager's `scheduler` controller, run
// by itself; with --leader-elect, several copies campaign for one coordination.k8s.io Lease
// (kube-system/kube-scheduler by default, as kube-scheduler's) and only the holder schedules.
import { jsonLogger } from '../runtime/logger.js';
import { ControllerManager } from '../controllers/manager.js';
import { Client } from '../runtime/client.js';
import { loadRequiredKubeconfig, requiredKubeconfig } from './kubeconfig-flags.js';
import { intFlag, commandFlags, noExtraArgs } from './flags.js';
import { leaderElectionFlags, runManagerUntilSignal } from './run-manager.js';

export const SCHEDULER_HELP = `Usage: svcplane scheduler --kubeconfig FILE [flags]

Runs the default scheduler against the API server the kubeconfig names (svcplane's or any Kubernetes
API server): pods with schedulerName default-scheduler and no node are bound to a node through
pods/binding. The same scheduler runs inside 'svcplane up'; do not run both against one cluster.

Flags:
  --kubeconfig FILE                      required
  --parallelism N                        scheduling workers, and so bindings in flight (default 16)
  --leader-elect                         campaign for a Lease; only the holder schedules
  --leader-elect-resource-namespace NS   default kube-system
  --leader-elect-resource-name NAME      default kube-scheduler
`;

const FLAGS = {
  kubeconfig: { type: 'string' },
  parallelism: { type: 'string' },
  'leader-elect': { type: 'boolean' },
  'leader-elect-resource-namespace': { type: 'string' },
  'leader-elect-resource-name': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function schedulerCommand(args: string[], out: (s: string) => void): Promise<number> {
  const flags = commandFlags(args, FLAGS, SCHEDULER_HELP, out);
  if (flags === undefined) return 0;
  const { values, positionals } = flags;
  noExtraArgs(positionals);
  const kubeconfig = requiredKubeconfig(values);
  const parallelism = intFlag('parallelism', values['parallelism'], 1) ?? 16;
  const transport = loadRequiredKubeconfig(kubeconfig);
  const log = jsonLogger(undefined, 'scheduler');
  const client = new Client(transport);
  const manager = new ControllerManager(client, {
    controllers: ['scheduler'],
    schedulerParallelism: parallelism,
    log,
  });
  await runManagerUntilSignal({
    client,
    manager,
    log,
    out,
    what: 'the scheduler',
    banner: 'svcplane: scheduler running',
    ...leaderElectionFlags(values, 'kube-scheduler'),
  });
  transport.close();
  return 0;
}
