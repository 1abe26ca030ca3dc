// coordination.k8s.io/v1 Lease: leader election and node heartbeats.
import { field, int32, microTime, named, str, always } from './build.js';
import { kindSchema } from './meta.js';
import type { Schema } from './schema.js';

const COORDINATION = 'io.k8s.api.coordination.v1';

const leaseSpec: Schema = named(`${COORDINATION}.LeaseSpec`, {
  holderIdentity: str('Identity of the current holder.'),
  leaseDurationSeconds: int32('How long candidates wait after the last renewal before taking over.'),
  acquireTime: microTime('When the current holder acquired the lease.'),
  renewTime: microTime('When the current holder last renewed the lease.'),
  leaseTransitions: int32('Number of times the lease changed holders.'),
  strategy: str('How the next holder is chosen when coordinated leader election is used.'),
  preferredHolder: str('Holder that should take over next, under coordinated leader election.'),
});

export const lease: Schema = kindSchema(
  `${COORDINATION}.Lease`,
  'A Lease records who holds a lock and until when: leader election and node heartbeats use it.',
  { spec: always(field(leaseSpec, 'Desired state of the lease.')) },
);
