// discovery.k8s.io/v1 EndpointSlice: the endpoints of a service, in slices of up to 100, with
// per-endpoint readiness and topology. kube-proxy reads these.
import { atomicList, bool, enumOf, field, int32, named, setList, str, strMap, always } from './build.js';
import { objectReference } from './core.js';
import { kindSchema } from './meta.js';
import type { Schema } from './schema.js';

const DISCOVERY = 'io.k8s.api.discovery.v1';

const hintList = (name: string, what: string): Schema =>
  atomicList(
    named(`${DISCOVERY}.${name}`, { name: str(`Name of the ${what}.`) }, { required: ['name'] }),
    `${what[0]?.toUpperCase() ?? ''}${what.slice(1)}s that should consume this endpoint.`,
  );

const endpoint: Schema = named(
  `${DISCOVERY}.Endpoint`,
  {
    addresses: always(
      setList(
        { type: 'string' },
        'Addresses of the endpoint, all of the slice address type; consumers use the first.',
      ),
    ),
    conditions: always(
      named(
        `${DISCOVERY}.EndpointConditions`,
        {
          ready: bool('Whether the endpoint should receive new traffic. Unknown when absent.'),
          serving: bool('Like ready, but also true while the endpoint is terminating.'),
          terminating: bool('Whether the endpoint is shutting down.'),
        },
        { description: 'Current state of the endpoint.' },
      ),
    ),
    hostname: str('Host name of the endpoint, used in DNS records.'),
    targetRef: field(objectReference, 'Object (usually a pod) providing the endpoint.'),
    deprecatedTopology: strMap('Deprecated topology labels; use nodeName and zone.'),
    nodeName: str('Node hosting the endpoint.'),
    zone: str('Zone the endpoint is in.'),
    hints: named(
      `${DISCOVERY}.EndpointHints`,
      {
        forZones: hintList('ForZone', 'zone'),
        forNodes: hintList('ForNode', 'node'),
      },
      { description: 'Topology-aware routing hints.' },
    ),
  },
  { required: ['addresses'] },
);

const endpointPort: Schema = named(
  `${DISCOVERY}.EndpointPort`,
  {
    name: str('Name of the port; matches the service port name.'),
    protocol: enumOf(['SCTP', 'TCP', 'UDP'], 'Protocol of the port. Defaults to TCP.', { default: 'TCP' }),
    port: int32('Port number; empty means all ports.'),
    appProtocol: str('Application protocol of the port.'),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);

export const endpointSlice: Schema = kindSchema(
  `${DISCOVERY}.EndpointSlice`,
  'An EndpointSlice holds a subset of the endpoints of a service, with their readiness and topology.',
  {
    addressType: enumOf(['FQDN', 'IPv4', 'IPv6'], 'Type of every address of the slice. Immutable.'),
    endpoints: always(atomicList(endpoint, 'The endpoints of the slice, at most 1000.')),
    ports: always(atomicList(endpointPort, 'Ports every endpoint of the slice exposes.')),
  },
);
