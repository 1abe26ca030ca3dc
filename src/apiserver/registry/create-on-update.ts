// A PUT or an apply that creates an object is authorized as a create too, as upstream's update and
// patch handlers ask for `create` before they create on update: the request itself was authorized as
// update or patch only. 403 with upstream's message when the requester may not create.
import type { ResourceInfo } from '../../api/resources.js';
import { statusErrors } from '../../api/status.js';
import { forbiddenReasonText } from '../auth/forbidden-message.js';
import type { RequestAttributes } from '../auth/types.js';
import type { WriteContext } from './types.js';

export function checkCreateOnUpdate(
  authorize: ((attrs: RequestAttributes) => boolean) | undefined,
  r: ResourceInfo,
  namespace: string,
  name: string,
  ctx: WriteContext,
): void {
  if (authorize === undefined || ctx.user === undefined) return;
  const attrs: RequestAttributes = {
    user: ctx.user,
    verb: 'create',
    resourceRequest: true,
    apiGroup: r.group,
    namespace: r.namespaced ? namespace : '',
    resource: r.resource,
    subresource: '',
    name,
    path: '',
  };
  if (!authorize(attrs)) throw statusErrors.forbidden(r, name, forbiddenReasonText(attrs));
}
