// The proxy's desired state: which Services are proxied, one state per Service port, and each port's
// endpoints matched from the topology view's pools by port name and protocol.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { poolPorts } from '../topology/endpoints.js';
import { TopologyIndex } from '../topology/topology-index.js';
import { proxyState, servicePortStates } from './state.js';
import { ep, service, topoEp, view } from './testing/builders.js';

const NODE = 'n1';

describe('poolPorts()', () => {
  it('reads the name, protocol and number of each port of a pool', () => {
    assert.deepEqual(poolPorts('IPv4|a:TCP:8080,b:UDP:53'), [
      { name: 'a', protocol: 'TCP', port: 8080 },
      { name: 'b', protocol: 'UDP', port: 53 },
    ]);
    assert.deepEqual(poolPorts('IPv6|:SCTP:9'), [{ name: '', protocol: 'SCTP', port: 9 }]);
  });

  it('gives no ports for an empty port set, and port 0 for a missing or invalid number', () => {
    assert.deepEqual(poolPorts('IPv4|'), []);
    assert.deepEqual(poolPorts('garbage'), []);
    assert.deepEqual(poolPorts('IPv4|http:TCP:,x:TCP:1.5,y:TCP:-3'), [
      { name: 'http', protocol: 'TCP', port: 0 },
      { name: 'x', protocol: 'TCP', port: 0 },
      { name: 'y', protocol: 'TCP', port: 0 },
    ]);
  });

  it('reads back what slicePool wrote, for the ports of real slices', async () => {
    const { slicePool } = await import('../topology/endpoints.js');
    const pool = slicePool({
      addressType: 'IPv4',
      ports: [
        { name: 'dns', protocol: 'UDP', port: 53 },
        { name: 'dns-tcp', port: 53 },
      ],
    });
    assert.deepEqual(poolPorts(pool), [
      { name: 'dns-tcp', protocol: 'TCP', port: 53 },
      { name: 'dns', protocol: 'UDP', port: 53 },
    ]);
  });
});

