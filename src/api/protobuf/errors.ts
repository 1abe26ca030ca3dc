// The one error type of the protobuf decoder. `reason` tells the HTTP layer how to answer: a body that
// is not valid protobuf, or names another kind, is the client's mistake (400); a valid body using a
// field or kind this server has no table for is refused (415) rather than silently losing data.

export type ProtobufErrorReason = 'Malformed' | 'Mismatch' | 'Unsupported';

export class ProtobufError extends Error {
  override readonly name = 'ProtobufError';
  constructor(
    readonly reason: ProtobufErrorReason,
    message: string,
  ) {
    super(message);
  }
}

export const malformed = (message: string): ProtobufError => new ProtobufError('Malformed', message);
export const unsupported = (message: string): ProtobufError => new ProtobufError('Unsupported', message);
