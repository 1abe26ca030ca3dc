// What the two CSR controllers (csrapproving, csrsigning) share: one shared CertificateSigningRequest
// informer, a keyed queue fed by its every change, and a reconcile of the cached request by key.
import type { KObject } from '../api/object.js';
import { mustFindResource } from '../api/resources.js';
import type { Client } from '../runtime/client.js';
import type { Controller } from '../runtime/controller.js';
import type { Informer, SharedInformerFactory } from '../runtime/informer.js';
import { enqueueOnChange, keyedController, type KeyedControllerOptions } from './controller-wiring.js';

export const CSRS = mustFindResource('certificates.k8s.io', 'certificatesigningrequests');

export interface CsrControllerOptions extends KeyedControllerOptions {
  readonly now?: () => number;
}

export abstract class CsrController {
  private readonly csrs: Informer;
  private readonly controller: Controller;
  protected readonly now: () => number;

  constructor(
    protected readonly client: Client,
    factory: SharedInformerFactory,
    name: string,
    o: CsrControllerOptions,
  ) {
    this.now = o.now ?? Date.now;
    this.csrs = factory.informer(CSRS);
    this.controller = keyedController(
      {
        name,
        workers: 5,
        reconcile: async (key) => {
          const csr = this.csrs.indexer.get(key);
          if (csr !== undefined) await this.syncCsr(csr);
        },
      },
      o,
    );
    enqueueOnChange(this.csrs, this.controller);
  }

  async start(): Promise<void> {
    await this.csrs.waitForSync();
    this.controller.start();
  }

  async stop(): Promise<void> {
    await this.controller.stop();
  }

  /** Brings one request to what the controller wants of it (level-based: called on every change). */
  protected abstract syncCsr(csr: KObject): Promise<void>;
}
