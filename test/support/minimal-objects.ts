// A minimal valid object of every served kind, by `group/Kind` (`/Pod` for core): what each kind's
// create needs and no more. Namespaced ones live in namespace `d`.
export const MINIMAL_OBJECTS: Readonly<Record<string, object>> = {
  '/Namespace': { metadata: { name: 'edge' } },
  '/Node': { metadata: { name: 'n1' } },
  '/Pod': { metadata: { name: 'p', namespace: 'd' }, spec: { containers: [{ name: 'c', image: 'i' }] } },
  '/Service': { metadata: { name: 's', namespace: 'd' }, spec: { ports: [{ port: 80 }] } },
  '/Endpoints': { metadata: { name: 's', namespace: 'd' } },
  '/Event': {
    metadata: { name: 'e', namespace: 'd' },
    involvedObject: { kind: 'Pod', name: 'p', namespace: 'd' },
  },
  'events.k8s.io/Event': {
    metadata: { name: 'e', namespace: 'd' },
    eventTime: '2024-01-01T00:00:00.000000Z',
    type: 'Normal',
    reason: 'R',
    action: 'A',
    reportingController: 'c',
    reportingInstance: 'i',
    regarding: { kind: 'Pod', name: 'p', namespace: 'd' },
  },
  'discovery.k8s.io/EndpointSlice': { metadata: { name: 's', namespace: 'd' }, addressType: 'IPv4' },
  'coordination.k8s.io/Lease': { metadata: { name: 'l', namespace: 'd' } },
  'apps/Deployment': {
    metadata: { name: 'x', namespace: 'd' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  },
  'apps/ReplicaSet': {
    metadata: { name: 'x', namespace: 'd' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  },
  'superedge.io/ServiceGrid': {
    metadata: { name: 'x', namespace: 'd' },
    spec: { gridUniqKey: 'zone', template: { ports: [{ port: 80 }] } },
  },
  '/ServiceAccount': { metadata: { name: 'x', namespace: 'd' } },
  'superedge.io/DeploymentGrid': {
    metadata: { name: 'x', namespace: 'd' },
    spec: {
      gridUniqKey: 'zone',
      template: {
        selector: { matchLabels: { a: 'b' } },
        template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    },
  },
  'rbac.authorization.k8s.io/Role': { metadata: { name: 'x', namespace: 'd' } },
  'rbac.authorization.k8s.io/ClusterRole': { metadata: { name: 'x' } },
  'rbac.authorization.k8s.io/RoleBinding': {
    metadata: { name: 'x', namespace: 'd' },
    roleRef: { kind: 'Role', name: 'r' },
  },
  'rbac.authorization.k8s.io/ClusterRoleBinding': {
    metadata: { name: 'x' },
    roleRef: { kind: 'ClusterRole', name: 'r' },
  },
  'certificates.k8s.io/CertificateSigningRequest': {
    metadata: { name: 'x' },
    spec: {
      request: Buffer.from(
        '-----BEGIN CERTIFICATE REQUEST-----\n-----END CERTIFICATE REQUEST-----\n',
      ).toString('base64'),
      signerName: 'example.com/signer',
      usages: ['client auth'],
    },
  },
};
