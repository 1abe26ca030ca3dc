// `svcplane proxy --proxy-mode iptables` end to end, as root, in network namespaces this test creates: the
// API server in the hub, echo "pods" listening on their IPs inside two node namespaces, and the proxy in
// nodeA's namespace reading the API server directly (so the topology engine runs in the proxy). Real
// iptables-restore, real TCP from a namespace to a cluster IP or a node port. Covers load balancing over
// every endpoint, a SuperEdge unit rule, REJECT with no endpoints, ClientIP affinity, a NodePort with
// externalTrafficPolicy Local, partial syncs, the rules' shape, and --cleanup.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ipPath } from '../../src/demo/netns.js';
import { sampleInNetns } from '../../src/demo/probe.js';
import {
  WAIT,
  run,
  service,
  slice,
  startProxyCluster,
  udpFlowMoves,
  type ProxyCluster,
  type ProxyProcess,
} from './testing/proxy-netns.js';
import { until } from './testing/until.js';

describe('svcplane proxy --proxy-mode iptables in a network namespace', { timeout: 300_000 }, () => {
  let c: ProxyCluster;
  let proxy: ProxyProcess;
  const nsA = () => c.nsA;
  const nsB = () => c.nsB;
  const kubectl = (args: string[]) => c.kubectl(args);
  const apply = (objs: unknown[]) => c.apply(objs);
  const save = (ns: string) => run([ipPath(), 'netns', 'exec', ns, 'iptables-save']);
  const clusterIP = (name: string) => c.svcField(name, '{.spec.clusterIP}');

  before(async () => {
    c = await startProxyCluster();
    proxy = await c.startProxy(c.nsA, 'nodea', ['--proxy-mode', 'iptables']);
  });

  after(() => c?.close());

  it('balances a cluster IP over every endpoint with kube-proxy’s chains, and syncs a change partially', async () => {
    await apply([
      service('web'),
      slice('web-1', 'web', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb'],
        ['10.244.1.11', 'nodeb'],
      ]),
    ]);
    const ip = await clusterIP('web');
    const seen = await until('all three endpoints answer', WAIT, async () => {
      const answers = await sampleInNetns(nsA(), ip, 80, 30);
      return new Set(answers).size === 3 && answers.every((x) => x.startsWith('10.244.'))
        ? new Set(answers)
        : undefined;
    });
    assert.deepEqual([...seen].sort(), ['10.244.0.10', '10.244.1.10', '10.244.1.11']);
    const rules = await save(nsA());
    assert.match(
      rules,
      new RegExp(`-A KUBE-SERVICES -d ${ip.replace(/\./g, '\\.')}/32 .*-j KUBE-SVC-[A-Z2-7]{16}`),
    );
    assert.match(rules, /-m statistic --mode random --probability 0\.33333333\d+ -j KUBE-SEP-/);
    assert.match(rules, /-j DNAT --to-destination 10\.244\.1\.11:8080/);
    // One endpoint replaced: a partial sync of that one service port, and the old DNAT gone.
    const before = proxy.log().length;
    await apply([
      slice('web-1', 'web', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb'],
      ]),
    ]);
    await until('the partial sync', WAIT, () =>
      /"msg":"partial sync"[^\n]*"changed":1,/.test(proxy.log().slice(before)),
    );
    const after = await save(nsA());
    assert.doesNotMatch(after, /--to-destination 10\.244\.1\.11:8080/);
    assert.doesNotMatch(proxy.log().slice(before), /"msg":"full sync"/);
  });

  it('keeps a SuperEdge unit rule: nodea reaches only the endpoints on nodes of its unit', async () => {
    await apply([
      service('grid', {}, { topologyKeys: '["unit"]' }),
      slice('grid-1', 'grid', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb'],
      ]),
    ]);
    const ip = await clusterIP('grid');
    const answers = await until('only unit a answers', WAIT, async () => {
      const got = await sampleInNetns(nsA(), ip, 80, 12);
      return got.every((x) => x === '10.244.0.10') ? got : undefined;
    });
    assert.equal(answers.length, 12);
    // nodeb joins unit a: both endpoints now.
    await kubectl(['label', 'node', 'nodeb', 'unit=a', '--overwrite']);
    await until(
      'both answer after the relabel',
      WAIT,
      async () => new Set(await sampleInNetns(nsA(), ip, 80, 20)).size === 2,
    );
    await kubectl(['label', 'node', 'nodeb', 'unit=b', '--overwrite']);
  });

  it('refuses connections to a Service with no usable endpoints (REJECT), at once', async () => {
    await apply([service('empty'), slice('empty-1', 'empty', [])]);
    const ip = await clusterIP('empty');
    await until('refused', WAIT, async () =>
      (await sampleInNetns(nsA(), ip, 80, 3)).every((x) => x === 'refused'),
    );
    assert.match(await save(nsA()), /default\/empty:http has no endpoints.* -j REJECT/);
  });

  it('sticks a client to one endpoint with ClientIP affinity', async () => {
    await apply([
      service('sticky', { sessionAffinity: 'ClientIP' }),
      slice('sticky-1', 'sticky', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb'],
        ['10.244.1.11', 'nodeb'],
      ]),
    ]);
    const ip = await clusterIP('sticky');
    const answers = await until('answers', WAIT, async () => {
      const got = await sampleInNetns(nsA(), ip, 80, 15);
      return got.every((x) => x.startsWith('10.244.')) ? got : undefined;
    });
    assert.equal(new Set(answers).size, 1, `one endpoint for one client: ${answers.join(',')}`);
    assert.match(await save(nsA()), /-m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-/);
  });

  it('serves a NodePort with externalTrafficPolicy Local from this node’s endpoints only', async () => {
    await apply([
      service('np', { type: 'NodePort', externalTrafficPolicy: 'Local' }),
      slice('np-1', 'np', [
        ['10.244.0.10', 'nodea'],
        ['10.244.1.10', 'nodeb'],
      ]),
    ]);
    const port = Number(
      (await kubectl(['get', 'svc', 'np', '-o', 'jsonpath={.spec.ports[0].nodePort}'])).trim(),
    );
    const nodeA = c.layout.nodes[0]!.ip;
    const answers = await until('the node port answers', WAIT, async () => {
      const got = await sampleInNetns(nsB(), nodeA, port, 10);
      return got.every((x) => x.startsWith('10.244.')) ? got : undefined;
    });
    assert.deepEqual([...new Set(answers)], ['10.244.0.10']);
  });

  it('lets only loadBalancerSourceRanges reach a load-balancer IP, and accepts its health check node port', async () => {
    const [nodeA, nodeB] = [c.layout.nodes[0]!.ip, c.layout.nodes[1]!.ip];
    await apply([
      service('lb', {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Local',
        loadBalancerSourceRanges: [`${nodeB}/32`],
      }),
      slice('lb-1', 'lb', [['10.244.0.10', 'nodea']]),
    ]);
    // The load balancer's address is nodea's own, so traffic to it reaches nodea's rules.
    await kubectl([
      'patch',
      'svc',
      'lb',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({ status: { loadBalancer: { ingress: [{ ip: nodeA }] } } }),
    ]);
    const inRange = await until('the load-balancer IP answers nodeb', WAIT, async () => {
      const got = await sampleInNetns(nsB(), nodeA, 80, 3);
      return got.every((x) => x === '10.244.0.10') ? got : undefined;
    });
    assert.equal(inRange.length, 3);
    // From the hub (outside the ranges) the SYN is dropped: the client times out.
    assert.deepEqual(await sampleInNetns(c.layout.hub, nodeA, 80, 1), ['timeout']);
    const hc = (await kubectl(['get', 'svc', 'lb', '-o', 'jsonpath={.spec.healthCheckNodePort}'])).trim();
    // As iptables-save prints them (its own argument order).
    const rules = await save(nsA());
    const b = nodeB.replace(/\./g, '\\.');
    for (const re of [
      /-A KUBE-PROXY-FIREWALL -d \S+\/32 -p tcp -m comment --comment "default\/lb:http traffic not accepted by KUBE-FW-\w+" -m tcp --dport 80 -j DROP/,
      new RegExp(
        `-A KUBE-FW-\\w+ -s ${b}/32 -m comment --comment "default/lb:http loadbalancer IP" -j KUBE-EXT-`,
      ),
      /-A KUBE-FW-\w+ -m comment --comment "other traffic to default\/lb:http will be dropped by KUBE-PROXY-FIREWALL"\n/,
      /-A KUBE-SERVICES -d \S+\/32 -p tcp -m comment --comment "default\/lb:http loadbalancer IP" -m tcp --dport 80 -j KUBE-FW-/,
      new RegExp(
        `-A KUBE-NODEPORTS -p tcp -m comment --comment "default/lb:http health check node port" -m tcp --dport ${hc} -j ACCEPT`,
      ),
    ])
      assert.match(rules, re);
  });

  it('moves a UDP flow that keeps its source port to the new endpoint (stale conntrack entries deleted)', () =>
    udpFlowMoves(c, proxy));

  it('--cleanup removes every KUBE- chain and the jumps to them', async () => {
    await proxy.stop();
    assert.match(await save(nsA()), /KUBE-SERVICES/);
    const out = await c.svcplane(nsA(), ['proxy', '--cleanup']);
    assert.match(out, /removed [1-9]\d* iptables chains/);
    assert.doesNotMatch(await save(nsA()), /KUBE-/);
    // Again, and on a node that never had rules: nothing to do, and no error.
    for (const ns of [nsA(), nsB()]) {
      const again = await c.svcplane(ns, ['proxy', '--cleanup']);
      assert.match(again, /removed 0 iptables chains and the jumps to them, and 0 nftables tables/);
    }
  });
});
