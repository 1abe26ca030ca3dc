// What callers hand the registry: write options, delete options and the hooks of kinds with side effects.
import type { ValidationOptions } from '../../api/validation/options.js';
import type { KObject } from '../../api/object.js';
import type { ResourceInfo } from '../../api/resources.js';
import type { RequestAttributes, UserInfo } from '../auth/types.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';
export type Subresource = '' | 'status' | 'finalize' | 'approval';

export interface WriteContext {
  readonly dryRun: boolean;
  readonly fieldManager: string;
  readonly fieldValidation: FieldValidation;
  /** Warnings for the response's Warning headers. */
  readonly warnings: string[];
  /** Who asks (after impersonation), for admission (escalation, NodeRestriction, a CertificateSigningRequest's requester); absent for the server's own writes. */
  readonly user?: UserInfo;
}

export interface DeleteOptions {
  readonly propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  readonly preconditions?: { uid?: string; resourceVersion?: string };
  readonly gracePeriodSeconds?: number;
}

/** Extension points for kinds with side effects (the Service allocators hook in here). */
export interface RegistryHooks {
  /**
   * After defaulting and before validation, on create (`old` undefined) and on updates of the main
   * resource: settles fields validation depends on (a Service's ipFamilies). Throws a StatusError.
   */
  prepare?(r: ResourceInfo, obj: KObject, old: KObject | undefined): void;
  /** Before a create is written; may change obj; returns an undo for when the write fails. */
  beforeCreate?(r: ResourceInfo, obj: KObject, ctx: WriteContext): Promise<(() => Promise<void>) | void>;
  beforeUpdate?(
    r: ResourceInfo,
    obj: KObject,
    old: KObject,
    ctx: WriteContext,
  ): Promise<(() => Promise<void>) | void>;
  /** After an update is stored: lets go of what `old` held and `obj` does not. */
  afterUpdate?(r: ResourceInfo, obj: KObject, old: KObject): Promise<void>;
  afterDelete?(r: ResourceInfo, obj: KObject): Promise<void>;
}

export interface RegistryOptions {
  readonly now?: () => number;
  readonly random?: () => number;
  readonly hooks?: RegistryHooks;
  /** What validation accepts beyond kube-apiserver's rules (flags such as --allow-loopback-endpoints). */
  readonly validation?: ValidationOptions;
  /** The server's authorizer, for the checks admission makes inside a write (approving, signing CSRs). */
  readonly authorize?: (attrs: RequestAttributes) => boolean;
}
