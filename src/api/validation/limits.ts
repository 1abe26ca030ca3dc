// "Too long" and "Too many" errors, with kube-apiserver's own error types
// (FieldValueTooLong: `metadata.annotations: Too long: must have at most 262144 bytes`;
// FieldValueTooMany: `endpoints: Too many: 1001: must have at most 1000 items`).
export { tooLong, tooMany } from '../field-errors.js';
