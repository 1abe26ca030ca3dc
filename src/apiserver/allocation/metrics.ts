// Allocator and repair metrics, with kube-apiserver's names (ipallocator/metrics.go,
// portallocator/metrics.go, and the repair controllers' error counters).
import { Counter, Gauge, type Registry } from 'prom-client';

export class AllocationMetrics {
  readonly ipAllocated: Gauge<'cidr'>;
  readonly ipAvailable: Gauge<'cidr'>;
  readonly ipAllocations: Counter<'cidr' | 'scope'>;
  readonly ipAllocationErrors: Counter<'cidr' | 'scope'>;
  readonly portAllocated: Gauge;
  readonly portAvailable: Gauge;
  readonly portAllocations: Counter<'scope'>;
  readonly portAllocationErrors: Counter<'scope'>;
  readonly ipRepairErrors: Counter<'type'>;
  readonly ipRepairReconcileErrors: Counter;
  readonly portRepairErrors: Counter<'type'>;
  readonly portRepairReconcileErrors: Counter;

  constructor(registry: Registry) {
    const registers = [registry];
    this.ipAllocated = new Gauge({
      name: 'kube_apiserver_clusterip_allocator_allocated_ips',
      help: 'Gauge measuring the number of allocated IPs for Services',
      labelNames: ['cidr'],
      registers,
    });
    this.ipAvailable = new Gauge({
      name: 'kube_apiserver_clusterip_allocator_available_ips',
      help: 'Gauge measuring the number of available IPs for Services',
      labelNames: ['cidr'],
      registers,
    });
    this.ipAllocations = new Counter({
      name: 'kube_apiserver_clusterip_allocator_allocation_total',
      help: 'Number of Cluster IPs allocations',
      labelNames: ['cidr', 'scope'],
      registers,
    });
    this.ipAllocationErrors = new Counter({
      name: 'kube_apiserver_clusterip_allocator_allocation_errors_total',
      help: 'Number of errors trying to allocate Cluster IPs',
      labelNames: ['cidr', 'scope'],
      registers,
    });
    this.portAllocated = new Gauge({
      name: 'kube_apiserver_nodeport_allocator_allocated_ports',
      help: 'Gauge measuring the number of allocated NodePorts for Services',
      registers,
    });
    this.portAvailable = new Gauge({
      name: 'kube_apiserver_nodeport_allocator_available_ports',
      help: 'Gauge measuring the number of available NodePorts for Services',
      registers,
    });
    this.portAllocations = new Counter({
      name: 'kube_apiserver_nodeport_allocator_allocation_total',
      help: 'Number of NodePort allocations',
      labelNames: ['scope'],
      registers,
    });
    this.portAllocationErrors = new Counter({
      name: 'kube_apiserver_nodeport_allocator_allocation_errors_total',
      help: 'Number of errors trying to allocate NodePort',
      labelNames: ['scope'],
      registers,
    });
    this.ipRepairErrors = new Counter({
      name: 'apiserver_clusterip_repair_ip_errors_total',
      help: 'Number of errors detected on clusterips by the repair loop broken down by type of error: leak, repair, full, outOfRange, duplicate, unknown, invalid',
      labelNames: ['type'],
      registers,
    });
    this.ipRepairReconcileErrors = new Counter({
      name: 'apiserver_clusterip_repair_reconcile_errors_total',
      help: 'Number of reconciliation failures on the clusterip repair reconcile loop',
      registers,
    });
    this.portRepairErrors = new Counter({
      name: 'apiserver_nodeport_repair_port_errors_total',
      help: 'Number of errors detected on ports by the repair loop broken down by type of error: leak, repair, full, outOfRange, duplicate, unknown',
      labelNames: ['type'],
      registers,
    });
    this.portRepairReconcileErrors = new Counter({
      name: 'apiserver_nodeport_repair_reconcile_errors_total',
      help: 'Number of reconciliation failures on the nodeport repair reconcile loop',
      registers,
    });
  }
}