describe('servicePortStates()', () => {
  it('gives a ClusterIP Service with one named port one state keyed ns/name:port', () => {
    const [s, ...rest] = servicePortStates(service(), view([topoEp('10.0.0.1')]), NODE);
    assert.equal(rest.length, 0);
    assert.deepEqual(s, {
      key: 'default/web:http',
      namespace: 'default',
      name: 'web',
      portName: 'http',
      protocol: 'TCP',
      clusterIPs: ['10.96.0.10'],
      port: 80,
      externalIPs: [],
      loadBalancerIPs: [],
      internal: [ep('10.0.0.1')],
      external: [],
      externalLocal: false,
      internalLocal: false,
    });
  });

  it('keys an unnamed port ns/name, defaults the protocol to TCP, and matches the unnamed slice port', () => {
    const states = servicePortStates(
      service({ ports: [{ port: 443 }] }),
      view([topoEp('10.0.0.1', { pool: 'IPv4|:TCP:8443' })]),
      NODE,
    );
    assert.deepEqual(
      states.map((s) => [s.key, s.portName, s.protocol, s.port, s.internal]),
      [['default/web', '', 'TCP', 443, [ep('10.0.0.1', 8443)]]],
    );
  });

  it('matches each port of a multi-port Service to its slice port by name and protocol', () => {
    const pool = 'IPv4|a:TCP:8080,b:UDP:53';
    const states = servicePortStates(
      service({
        ports: [
          { name: 'a', port: 80, protocol: 'TCP' },
          { name: 'b', port: 53, protocol: 'UDP' },
          { name: 'b', port: 54, protocol: 'TCP' }, // same name, other protocol: no slice port
          { name: 'c', port: 81 }, // no slice port of that name
        ],
      }),
      view([topoEp('10.0.0.1', { pool }), topoEp('10.0.0.2', { pool })]),
      NODE,
    );
    assert.deepEqual(
      states.map((s) => [s.key, s.internal.map((e) => `${e.ip}:${e.port}`)]),
      [
        ['default/web:a', ['10.0.0.1:8080', '10.0.0.2:8080']],
        ['default/web:b', ['10.0.0.1:53', '10.0.0.2:53']],
        ['default/web:b', []],
        ['default/web:c', []],
      ],
    );
  });

  it('skips ExternalName, headless and Services labelled for another proxy or headless', () => {
    const v = view([topoEp('10.0.0.1')]);
    for (const svc of [
      service({ type: 'ExternalName', clusterIP: '' }),
      service({ clusterIP: 'None' }),
      service({ clusterIP: '' }),
      service({ labels: { 'service.kubernetes.io/service-proxy-name': 'other' } }),
      service({ labels: { 'service.kubernetes.io/service-proxy-name': '' } }),
      service({ labels: { 'service.kubernetes.io/headless': '' } }),
    ])
      assert.deepEqual(servicePortStates(svc, v, NODE), []);
  });

  it('reads ClientIP affinity: 10800 s by default, or the configured timeout', () => {
    const timeout = (o: Parameters<typeof service>[0]) =>
      servicePortStates(service(o), undefined, NODE)[0]?.affinityTimeoutSeconds;
    assert.equal(timeout({}), undefined);
    assert.equal(timeout({ sessionAffinity: 'None', affinityTimeout: 60 }), undefined);
    assert.equal(timeout({ sessionAffinity: 'ClientIP' }), 10800);
    assert.equal(timeout({ sessionAffinity: 'ClientIP', affinityTimeout: 60 }), 60);
    assert.equal(timeout({ sessionAffinity: 'ClientIP', affinityTimeout: -1 }), 10800);
  });

  it('gives a NodePort Service its node port, external IPs, load-balancer IPs and the external endpoints', () => {
    const [s] = servicePortStates(
      service({
        type: 'LoadBalancer',
        ports: [{ name: 'http', port: 80, nodePort: 30080 }],
        externalIPs: ['192.0.2.1'],
        lbIngress: [
          { ip: '198.51.100.1' },
          { hostname: 'lb.example' },
          { ip: '198.51.100.2', ipMode: 'Proxy' },
        ],
        externalTrafficPolicy: 'Local',
      }),
      view(
        [topoEp('10.0.0.1', { node: 'n2' }), topoEp('10.0.0.2', { node: NODE })],
        [topoEp('10.0.0.2', { node: NODE })],
      ),
      NODE,
    );
    assert.equal(s?.nodePort, 30080);
    assert.deepEqual(s?.externalIPs, ['192.0.2.1']);
    assert.deepEqual(s?.loadBalancerIPs, ['198.51.100.1']);
    assert.deepEqual(s?.internal, [ep('10.0.0.1'), ep('10.0.0.2', 8080, true)]);
    assert.deepEqual(s?.external, [ep('10.0.0.2', 8080, true)]);
    assert.equal(s?.externalLocal, true);
  });

  it('reads loadBalancerSourceRanges as network CIDRs (trimmed, invalid ones skipped) and whether one holds the node', () => {
    const lb = (ranges: unknown, nodeIPs: string[] = []) =>
      servicePortStates(
        service({
          type: 'LoadBalancer',
          ports: [{ name: 'http', port: 80, nodePort: 30080 }],
          lbIngress: [{ ip: '198.51.100.1' }],
          loadBalancerSourceRanges: ranges as string[],
        }),
        undefined,
        NODE,
        nodeIPs,
      )[0];
    const s = lb(
      [' 10.1.2.3/16 ', '2001:db8:1::5/48', 'not-a-cidr', '10.1.0.0/16', 7],
      ['10.1.9.9', 'fd00::9'],
    );
    assert.deepEqual(s?.loadBalancerSourceRanges, ['10.1.0.0/16', '2001:db8:1::/48']);
    assert.deepEqual(s?.sourceRangesHoldNode, [4]);
    assert.equal(lb(['10.1.0.0/16'], ['10.2.0.1'])?.sourceRangesHoldNode, undefined);
    assert.equal(lb([])?.loadBalancerSourceRanges, undefined);
    assert.equal(lb('10.0.0.0/8')?.loadBalancerSourceRanges, undefined);
  });

  it('reads healthCheckNodePort only on a LoadBalancer Service with externalTrafficPolicy Local', () => {
    const hc = (type: string, etp: string, port: unknown) =>
      servicePortStates(
        service({
          type,
          ports: [{ name: 'http', port: 80, nodePort: 30080 }],
          externalTrafficPolicy: etp,
          healthCheckNodePort: port as number,
        }),
        undefined,
        NODE,
      )[0]?.healthCheckNodePort;
    assert.equal(hc('LoadBalancer', 'Local', 32000), 32000);
    assert.equal(hc('LoadBalancer', 'Cluster', 32000), undefined);
    assert.equal(hc('NodePort', 'Local', 32000), undefined);
    assert.equal(hc('LoadBalancer', 'Local', 0), undefined);
    assert.equal(hc('LoadBalancer', 'Local', 70000), undefined);
    assert.equal(hc('LoadBalancer', 'Local', '32000'), undefined);
  });

  it('reads externalTrafficPolicy Local only on an externally accessible Service, and internalTrafficPolicy Local', () => {
    const [s] = servicePortStates(
      service({ externalTrafficPolicy: 'Local', internalTrafficPolicy: 'Local' }),
      undefined,
      NODE,
    );
    assert.equal(s?.externalLocal, false);
    assert.equal(s?.internalLocal, true);
  });

  it('has no endpoints while the Service has no view, and no external endpoints when the view has none', () => {
    const svc = service({ ports: [{ name: 'http', port: 80, nodePort: 30080 }] });
    const [none] = servicePortStates(svc, undefined, NODE);
    assert.deepEqual([none?.internal, none?.external], [[], []]);
    const [internalOnly] = servicePortStates(svc, view([topoEp('10.0.0.1')]), NODE);
    assert.deepEqual([internalOnly?.internal, internalOnly?.external], [[ep('10.0.0.1')], []]);
  });

  it("says per port whether the view has a usable endpoint anywhere (kube-proxy's hasAnyEndpoints)", () => {
    const svc = service({
      internalTrafficPolicy: 'Local',
      ports: [
        { name: 'http', port: 80 },
        { name: 'metrics', port: 9090 },
      ],
    });
    const local = (usablePools: readonly string[]) => ({ ...view([]), usablePools });
    // Local policy, nothing on this node: http has endpoints elsewhere, metrics has none anywhere
    const [http, metrics] = servicePortStates(svc, local(['IPv4|http:TCP:8080']), NODE);
    assert.deepEqual([http?.internal, http?.hasEndpoints], [[], true]);
    assert.deepEqual([metrics?.internal, metrics?.hasEndpoints], [[], false]);
    // a view that does not say leaves the field out (the endpoints decide)
    const [plain] = servicePortStates(svc, view([]), NODE);
    assert.equal(plain !== undefined && 'hasEndpoints' in plain, false);
  });

  it('lists a pod in two slices once (ready and local if any copy is), sorted by ip then port', () => {
    const [s] = servicePortStates(
      service(),
      view([
        topoEp('10.0.0.9', { ready: false }),
        topoEp('10.0.0.10'),
        topoEp('10.0.0.9', { node: NODE, pool: 'IPv4|http:TCP:8080,metrics:TCP:9090' }),
        topoEp('10.0.0.1', { pool: 'IPv4|http:TCP:7070' }),
        topoEp('10.0.0.1'),
      ]),
      NODE,
    );
    assert.deepEqual(s?.internal, [
      ep('10.0.0.1', 7070),
      ep('10.0.0.1', 8080),
      ep('10.0.0.10'),
      ep('10.0.0.9', 8080, true, true),
    ]);
  });

  it("marks endpoints on this node local and keeps the view's ready flag", () => {
    const [s] = servicePortStates(
      service(),
      view([
        topoEp('10.0.0.1', { node: NODE, ready: false }),
        topoEp('10.0.0.2', { node: 'n2' }),
        topoEp('10.0.0.3'),
      ]),
      NODE,
    );
    assert.deepEqual(s?.internal, [ep('10.0.0.1', 8080, true, false), ep('10.0.0.2'), ep('10.0.0.3')]);
  });

  it('keeps dual-stack cluster IPs and uses clusterIP when clusterIPs is absent', () => {
    const dual = servicePortStates(service({ clusterIPs: ['10.96.0.10', 'fd00::10'] }), undefined, NODE);
    assert.deepEqual(dual[0]?.clusterIPs, ['10.96.0.10', 'fd00::10']);
    assert.deepEqual(servicePortStates(service(), undefined, NODE)[0]?.clusterIPs, ['10.96.0.10']);
  });

  it('skips endpoints whose slice port is 0 or missing, and FQDN endpoints', () => {
    const [s] = servicePortStates(
      service(),
      view([
        topoEp('10.0.0.1', { pool: 'IPv4|http:TCP:' }),
        topoEp('10.0.0.2', { pool: 'IPv4|http:TCP:0' }),
        topoEp('web.example', { pool: 'FQDN|http:TCP:8080' }),
        topoEp('10.0.0.4'),
      ]),
      NODE,
    );
    assert.deepEqual(s?.internal, [ep('10.0.0.4')]);
  });

  it('never throws on garbage, and ignores what it cannot read', () => {
    const junk = fc.oneof(
      fc.anything(),
      fc.record({ metadata: fc.anything(), spec: fc.anything(), status: fc.anything() }),
      fc.record({
        metadata: fc.constant({ namespace: 'ns', name: 'x' }),
        spec: fc.record({
          clusterIP: fc.oneof(fc.constant('10.0.0.1'), fc.anything()),
          clusterIPs: fc.anything(),
          ports: fc.oneof(fc.anything(), fc.array(fc.anything())),
          externalIPs: fc.anything(),
          sessionAffinity: fc.constantFrom('ClientIP', 'None', 3),
          sessionAffinityConfig: fc.anything(),
        }),
        status: fc.anything(),
      }),
    );
    fc.assert(
      fc.property(junk, (svc) => {
        for (const s of servicePortStates(svc, view([topoEp('10.0.0.1')]), NODE)) {
          assert.ok(s.port > 0);
          assert.ok(['TCP', 'UDP', 'SCTP'].includes(s.protocol));
        }
      }),
      { numRuns: 300 },
    );
    assert.deepEqual(servicePortStates(service({ ports: 'http' }), undefined, NODE), []);
    assert.deepEqual(servicePortStates(null, undefined, NODE), []);
  });
});

