// What `svcplane pod-status` writes, against the real API server in-process (memory store, in-process
// transport): the status lands through pods/status, a second call keeps unchanged transition times,
// a concurrent write is retried, and the errors are the API's or usage errors. The command as a
// process (flags, exit codes, kubectl's view, Endpoints) is in test/e2e/pod-status-kubectl.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { mustFindResource } from '../api/resources.js';
import { startInProcessApiServer, type InProcessApiServer } from '../../test/support/in-process-apiserver.js';
import { Client, isApiError } from '../runtime/client.js';
import type { Transport } from '../runtime/transport.js';
import { UsageError } from './flags.js';
import { setPodStatus } from './pod-status-command.js';

const PODS = mustFindResource('', 'pods');
const T0 = '2026-11-21T10:00:00Z';
const T1 = '2026-11-21T10:01:00Z';

interface Status {
  phase?: string;
  podIP?: string;
  podIPs?: { ip: string }[];
  hostIP?: string;
  conditions?: { type: string; status: string; lastTransitionTime?: string; reason?: string }[];
  containerStatuses?: { name: string; ready: boolean }[];
}

describe('setPodStatus against the API server', () => {
  let api: InProcessApiServer;
  const statusOf = async (name: string, ns = 'default'): Promise<Status> =>
    (await api.client.get(PODS, ns, name))['status'] as Status;
  const createPod = (name: string, ns = 'default') =>
    api.client.create(PODS, ns, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'web' } },
      spec: { containers: [{ name: 'web', image: 'nginx' }] },
    });

  before(async () => {
    api = await startInProcessApiServer();
  });
  after(() => api.stop());

  it('writes IPs, phase, conditions and container statuses through pods/status', async () => {
    await createPod('a');
    await setPodStatus(
      api.client,
      'default',
      'a',
      { ips: ['10.244.1.5'], hostIPs: ['192.168.0.2'] },
      () => T0,
    );
    const s = await statusOf('a');
    assert.equal(s.phase, 'Running');
    assert.equal(s.podIP, '10.244.1.5');
    assert.deepEqual(s.podIPs, [{ ip: '10.244.1.5' }]);
    assert.equal(s.hostIP, '192.168.0.2');
    assert.deepEqual(
      s.conditions?.map((c) => `${c.type}=${c.status}@${c.lastTransitionTime}`),
      [
        `PodReadyToStartContainers=True@${T0}`,
        `Initialized=True@${T0}`,
        `Ready=True@${T0}`,
        `ContainersReady=True@${T0}`,
        `PodScheduled=True@${T0}`,
      ],
    );
    assert.deepEqual(
      s.containerStatuses?.map((c) => [c.name, c.ready]),
      [['web', true]],
    );
  });

  it('not ready later: only Ready and ContainersReady move; the IP stays when not given', async () => {
    await setPodStatus(api.client, 'default', 'a', { ready: false }, () => T1);
    const s = await statusOf('a');
    assert.equal(s.podIP, '10.244.1.5');
    const times = Object.fromEntries(
      s.conditions!.map((c) => [c.type, `${c.status}@${c.lastTransitionTime}`]),
    );
    assert.equal(times['Ready'], `False@${T1}`);
    assert.equal(times['ContainersReady'], `False@${T1}`);
    assert.equal(times['PodScheduled'], `True@${T0}`);
    assert.equal(s.conditions!.find((c) => c.type === 'Ready')?.reason, 'ContainersNotReady');
  });

  it('another writer in between: the precondition fails and the write is redone on the fresh pod', async () => {
    await createPod('raced');
    let patches = 0;
    const racing: Transport = {
      server: 'racing',
      close: () => {},
      send: async (req) => {
        if (req.method === 'PATCH' && patches++ === 0) {
          await api.client.patch(PODS, 'default', 'raced', 'merge', {
            metadata: { labels: { touched: 'yes' } },
          });
        }
        return api.client.transport.send(req);
      },
    };
    await setPodStatus(new Client(racing), 'default', 'raced', { ips: ['10.0.0.9'] }, () => T0);
    assert.equal(patches, 2);
    const pod = await api.client.get(PODS, 'default', 'raced');
    assert.equal(pod.metadata.labels?.['touched'], 'yes');
    assert.equal((pod['status'] as Status).podIP, '10.0.0.9');
  });

  it('works in other namespaces', async () => {
    await api.client.create(mustFindResource('', 'namespaces'), '', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'shop' },
    });
    await createPod('b', 'shop');
    await setPodStatus(api.client, 'shop', 'b', { ips: ['10.0.0.2', 'fd00::2'] }, () => T0);
    assert.deepEqual((await statusOf('b', 'shop')).podIPs, [{ ip: '10.0.0.2' }, { ip: 'fd00::2' }]);
  });

  it('a missing pod is the API NotFound; a pod without an IP needs --ip', async () => {
    await assert.rejects(
      setPodStatus(api.client, 'default', 'nope', { ips: ['10.0.0.1'] }),
      (err) => isApiError(err, 404) && err.message === 'pods "nope" not found',
    );
    await createPod('bare');
    await assert.rejects(
      setPodStatus(api.client, 'default', 'bare', {}),
      (err) =>
        err instanceof UsageError && err.message === '--ip is required: pod default/bare has no IP yet',
    );
    await assert.rejects(
      setPodStatus(api.client, 'default', 'bare', { phase: 'Pending', ready: true }),
      (err) => err instanceof UsageError && /cannot be ready/.test(err.message),
    );
  });
});
