// Why a patch failed, in the classes kube-apiserver answers differently: a malformed patch document
// is 400 BadRequest, a well-formed patch that does not apply to the object is 422, and a JSON patch
// with more operations than allowed is 413.
export type PatchErrorKind = 'Malformed' | 'NotApplicable' | 'TooLarge';

export class PatchError extends Error {
  override readonly name = 'PatchError';
  constructor(
    readonly kind: PatchErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
