// NodeRestriction admission as the registry applies it, to every create, update and delete: for a
// node identity, core/nodeauthz/node-restriction.ts decides; a refusal is upstream's 403 about the
// object (`nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`). Everyone else,
// and the server's own writes (no user), pass.
import type { KObject } from '../../api/object.js';
import { mustFindResource, type ResourceInfo } from '../../api/resources.js';
import { statusErrors } from '../../api/status.js';
import { admitNodeWrite, type AdmissionOperation } from '../../core/nodeauthz/node-restriction.js';
import { cacheNodeLookups } from '../auth/node.js';
import type { WatchCache } from '../watch-cache/watch-cache.js';
import type { WriteContext } from './types.js';

const NODES = mustFindResource('', 'nodes');

export function checkNodeRestriction(
  cache: WatchCache,
  ctx: WriteContext,
  write: {
    readonly operation: AdmissionOperation;
    readonly r: ResourceInfo;
    readonly subresource: string;
    readonly object?: KObject;
    readonly old?: KObject;
  },
): void {
  if (ctx.user === undefined) return;
  const meta = (write.object ?? write.old)?.metadata;
  const name = meta?.name ?? '';
  const verdict = admitNodeWrite(
    {
      user: ctx.user,
      operation: write.operation,
      apiGroup: write.r.group,
      resource: write.r.resource,
      subresource: write.subresource,
      namespace: meta?.namespace ?? '',
      name,
      ...(write.object === undefined ? {} : { object: write.object }),
      ...(write.old === undefined ? {} : { old: write.old }),
    },
    cacheNodeLookups(cache),
  );
  if (verdict === undefined) return;
  if (verdict.kind === 'node-not-found') throw statusErrors.notFound(NODES, verdict.name);
  throw statusErrors.forbidden(write.r, name, verdict.reason);
}
