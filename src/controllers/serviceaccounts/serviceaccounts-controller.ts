// The serviceaccounts controller (kube's pkg/controller/serviceaccount): level-based, keyed by namespace.
// A namespace's add or update, and the deletion of one of the ensured accounts, enqueue the namespace;
// a reconcile creates the accounts core/serviceaccount/ensure-accounts.ts says are missing (an
// AlreadyExists from a racing writer is success; a namespace that has begun terminating is skipped).
import type { KObject } from '../../api/object.js';
import { mustFindResource } from '../../api/resources.js';
import {
  DEFAULT_SERVICE_ACCOUNTS,
  missingServiceAccounts,
} from '../../core/serviceaccount/ensure-accounts.js';
import { isApiError, type Client } from '../../runtime/client.js';
import type { Controller } from '../../runtime/controller.js';
import type { Informer, SharedInformerFactory } from '../../runtime/informer.js';
import { enqueueOnChange, keyedController, type KeyedControllerOptions } from '../controller-wiring.js';

const NAMESPACES = mustFindResource('', 'namespaces');
const SERVICE_ACCOUNTS = mustFindResource('', 'serviceaccounts');

export type ServiceAccountsControllerOptions = KeyedControllerOptions;

export class ServiceAccountsController {
  readonly controller: Controller;
  private readonly namespaces: Informer;
  private readonly accounts: Informer;

  constructor(
    private readonly client: Client,
    factory: SharedInformerFactory,
    opts: ServiceAccountsControllerOptions = {},
  ) {
    this.namespaces = factory.informer(NAMESPACES);
    this.accounts = factory.informer(SERVICE_ACCOUNTS);
    this.controller = keyedController(
      { name: 'serviceaccount', workers: 1, maxRetries: 15, reconcile: (key) => this.sync(key) },
      opts,
    );
    enqueueOnChange(this.namespaces, this.controller);
    this.accounts.addHandlers({
      onDelete: (sa: KObject) => {
        if (DEFAULT_SERVICE_ACCOUNTS.includes(sa.metadata.name ?? '')) {
          this.controller.enqueue(sa.metadata.namespace ?? '');
        }
      },
    });
  }

  async start(): Promise<void> {
    await Promise.all([this.namespaces.waitForSync(), this.accounts.waitForSync()]);
    this.controller.start();
  }

  stop(): Promise<void> {
    return this.controller.stop();
  }

  private async sync(namespace: string): Promise<void> {
    const ns = this.namespaces.indexer.get(namespace);
    if (ns === undefined) return;
    const status = (ns as { status?: { phase?: unknown } }).status;
    const missing = missingServiceAccounts(
      {
        phase: typeof status?.phase === 'string' ? status.phase : '',
        deleting: ns.metadata.deletionTimestamp !== undefined,
      },
      (name) => this.accounts.indexer.get(`${namespace}/${name}`) !== undefined,
    );
    for (const name of missing) {
      try {
        await this.client.create(SERVICE_ACCOUNTS, namespace, {
          apiVersion: 'v1',
          kind: 'ServiceAccount',
          metadata: { name },
        });
      } catch (err) {
        // Created meanwhile, or the namespace began terminating: nothing left to do.
        if (isApiError(err, 409) || isApiError(err, 403)) continue;
        throw err;
      }
    }
  }
}
