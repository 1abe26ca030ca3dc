// Each controller its own identity, as kube-controller-manager's --use-service-account-credentials:
// the ServiceAccount kube-system/<name> its bootstrap role system:controller:<name> is bound to (the
// endpoints controller is kube-system/endpoint-controller, and so on), with tokens the manager asks for
// through its own client (runtime/service-account-credentials.ts). A controller without such a role (the
// scheduler, which upstream runs as its own user) keeps the manager's client.
import { CONTROLLER_ROLES } from '../core/rbac/bootstrap-policy.js';
import { Client } from '../runtime/client.js';
import {
  CONTROLLER_SERVICE_ACCOUNT_NAMESPACE,
  ServiceAccountCredentials,
} from '../runtime/service-account-credentials.js';
import type { Transport } from '../runtime/transport.js';
import type { ControllerName } from './manager.js';

/** The ServiceAccount a controller runs as, or undefined when it has no controller role. */
export function controllerServiceAccount(controller: ControllerName): string | undefined {
  return Object.hasOwn(CONTROLLER_ROLES, controller) ? CONTROLLER_ROLES[controller]!.name : undefined;
}

export interface ControllerClients {
  /** The controller's client: its ServiceAccount's, or `fallback` when it has none. */
  clientFor(controller: ControllerName): Client;
  /** Closes the transports it opened. */
  close(): void;
}

/**
 * Clients that carry each controller's ServiceAccount token. `transportWith` makes a transport to the
 * same server as `base` that sends the given bearer token (and no other credential).
 */
export function serviceAccountClients(
  base: Client,
  transportWith: (token: () => Promise<string>) => Transport,
  fallback: (controller: ControllerName) => Client = () => base,
): ControllerClients {
  const clients = new Map<string, Client>();
  const transports: Transport[] = [];
  return {
    clientFor: (controller) => {
      const account = controllerServiceAccount(controller);
      if (account === undefined) return fallback(controller);
      let client = clients.get(account);
      if (client === undefined) {
        const creds = new ServiceAccountCredentials(base, CONTROLLER_SERVICE_ACCOUNT_NAMESPACE, account);
        const transport = transportWith(() => creds.token());
        transports.push(transport);
        client = new Client(transport);
        clients.set(account, client);
      }
      return client;
    },
    close: () => {
      for (const t of transports) t.close();
    },
  };
}
