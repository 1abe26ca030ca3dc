// Allocator errors: a stable code for programs, upstream's message for people. The texts match
// kube-apiserver's ipallocator and portallocator (current releases), because they end up verbatim in
// 422 and 500 Status messages that kubectl prints.

export type AllocatorErrorCode =
  'ErrFull' | 'ErrAllocated' | 'ErrNotInRange' | 'ErrMismatchedNetwork' | 'ErrNotReady' | 'ErrInvalidRange';

export class AllocatorError extends Error {
  override readonly name = 'AllocatorError';
  constructor(
    readonly code: AllocatorErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export const isAllocatorError = (err: unknown, code?: AllocatorErrorCode): err is AllocatorError =>
  err instanceof AllocatorError && (code === undefined || err.code === code);

export const errFull = (): AllocatorError => new AllocatorError('ErrFull', 'range is full');

export const errIPAllocated = (): AllocatorError =>
  new AllocatorError('ErrAllocated', 'provided IP is already allocated');
export const errPortAllocated = (): AllocatorError =>
  new AllocatorError('ErrAllocated', 'provided port is already allocated');

export const errIPNotInRange = (ip: string): AllocatorError =>
  new AllocatorError('ErrNotInRange', `provided IP ${ip} is not in the valid range`);
export const errPortNotInRange = (validPorts: string): AllocatorError =>
  new AllocatorError(
    'ErrNotInRange',
    `provided port is not in the valid range. The range of valid ports is ${validPorts}`,
  );

export const errMismatchedNetwork = (): AllocatorError =>
  new AllocatorError('ErrMismatchedNetwork', 'the provided network does not match the current range');
export const errMismatchedPortRange = (): AllocatorError =>
  new AllocatorError('ErrMismatchedNetwork', 'the provided port range does not match the current port range');