describe('proxyState()', () => {
  it('maps every proxied Service port by key, looking each Service up in the topology index', () => {
    const idx = new TopologyIndex(NODE);
    idx.setNode(NODE, {});
    idx.setNode('n2', {});
    const web = service({
      ports: [{ name: 'http', port: 80, nodePort: 30080 }],
      externalTrafficPolicy: 'Local',
    });
    idx.setService('default/web', web);
    idx.setSlice('default/web', 'web-1', {
      metadata: { name: 'web-1' },
      addressType: 'IPv4',
      ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
      endpoints: [
        { addresses: ['10.0.0.1'], nodeName: NODE },
        { addresses: ['10.0.0.2'], nodeName: 'n2' },
        { addresses: ['10.0.0.3'], nodeName: 'n2', conditions: { ready: false } },
      ],
    });
    const dns = service({
      name: 'dns',
      clusterIP: '10.96.0.53',
      ports: [{ name: 'dns', port: 53, protocol: 'UDP' }],
    });
    const headless = service({ name: 'db', clusterIP: 'None' });
    const state = proxyState([web, dns, headless], (k) => idx.view(k), NODE);
    assert.deepEqual([...state.keys()], ['default/web:http', 'default/dns:dns']);
    const s = state.get('default/web:http');
    assert.deepEqual(s?.internal, [ep('10.0.0.1', 8080, true), ep('10.0.0.2')]);
    assert.deepEqual(s?.external, [ep('10.0.0.1', 8080, true)]);
    assert.equal(s?.externalLocal, true);
    assert.deepEqual(state.get('default/dns:dns')?.internal, []);
  });
});
