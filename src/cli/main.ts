// `svcplane`: flags → config → composition, nothing else. Flag names follow kube-apiserver's,
// kube-controller-manager's and SuperEdge's.
import { readFileSync } from 'node:fs';
import { isStoreError } from '../storage/store.js';
import { UsageError, parseFlags } from './flags.js';
// Each command's module is loaded only when it runs: the server stack (sqlite, etcd, the apiserver) costs
// about a second to load, which a quick command like pod-status should not pay.

const version = (): string =>
  (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;

export const HELP = `svcplane: a Kubernetes-compatible Service networking control plane for edge and multi-zone clusters

Usage: svcplane <command> [flags]

Commands:
  up          all-in-one server: the Kubernetes API server on the embedded store, with a kubeconfig
  apiserver   the API server alone, with kube-apiserver's flags
  controller-manager  the controllers alone, against any API server through a kubeconfig
  scheduler   the default scheduler alone: binds pending pods to nodes, against any API server
  pod-status  set a Pod's IPs, phase and readiness as a kubelet would report them (svcplane has no kubelet)
  node        simulated kubelets: register Nodes, renew their Leases, run the pods bound to them
  store       inspect a svcplane store (embedded SQLite or etcd): status, get, list, compact
  crds        print the CustomResourceDefinitions of the superedge.io grid kinds, for a real cluster
  explain     which endpoints of a Service a node may use under its topology rules, and why
  dashboard   the topology dashboard in a browser: every node against every Service, live
  wrapper     the node-local list/watch server: Services, EndpointSlices, Endpoints and Nodes as NODE should see them
  demo        the edge routing examples end to end on this machine: grids, wrappers, proxies and real traffic
  proxy       the node data plane: traffic to a Service's cluster IP goes to the endpoints NODE may use (iptables or userspace)
  version     print the version

Run 'svcplane <command> --help' for the flags of a command.
`;

const out = (s: string): void => {
  process.stdout.write(s.endsWith('\n') ? s : `${s}\n`);
};

/** Runs the CLI; resolves to the process exit status. Usage errors are 2, runtime failures 1. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        out(HELP);
        return command === undefined ? 2 : 0;
      case 'version':
      case '--version':
        parseFlags(rest, {});
        out(`svcplane ${version()}`);
        return 0;
      case 'up':
        return await (await import('./up-command.js')).upCommand(rest, out, version());
      case 'apiserver':
        return await (await import('./apiserver-command.js')).apiserverCommand(rest, out, version());
      case 'store':
        return await (await import('./store-command.js')).storeCommand(rest, out);
      case 'controller-manager':
        return await (await import('./controller-manager-command.js')).controllerManagerCommand(rest, out);
      case 'scheduler':
        return await (await import('./scheduler-command.js')).schedulerCommand(rest, out);
      case 'pod-status':
        return await (await import('./pod-status-command.js')).podStatusCommand(rest, out);
      case 'node':
        return await (await import('./node-command.js')).nodeCommand(rest, out, version());
      case 'crds':
        return (await import('./crds-command.js')).crdsCommand(rest, out);
      case 'wrapper':
        return await (await import('./wrapper-command.js')).wrapperCommand(rest, out, version());
      case 'demo':
        return await (await import('./demo-command.js')).demoCommand(rest, out);
      case 'proxy':
        return await (await import('./proxy-command.js')).proxyCommand(rest, out);
      case 'explain':
        return await (await import('./explain-command.js')).explainCommand(rest, out);
      case 'dashboard':
        return await (await import('./dashboard-command.js')).dashboardCommand(rest, out);
      default:
        throw new UsageError(`unknown command "${command}" (see 'svcplane --help')`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`svcplane: ${err.message}\n`);
      return 2;
    }
    if (isStoreError(err)) {
      process.stderr.write(`svcplane: ${err.message}\n`);
      return 1;
    }
    const code = (err as NodeJS.ErrnoException | undefined)?.code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
      // A system error (EADDRINUSE, EACCES, …): one line, not a stack trace.
      process.stderr.write(`svcplane: ${(err as Error).message}\n`);
      return 1;
    }
    throw err;
  }
}
