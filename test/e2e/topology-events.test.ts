// The servicetopology controller end to end: kubectl against `svcplane up`. Services with a malformed or
// conflicting topology setting are accepted (as a real cluster would) and get one Warning Event per
// problem, from service-topology-controller, exactly once; a later unrelated change reports nothing new,
// and a clean Service gets no Event.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { kubectlFor, type Kubectl } from './testing/kubectl.js';
import { startUp, type TestServer } from './testing/server.js';
import { until } from './testing/until.js';

const work = mkdtempSync(path.join(tmpdir(), 'svcplane-topology-events-'));
after(() => rmSync(work, { recursive: true, force: true }));

const service = (
  name: string,
  annotations: Record<string, string>,
  spec: Record<string, unknown> = {},
): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, annotations },
  spec: { ports: [{ port: 80 }], ...spec },
});

interface Event {
  type: string;
  reason: string;
  message: string;
  count?: number;
  source?: { component?: string };
}

const eventsOf = async (k: Kubectl, name: string): Promise<Event[]> =>
  (
    JSON.parse(
      await k(['get', 'events', '--field-selector', `involvedObject.name=${name}`, '-o', 'json']),
    ) as { items: Event[] }
  ).items;

const summary = (events: Event[]): string[][] =>
  events.map((e) => [e.type, e.reason, e.message, String(e.count), e.source?.component ?? '']);

describe('servicetopology: Warning Events on Services, kubectl against svcplane up', () => {
  let srv: TestServer;
  let k: Kubectl;
  before(async () => {
    srv = await startUp();
    k = kubectlFor(srv, work);
    await k(
      ['apply', '-f', '-'],
      [
        service('star-first', { 'service.svcplane.io/topology-keys': '["*","topology.kubernetes.io/zone"]' }),
        service('bad-json', { topologyKeys: 'not json' }),
        service('both', { topologyKeys: '["unit"]' }, { topologyKeys: ['kubernetes.io/hostname'] }),
        service('clean', { topologyKeys: '["unit"]' }),
      ]
        .map((d) => JSON.stringify(d))
        .join('\n'),
    );
  });
  after(async () => srv?.destroy());

  it('reports each problem once, with its reason and message', async () => {
    const C = 'service-topology-controller';
    const expected: Record<string, string[][]> = {
      'star-first': [
        [
          'Warning',
          'InvalidTopologyAnnotation',
          'metadata.annotations[service.svcplane.io/topology-keys][0]: Invalid value: "*": "*" must be the last value specified',
          '1',
          C,
        ],
      ],
      'bad-json': [
        [
          'Warning',
          'InvalidTopologyAnnotation',
          'metadata.annotations[topologyKeys]: not valid JSON; want a JSON array of strings, e.g. ["topology.kubernetes.io/zone","*"]; the annotation is ignored',
          '1',
          C,
        ],
      ],
      both: [
        [
          'Warning',
          'TopologyRuleConflict',
          'spec.topologyKeys decides which endpoints each node uses; annotation topologyKeys is ignored',
          '1',
          C,
        ],
      ],
    };
    for (const [name, want] of Object.entries(expected)) {
      const got = await until(`the Events of ${name}`, 20_000, async () => {
        const ev = await eventsOf(k, name);
        return ev.length > 0 && ev;
      });
      assert.deepEqual(summary(got), want, name);
    }
    // An unrelated change is no new report.
    await k(['label', 'service', 'both', 'touched=yes']);
    await k(['annotate', 'service', 'bad-json', 'touched=yes']);
    await new Promise((r) => setTimeout(r, 1_000));
    for (const [name, want] of Object.entries(expected))
      assert.deepEqual(summary(await eventsOf(k, name)), want, `${name} after a change`);
    assert.deepEqual(await eventsOf(k, 'clean'), []);
  });
});
