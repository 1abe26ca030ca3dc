// The serviceaccounts controller's decision (kube's pkg/controller/serviceaccount): every active
// namespace has the ServiceAccounts of the list (`default`). A namespace that is terminating gets none.

/** The accounts kube-controller-manager ensures in every namespace. */
export const DEFAULT_SERVICE_ACCOUNTS: readonly string[] = ['default'];

export interface NamespaceState {
  /** status.phase ('' before the server has set it, which is Active). */
  readonly phase: string;
  readonly deleting: boolean;
}

/** The accounts to create in a namespace, given the names that exist in it. */
export function missingServiceAccounts(
  ns: NamespaceState,
  exists: (name: string) => boolean,
  wanted: readonly string[] = DEFAULT_SERVICE_ACCOUNTS,
): string[] {
  if (ns.deleting || (ns.phase !== '' && ns.phase !== 'Active')) return [];
  return wanted.filter((name) => !exists(name));
}
