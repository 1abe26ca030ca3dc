// What a request asks an authorizer: kube-apiserver's authorizer.Attributes, as the request-info step
// derives them. The one shape the authorizers share: the API server's RequestAttributes (whose user also
// carries a uid and extra), RBAC's and the Node mode's requests are all this.
import type { FieldRequirement } from '../selectors/fields.js';

/** Who asks, as far as an authorizer looks: the user name and groups. */
export interface AccessUser {
  readonly name: string;
  readonly groups: readonly string[];
}

export interface AccessRequest {
  readonly user: AccessUser;
  /**
   * Resource requests: get, list, watch, create, update, patch, delete, deletecollection (and proxy, …).
   * Non-resource requests: the lower-cased HTTP method (get, post, put, …).
   */
  readonly verb: string;
  readonly resourceRequest: boolean;
  /** '' for the core group. Resource requests only. */
  readonly apiGroup: string;
  /** '' for cluster-scoped resources and for non-namespaced requests. */
  readonly namespace: string;
  /** The plural resource, without the subresource ('services', not 'services/status'). */
  readonly resource: string;
  readonly subresource: string;
  /** The object's name; '' for list, watch, create and deletecollection. */
  readonly name: string;
  /** The URL path, without the query. */
  readonly path: string;
  /**
   * A list, watch or deletecollection's fieldSelector, parsed (upstream's AuthorizeWithSelectors); absent
   * for other verbs and when there is none or it does not parse.
   */
  readonly fieldSelector?: readonly FieldRequirement[];
}
