// Server-side apply and managedFields tracking.
export { apply, applyConflictError, defaultIgnore, updateManagedFields, type IgnoreSpec } from './apply.js';
export { ApplyError } from './errors.js';
