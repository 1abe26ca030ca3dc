// A controller's own credentials, as kube-controller-manager's --use-service-account-credentials gives
// them (its client builder in k8s.io/controller-manager/pkg/clientbuilder): the ServiceAccount
// kube-system/<controller> is created when missing, and a bound token for it is asked with a
// TokenRequest through the manager's own client, then asked again once 80% of its life has passed. The
// manager's identity needs only `create serviceaccounts` and `create serviceaccounts/token`; each
// controller's writes then carry its own identity, which RBAC authorizes with its system:controller role.
import { mustFindResource } from '../api/resources.js';
import { isApiError, type Client } from './client.js';

const SERVICE_ACCOUNTS = mustFindResource('', 'serviceaccounts');

/** Where the controllers' ServiceAccounts live (upstream's). */
export const CONTROLLER_SERVICE_ACCOUNT_NAMESPACE = 'kube-system';

export interface ServiceAccountCredentialsOptions {
  /** The token's life asked for (default 3600 s, upstream's; the server may shorten it). */
  readonly expirationSeconds?: number;
  /** Epoch milliseconds (tests). */
  readonly now?: () => number;
}

interface Issued {
  readonly token: string;
  /** When to ask for the next one: 80% of the way to its expiry. */
  readonly renewAt: number;
  readonly expiresAt: number;
}

export class ServiceAccountCredentials {
  private issued: Issued | undefined;
  private pending: Promise<Issued> | undefined;
  private readonly now: () => number;

  constructor(
    private readonly client: Client,
    readonly namespace: string,
    readonly name: string,
    private readonly o: ServiceAccountCredentialsOptions = {},
  ) {
    this.now = o.now ?? Date.now;
  }

  /** A token for the ServiceAccount: the current one, or a new one once it is due for renewal. */
  async token(): Promise<string> {
    const current = this.issued;
    if (current !== undefined && this.now() < current.renewAt) return current.token;
    // One TokenRequest at a time, whatever the number of requests waiting for it.
    this.pending ??= this.request().finally(() => (this.pending = undefined));
    try {
      this.issued = await this.pending;
    } catch (err) {
      // An unexpired token is still good while a renewal fails; the next request tries again.
      if (current !== undefined && this.now() < current.expiresAt) return current.token;
      throw err;
    }
    return this.issued.token;
  }

  private async request(): Promise<Issued> {
    await this.ensureAccount();
    const asked = this.now();
    const answer = (await this.client.createSubresource(
      SERVICE_ACCOUNTS,
      this.namespace,
      this.name,
      'token',
      {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: this.o.expirationSeconds ?? 3600 },
      },
    )) as { status?: { token?: string; expirationTimestamp?: string } };
    const token = answer.status?.token;
    const expires = Date.parse(answer.status?.expirationTimestamp ?? '');
    if (token === undefined || token === '' || Number.isNaN(expires))
      throw new Error(`TokenRequest for ${this.namespace}/${this.name}: the answer has no token`);
    return { token, renewAt: asked + 0.8 * Math.max(0, expires - asked), expiresAt: expires };
  }

  private async ensureAccount(): Promise<void> {
    try {
      await this.client.get(SERVICE_ACCOUNTS, this.namespace, this.name);
      return;
    } catch (err) {
      if (!isApiError(err, 404)) throw err;
    }
    try {
      await this.client.create(SERVICE_ACCOUNTS, this.namespace, {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: this.name, namespace: this.namespace },
      });
    } catch (err) {
      if (!isApiError(err, 409)) throw err; // created meanwhile by another manager
    }
  }
}
