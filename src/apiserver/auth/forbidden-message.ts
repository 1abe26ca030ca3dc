// kube-apiserver's 403 text, which kubectl prints as "Error from server (Forbidden): <message>":
//   services is forbidden: User "ro" cannot create resource "services" in API group "" in the namespace "default"
//   services "web" is forbidden: User "ro" cannot update resource "services/status" in API group "" in the namespace "default"
//   nodes is forbidden: User "ro" cannot list resource "nodes" in API group "" at the cluster scope
//   endpointslices.discovery.k8s.io is forbidden: User "x" cannot watch resource "endpointslices" in API group "discovery.k8s.io" …
//   forbidden: User "x" cannot get path "/metrics"
// followed by ": <reason>" when the authorizers gave one (ABAC's is "No policy matched."). Quoting is Go's %q,
// and the "User … cannot …" part has &, < and > escaped as HTML entities, as upstream does so the text
// never looks like markup.
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

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '"': '\\"',
  '\\': '\\\\',
};

/** Go's %q (strconv.Quote): printable characters as they are, the rest escaped. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) {
      out += short;
      continue;
    }
    if (PRINTABLE.test(ch)) {
      out += ch;
      continue;
    }
    const cp = ch.codePointAt(0) ?? 0;
    if (cp >= 0xd800 && cp <= 0xdfff)
      out += '\ufffd'; // a lone surrogate reaches Go as U+FFFD
    else if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return out + '"';
}
