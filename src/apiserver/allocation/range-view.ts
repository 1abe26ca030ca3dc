// A read-only, seed-compatible view of the allocation state: the RangeAllocation objects upstream
// keeps in etcd (`range` plus the base64 big-endian bitmap, bit 0 = the first usable address), built
// from the per-value records at one store revision. Served at /debug/svcplane/rangeallocations.
import { IPAllocator } from '../../core/allocator/ip-allocator.js';
import { PortAllocator } from '../../core/allocator/port-allocator.js';
import type { ServiceAllocators } from './service-allocation.js';

export interface RangeAllocation {
  readonly kind: 'RangeAllocation';
  readonly apiVersion: 'v1';
  readonly metadata: { readonly name: string; readonly resourceVersion: string };
  readonly range: string;
  readonly data: string;
}

export async function rangeAllocations(a: ServiceAllocators): Promise<{
  kind: 'RangeAllocationList';
  apiVersion: 'v1';
  metadata: { resourceVersion: string };
  items: RangeAllocation[];
}> {
  const ips = await a.ips.list();
  const ports = await a.ports.list(ips.revision);
  const rv = String(ips.revision);
  const items: RangeAllocation[] = a.ipRanges.map((r, i) => {
    const alloc = new IPAllocator(r);
    for (const s of ips.items) if (s.value !== undefined && alloc.contains(s.value)) alloc.allocate(s.value);
    return {
      kind: 'RangeAllocation',
      apiVersion: 'v1',
      metadata: { name: i === 0 ? 'serviceips' : 'secondaryserviceips', resourceVersion: rv },
      range: r.spec,
      data: Buffer.from(alloc.snapshot().data).toString('base64'),
    };
  });
  const ports2 = new PortAllocator(a.portRange);
  for (const s of ports.items)
    if (s.value !== undefined && ports2.contains(s.value)) ports2.allocate(s.value);
  items.push({
    kind: 'RangeAllocation',
    apiVersion: 'v1',
    metadata: { name: 'servicenodeports', resourceVersion: rv },
    range: ports2.spec,
    data: Buffer.from(ports2.snapshot().data).toString('base64'),
  });
  return { kind: 'RangeAllocationList', apiVersion: 'v1', metadata: { resourceVersion: rv }, items };
}
