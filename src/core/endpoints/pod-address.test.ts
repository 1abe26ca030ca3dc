import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  endpointPortFromServicePort,
  findPort,
  isPodReady,
  podToEndpointAddress,
  shouldPodBeInEndpoints,
  shouldSetHostname,
} from './pod-address.js';
import { pod, service, type PodOptions } from './testing/builders.js';
import type { Container, Pod, ServicePort } from './types.js';

describe('shouldPodBeInEndpoints', () => {
  const rows: Array<[string, PodOptions, boolean, boolean]> = [
    ['a running pod with an IP', {}, false, true],
    ['a running unready pod with an IP', { ready: false }, false, true],
    ['a Pending pod with an IP', { phase: 'Pending' }, false, true],
    ['a pod in phase Unknown', { phase: 'Unknown' }, false, true],
    ['a Succeeded pod', { phase: 'Succeeded' }, false, false],
    ['a Failed pod', { phase: 'Failed' }, false, false],
    ['a Failed pod, even when terminating ones are included', { phase: 'Failed' }, true, false],
    ['a pod without any IP', { ip: '' }, false, false],
    ['a pod with status.podIP only', { podIPOnly: true }, false, true],
    ['a terminating pod', { terminating: true }, false, false],
    ['a terminating pod when terminating ones are included', { terminating: true }, true, true],
  ];
  for (const [what, opts, includeTerminating, want] of rows) {
    it(`${want ? 'includes' : 'excludes'} ${what}`, () => {
      assert.equal(shouldPodBeInEndpoints(pod(opts), includeTerminating), want);
    });
  }

  it('admits a pod whose podIPs entries are empty, and podToEndpointAddress then gives no address', () => {
    const p = pod({ ip: '' });
    p.status = { ...p.status, podIPs: [{}] };
    assert.equal(shouldPodBeInEndpoints(p, false), true);
    assert.equal(podToEndpointAddress(service(), p), undefined);
  });
});

describe('isPodReady', () => {
  it('is true only when the Ready condition has status "True"', () => {
    assert.equal(isPodReady(pod({ ready: true })), true);
    assert.equal(isPodReady(pod({ ready: false })), false);
    assert.equal(isPodReady(pod({ noReadyCondition: true })), false);
    const p = pod();
    p.status = { conditions: [{ type: 'ContainersReady', status: 'True' }] };
    assert.equal(isPodReady(p), false);
  });
});

describe('podToEndpointAddress: IP family (TestPodToEndpointAddressForService)', () => {
  const V4 = '1.2.3.4';
  const V6 = '2000::4';
  const families = { v4: [V4], v6: [V6], v4v6: [V4, V6], v6v4: [V6, V4] } as const;
  const rows: Array<[keyof typeof families, string, string[] | undefined, string | undefined]> = [
    ['v4', '10.0.0.1', undefined, V4],
    ['v4v6', '10.0.0.1', undefined, V4],
    ['v6v4', '10.0.0.1', undefined, V4],
    ['v4', 'None', undefined, V4],
    ['v4v6', 'None', ['IPv4'], V4],
    ['v4v6', 'None', undefined, V4],
    ['v6v4', 'None', undefined, V6],
    ['v4v6', '3000::1', undefined, V6],
    ['v6', 'None', undefined, V6],
    ['v4v6', 'None', ['IPv6'], V6],
    ['v4', '3000::1', undefined, undefined],
    // ipFamilies wins over the clusterIP's family.
    ['v4v6', '10.0.0.1', ['IPv6', 'IPv4'], V6],
    ['v6', '10.0.0.1', ['IPv4'], undefined],
    ['v6v4', 'None', ['IPv4', 'IPv6'], V4],
    ['v4v6', 'fd00::1', ['IPv4', 'IPv6'], V4],
    ['v4', '', undefined, V4],
  ];
  for (const [podFamilies, clusterIP, ipFamilies, want] of rows) {
    const svcDesc = `clusterIP ${JSON.stringify(clusterIP)}${ipFamilies ? ` ipFamilies ${ipFamilies.join(',')}` : ''}`;
    it(`a ${podFamilies} pod behind ${svcDesc} → ${want ?? 'no address (pod skipped)'}`, () => {
      const svc = service({ clusterIP, ...(ipFamilies ? { ipFamilies } : {}) });
      const got = podToEndpointAddress(svc, pod({ ip: [...families[podFamilies]] }));
      assert.equal(got?.ip, want);
    });
  }

  it('takes the first podIPs entry of the family', () => {
    const got = podToEndpointAddress(service(), pod({ ip: ['2000::4', '1.2.3.9', '1.2.3.4'] }));
    assert.equal(got?.ip, '1.2.3.9');
  });

  it('falls back to status.podIP when status.podIPs is absent', () => {
    assert.equal(podToEndpointAddress(service(), pod({ ip: '1.2.3.7', podIPOnly: true }))?.ip, '1.2.3.7');
  });

  it('counts an IPv4-mapped IPv6 address as IPv4, as Kubernetes does', () => {
    assert.equal(podToEndpointAddress(service(), pod({ ip: '::ffff:1.2.3.4' }))?.ip, '::ffff:1.2.3.4');
  });

  it('never publishes an entry that is not an IP', () => {
    assert.equal(podToEndpointAddress(service(), pod({ ip: ['not-an-ip'] })), undefined);
    assert.equal(podToEndpointAddress(service(), pod({ ip: ['bogus', '1.2.3.4'] }))?.ip, '1.2.3.4');
  });
});

