// kube-apiserver's 403 text, which kubectl prints as "Error from server (Forbidden): <message>":
//   services is forbidden: User "ro" cannot create resource "services" in API group "" in the namespace "default"
//   services "web" is forbidden: User "ro" cannot update resource "services/status" in API group "" in the namespace "default"
//   nodes is forbidden: User "ro" cannot list resource "nodes" in API group "" at the cluster scope
//   endpointslices.discovery.k8s.io is forbidden: User "x" cannot watch resource "endpointslices" in API group "discovery.k8s.io" …
//   forbidden: User "x" cannot get path "/metrics"
// followed by ": <reason>" when the authorizers gave one (ABAC's is "No policy matched."). Quoting is Go's %q,
// and the "User … cannot …" part has &, < and > escaped as HTML entities, as upstream does so the text
// never looks like markup.
import { goQuote } from '../../api/go-quote.js';
import type { RequestAttributes } from './types.js';

/** The "User … cannot …" part (upstream's forbiddenMessage), escaped. */
export function forbiddenReasonText(attrs: RequestAttributes): string {
  const user = goQuote(attrs.user.name);
  let text: string;
  if (!attrs.resourceRequest) {
    text = `User ${user} cannot ${attrs.verb} path ${goQuote(attrs.path)}`;
  } else {
    const resource = attrs.subresource === '' ? attrs.resource : `${attrs.resource}/${attrs.subresource}`;
    const what = `User ${user} cannot ${attrs.verb} resource ${goQuote(resource)} in API group ${goQuote(attrs.apiGroup)}`;
    text =
      attrs.namespace === ''
        ? `${what} at the cluster scope`
        : `${what} in the namespace ${goQuote(attrs.namespace)}`;
  }
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/**
 * The whole Status message of the 403 (upstream's apierrors.NewForbidden around the text above): the
 * qualified resource ("resource.group", without the subresource) and quoted name, or plain "forbidden"
 * for non-resource requests; then ": reason" when there is one.
 */
export function forbiddenMessage(attrs: RequestAttributes, reason = ''): string {
  const why = reason === '' ? forbiddenReasonText(attrs) : `${forbiddenReasonText(attrs)}: ${reason}`;
  const resource = attrs.resourceRequest ? attrs.resource : '';
  const group = attrs.resourceRequest ? attrs.apiGroup : '';
  if (resource === '' && group === '') return `forbidden: ${why}`;
  const qualified = group === '' ? resource : `${resource}.${group}`;
  return attrs.name === ''
    ? `${qualified} is forbidden: ${why}`
    : `${qualified} ${goQuote(attrs.name)} is forbidden: ${why}`;
}
