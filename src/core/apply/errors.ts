// An apply request kube-apiserver refuses before looking for conflicts: a configuration that carries
// managedFields or names another version (400), or one that is not a valid typed object, such as a
// list-map item without its keys or a duplicated item (422 upstream: "failed to create typed patch
// object").
export type ApplyErrorKind = 'BadRequest' | 'Invalid';

export class ApplyError extends Error {
  override readonly name = 'ApplyError';
  constructor(
    message: string,
    readonly kind: ApplyErrorKind = 'Invalid',
  ) {
    super(message);
  }
}