describe('podToEndpointAddress: the address record', () => {
  it('sets nodeName (none for a pod on no node) and a targetRef of kind Pod without resourceVersion', () => {
    const p = pod({ name: 'web-1', namespace: 'ns', uid: 'u-1' });
    p.metadata.resourceVersion = '42';
    assert.deepEqual(podToEndpointAddress(service({ namespace: 'ns' }), p), {
      ip: '1.2.3.4',
      targetRef: { kind: 'Pod', namespace: 'ns', name: 'web-1', uid: 'u-1' },
    });
    assert.equal(podToEndpointAddress(service(), pod({ nodeName: 'node-a' }))?.nodeName, 'node-a');
  });
});

describe('hostname (ShouldSetHostname)', () => {
  const rows: Array<
    [string, PodOptions, { name?: string; namespace?: string; clusterIP?: string }, boolean]
  > = [
    ['hostname set, subdomain = service name', { hostname: 'h', subdomain: 'foo' }, {}, true],
    ['the same on a headless service', { hostname: 'h', subdomain: 'foo' }, { clusterIP: 'None' }, true],
    ['subdomain names another service', { hostname: 'h', subdomain: 'bar' }, {}, false],
    ['no hostname', { subdomain: 'foo' }, {}, false],
    ['hostname but no subdomain', { hostname: 'h' }, {}, false],
    [
      'service in another namespace',
      { hostname: 'h', subdomain: 'foo', namespace: 'a' },
      { namespace: 'b' },
      false,
    ],
  ];
  for (const [what, podOpts, svcOpts, want] of rows) {
    it(`${want ? 'sets' : 'does not set'} the hostname when ${what}`, () => {
      const svc = service(svcOpts);
      const p = pod(podOpts);
      assert.equal(shouldSetHostname(p, svc), want);
      // The address is computed whatever the namespaces; only the hostname depends on the rule.
      assert.equal(podToEndpointAddress(svc, p)?.hostname, want ? 'h' : undefined);
    });
  }
});

describe('findPort', () => {
  const web: Container = {
    name: 'web',
    ports: [
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
      { name: 'dns', containerPort: 5353, protocol: 'UDP' },
      { name: 'metrics', containerPort: 9090 }, // protocol defaults to TCP
    ],
  };
  const second: Container = {
    name: 'second',
    ports: [{ name: 'dns', containerPort: 5354, protocol: 'TCP' }],
  };
  const sidecar: Container = {
    name: 'proxy',
    restartPolicy: 'Always',
    ports: [
      { name: 'proxy', containerPort: 15001, protocol: 'TCP' },
      { name: 'http', containerPort: 15080, protocol: 'TCP' },
    ],
  };
  const plainInit: Container = {
    name: 'setup',
    ports: [{ name: 'setup', containerPort: 7000, protocol: 'TCP' }],
  };
  const p: Pod = pod({ containers: [web, second], initContainers: [plainInit, sidecar] });

  const rows: Array<[string, ServicePort, number | undefined]> = [
    ['an int targetPort is used as is, unchecked', { port: 80, targetPort: 12345, protocol: 'TCP' }, 12345],
    [
      'a named targetPort resolves by name and protocol',
      { port: 80, targetPort: 'http', protocol: 'TCP' },
      8080,
    ],
    ['the protocol picks among same-named ports', { port: 53, targetPort: 'dns', protocol: 'UDP' }, 5353],
    ['a later container matches on protocol', { port: 53, targetPort: 'dns', protocol: 'TCP' }, 5354],
    ['no port of that name and protocol', { port: 53, targetPort: 'dns', protocol: 'SCTP' }, undefined],
    ['no port of that name', { port: 80, targetPort: 'missing', protocol: 'TCP' }, undefined],
    ['an absent protocol means TCP on both sides', { port: 90, targetPort: 'metrics' }, 9090],
    ['a restartable init container port', { port: 1, targetPort: 'proxy', protocol: 'TCP' }, 15001],
    ['regular containers come before sidecars', { port: 80, targetPort: 'http', protocol: 'TCP' }, 8080],
    ['a non-restartable init container is not searched', { port: 1, targetPort: 'setup' }, undefined],
    ['an absent targetPort means the service port', { port: 80, protocol: 'TCP' }, 80],
    ['targetPort 0 means the service port', { port: 81, targetPort: 0, protocol: 'TCP' }, 81],
    ['targetPort "" means the service port', { port: 82, targetPort: '', protocol: 'TCP' }, 82],
    [
      'a targetPort of the wrong type resolves to nothing',
      { port: 83, targetPort: true } as never,
      undefined,
    ],
  ];
  for (const [what, sp, want] of rows) {
    it(`${what} → ${want ?? 'unresolved'}`, () => {
      assert.equal(findPort(p, sp), want);
    });
  }

  it('a numeric-looking string targetPort is still a name', () => {
    assert.equal(findPort(p, { port: 80, targetPort: '8080', protocol: 'TCP' }), undefined);
  });
});

describe('endpointPortFromServicePort (TestEndpointPortFromServicePort)', () => {
  it('copies name, protocol and appProtocol from the service port, with the resolved number', () => {
    assert.deepEqual(endpointPortFromServicePort({ name: 'web', port: 80, protocol: 'UDP' }, 8080), {
      name: 'web',
      port: 8080,
      protocol: 'UDP',
    });
    assert.deepEqual(
      endpointPortFromServicePort({ name: 'web', port: 80, protocol: 'TCP', appProtocol: 'http' }, 8080),
      { name: 'web', port: 8080, protocol: 'TCP', appProtocol: 'http' },
    );
    assert.deepEqual(endpointPortFromServicePort({ port: 80 }, 80), { port: 80, protocol: 'TCP' });
  });
});
