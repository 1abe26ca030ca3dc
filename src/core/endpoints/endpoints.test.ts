import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  desiredSubsets,
  HEADLESS_SERVICE_LABEL,
  LAST_CHANGE_TRIGGER_TIME_ANNOTATION,
  OVER_CAPACITY_ANNOTATION,
  planEndpoints,
  selectsPod,
  type Endpoints,
  type EndpointsPlan,
  type PlanEndpointsInput,
  type Pod,
} from './endpoints.js';
import {
  addr,
  endpoints,
  nthIP,
  pod,
  port,
  service,
  subset,
  type PodOptions,
  type ServiceOptions,
} from './testing/builders.js';

const HEADLESS = { [HEADLESS_SERVICE_LABEL]: '' };
const T0 = '2018-01-01T00:00:00Z';

const plan = (o: Partial<PlanEndpointsInput>): EndpointsPlan =>
  planEndpoints({ service: service(), pods: [], triggerTime: '', ...o });

/** The object a create or update plan writes; fails the test for any other plan. */
function written(p: EndpointsPlan, kind?: 'create' | 'update'): Endpoints {
  assert.ok(p.kind === 'create' || p.kind === 'update', `expected a write, got ${p.kind}`);
  if (kind !== undefined) assert.equal(p.kind, kind);
  return p.endpoints;
}

/** Where the pod with this IP ended up in the written object. */
function placement(p: EndpointsPlan, ip: string): 'addresses' | 'notReadyAddresses' | 'absent' {
  const subsets = written(p).subsets ?? [];
  if (subsets.some((s) => s.addresses?.some((a) => a.ip === ip))) return 'addresses';
  if (subsets.some((s) => s.notReadyAddresses?.some((a) => a.ip === ip))) return 'notReadyAddresses';
  return 'absent';
}

type Where = 'addresses' | 'notReadyAddresses' | 'absent';
const A: Where = 'addresses';
const N: Where = 'notReadyAddresses';
const X: Where = 'absent';

describe('planEndpoints: where a pod lands', () => {
  // The 18 rows of upstream's TestSyncServiceAddresses (Service 1.1.1.1, one pod 10.1.1.1): phases
  // Running, Unknown, Pending, Failed, Succeeded × Ready × terminating × publishNotReadyAddresses, the
  // combinations that upstream lists.
  const upstream: Array<[string, boolean, boolean, boolean, Where]> = [
    ['Running', true, false, false, A],
    ['Running', true, true, false, X],
    ['Unknown', true, false, false, A],
    ['Unknown', true, true, false, X],
    ['Pending', true, false, false, A],
    ['Pending', true, true, false, X],
    ['Unknown', false, false, false, N],
    ['Pending', false, false, false, N],
    ['Failed', false, false, false, X],
    ['Succeeded', false, false, false, X],
    ['Running', false, false, true, A],
    ['Running', false, true, true, A],
    ['Unknown', false, false, true, A],
    ['Unknown', false, true, true, A],
    ['Pending', false, false, true, A],
    ['Pending', false, true, true, A],
    ['Failed', false, false, true, X],
    ['Succeeded', false, false, true, X],
  ];
  // The full product of the three phases that matter most × Ready × terminating × publishNotReadyAddresses
  // (3 × 2 × 2 × 2 = 24), which adds the rows upstream leaves out (e.g. a Ready pod that Succeeded).
  const product: Array<[string, boolean, boolean, boolean, Where]> = [
    ['Running', true, false, false, A],
    ['Running', true, true, false, X],
    ['Running', true, false, true, A],
    ['Running', true, true, true, A],
    ['Running', false, false, false, N],
    ['Running', false, true, false, X],
    ['Running', false, false, true, A],
    ['Running', false, true, true, A],
    ...(['Succeeded', 'Failed'] as const).flatMap((phase) =>
      [true, false].flatMap((ready) =>
        [false, true].flatMap((terminating) =>
          [false, true].map((publish): [string, boolean, boolean, boolean, Where] => [
            phase,
            ready,
            terminating,
            publish,
            X,
          ]),
        ),
      ),
    ),
  ];
  const table = (name: string, rows: Array<[string, boolean, boolean, boolean, Where]>): void => {
    describe(name, () => {
      for (const [phase, ready, terminating, publish, want] of rows) {
        it(`${phase}, ${ready ? 'ready' : 'unready'}, ${terminating ? 'terminating' : 'live'}, publishNotReadyAddresses ${publish} → ${want}`, () => {
          const svc = service({ clusterIP: '1.1.1.1', publishNotReadyAddresses: publish });
          const p = pod({ ip: '10.1.1.1', phase, ready, terminating });
          assert.equal(placement(plan({ service: svc, pods: [p] }), '10.1.1.1'), want);
        });
      }
    });
  };
  table('TestSyncServiceAddresses (18 rows)', upstream);
  table('phase × Ready × terminating × publishNotReadyAddresses (24 rows)', product);
  it('the two tables have the sizes they claim', () => {
    assert.equal(upstream.length, 18);
    assert.equal(product.length, 24);
  });
});

describe('planEndpoints: skip', () => {
  const externalName: Array<[string, ServiceOptions]> = [
    ['with selector and ports', {}],
    ['with selector, without ports', { ports: [] }],
    ['without selector, with ports', { selector: null }],
    ['without selector and ports', { selector: null, ports: [] }],
  ];
  for (const [what, opts] of externalName) {
    it(`skips an ExternalName Service ${what}, even with pods and an existing object`, () => {
      const svc = service({ ...opts, type: 'ExternalName', clusterIP: '' });
      const current = endpoints({ subsets: [subset([addr('6.7.8.9')], [port(1000)])] });
      assert.deepEqual(plan({ service: svc, pods: [pod()], current }), {
        kind: 'skip',
        reason: 'ExternalName',
      });
    });
  }

  it('skips a Service without selector: its Endpoints belong to the user', () => {
    const current = endpoints({ subsets: [subset([addr('6.7.8.9')], [port(1000)])] });
    const svc = service({ selector: null });
    assert.deepEqual(plan({ service: svc, pods: [pod()], current }), { kind: 'skip', reason: 'NoSelector' });
  });

  it('treats a selector that is not an object as no selector', () => {
    const svc = service();
    svc.spec = { ...svc.spec, selector: 'app=web' as never };
    assert.deepEqual(plan({ service: svc, pods: [pod()] }), { kind: 'skip', reason: 'NoSelector' });
  });
});

describe('selectsPod', () => {
  const rows: Array<[string, ServiceOptions, PodOptions, boolean]> = [
    ['a pod in the namespace with the labels', {}, { labels: { app: 'web', x: 'y' } }, true],
    ['a pod in another namespace', {}, { namespace: 'other' }, false],
    ['a pod with another value', {}, { labels: { app: 'db' } }, false],
    ['a pod missing a selector label', { selector: { app: 'web', tier: 'fe' } }, {}, false],
    ['any pod of the namespace for an empty selector {}', { selector: {} }, { labels: {} }, true],
    ['a pod of another namespace for an empty selector {}', { selector: {} }, { namespace: 'other' }, false],
    ['nothing for a Service without selector', { selector: null }, {}, false],
    ['nothing for a selector with a non-string value', { selector: { app: 5 as never } }, {}, false],
  ];
  for (const [what, svcOpts, podOpts, want] of rows) {
    it(`${want ? 'selects' : 'does not select'} ${what}`, () => {
      assert.equal(selectsPod(service(svcOpts), pod(podOpts)), want);
    });
  }
});

describe('planEndpoints: ports', () => {
  it('skips a named port for the pod that lacks it, and only for that pod', () => {
    const svc = service({
      ports: [
        { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
        { name: 'metrics', port: 9090, targetPort: 9090, protocol: 'TCP' },
      ],
    });
    const pods = [
      pod({ name: 'pod0', ip: '1.2.3.4' }),
      pod({ name: 'pod1', ip: '1.2.3.5', containers: [{ name: 'c' }] }),
    ];
    assert.deepEqual(written(plan({ service: svc, pods })).subsets, [
      subset([addr('1.2.3.4', 'pod0')], [port(8080, 'http')]),
      subset([addr('1.2.3.4', 'pod0'), addr('1.2.3.5', 'pod1')], [port(9090, 'metrics')]),
    ]);
  });

  it('matches a named port by protocol too, and reaches restartable init containers', () => {
    const svc = service({
      ports: [
        { name: 'dns', port: 53, targetPort: 'dns', protocol: 'UDP' },
        { name: 'proxy', port: 15001, targetPort: 'proxy', protocol: 'TCP' },
      ],
    });
    const p = pod({
      containers: [{ name: 'c', ports: [{ name: 'dns', containerPort: 5353, protocol: 'TCP' }] }],
      initContainers: [
        {
          name: 'sidecar',
          restartPolicy: 'Always',
          ports: [{ name: 'proxy', containerPort: 15002, protocol: 'TCP' }],
        },
      ],
    });
    assert.deepEqual(written(plan({ service: svc, pods: [p] })).subsets, [
      subset([addr('1.2.3.4', 'pod0')], [port(15002, 'proxy')]),
    ]);
  });

  it('TestSyncEndpointsItems: 3 pods × 2 ports (80→8080, 88→8088) → one subset, created, headless label', () => {
    const svc = service({
      namespace: 'other',
      clusterIP: '',
      ports: [
        { name: 'port0', port: 80, targetPort: 8080, protocol: 'TCP' },
        { name: 'port1', port: 88, targetPort: 8088, protocol: 'TCP' },
      ],
    });
    const pods = [0, 1, 2].map((i) => pod({ name: `pod${i}`, namespace: 'other', ip: `1.2.3.${4 + i}` }));
    const got = written(plan({ service: svc, pods }), 'create');
    assert.deepEqual(got.metadata, { name: 'foo', namespace: 'other', labels: HEADLESS });
    assert.deepEqual(got.subsets, [
      subset(
        [0, 1, 2].map((i) => addr(`1.2.3.${4 + i}`, `pod${i}`, 'other')),
        [port(8080, 'port0'), port(8088, 'port1')],
      ),
    ]);
  });

  it('TestSyncEndpointsHeadlessWithoutPort: a headless Service without ports gets a portless subset', () => {
    const svc = service({ clusterIP: 'None' });
    delete svc.spec!.ports;
    assert.deepEqual(written(plan({ service: svc, pods: [pod()] }), 'create').subsets, [
      { addresses: [addr('1.2.3.4', 'pod0')] },
    ]);
  });

  it('a headless Service with ports [] also gets a portless subset, and is not modified', () => {
    const svc = service({ clusterIP: 'None', ports: [], labels: { a: 'b' } });
    const before = structuredClone(svc);
    const current = endpoints({ subsets: [subset([addr('6.7.8.9')], [port(1000)])] });
    const got = written(plan({ service: svc, pods: [pod()], current }), 'update');
    assert.deepEqual(got.subsets, [{ addresses: [addr('1.2.3.4', 'pod0')] }]);
    assert.deepEqual(got.metadata.labels, { a: 'b', ...HEADLESS });
    assert.deepEqual(svc, before);
  });

  it('a Service with a cluster IP and no ports gets no subsets at all', () => {
    const svc = service({ ports: [] });
    assert.deepEqual(written(plan({ service: svc, pods: [pod()] }), 'create').subsets, []);
  });

  it('a legacy headless Service (clusterIP "") without ports gets nothing either: only "None" counts', () => {
    const svc = service({ clusterIP: '', ports: [] });
    assert.deepEqual(written(plan({ service: svc, pods: [pod()] }), 'create').subsets, []);
  });
});

describe('planEndpoints: addresses', () => {
  it('publishes the IP of the Service family: dual-stack pods give their IPv6, an IPv4-only pod is skipped', () => {
    const svc = service({ clusterIP: 'fd00::1', ipFamilies: ['IPv6'] });
    const pods = [
      pod({ name: 'dual', ip: ['10.0.0.5', 'fd00::5'] }),
      pod({ name: 'v6', ip: ['fd00::6'] }),
      pod({ name: 'v4', ip: ['10.0.0.7'] }),
    ];
    assert.deepEqual(
      written(plan({ service: svc, pods })).subsets?.map((s) => s.addresses?.map((a) => a.ip)),
      [['fd00::5', 'fd00::6']],
    );
  });

  it('sets the hostname of a pod whose subdomain is the Service', () => {
    const pods = [
      pod({ name: 'a', ip: '1.1.1.1', hostname: 'web-a', subdomain: 'foo', nodeName: 'n1' }),
      pod({ name: 'b', ip: '1.1.1.2', hostname: 'web-b', subdomain: 'other' }),
    ];
    assert.deepEqual(written(plan({ pods })).subsets?.[0]?.addresses, [
      addr('1.1.1.1', 'a', 'default', { hostname: 'web-a', nodeName: 'n1' }),
      addr('1.1.1.2', 'b'),
    ]);
  });

  it('TestSyncEndpointsItemsEmptySelectorSelectsAllMixed: ready and unready pods share one subset', () => {
    const svc = service({ selector: {}, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] });
    const pods = [pod({ name: 'pod0', ip: '1.2.3.4' }), pod({ name: 'pod1', ip: '1.2.3.5', ready: false })];
    assert.deepEqual(written(plan({ service: svc, pods })).subsets, [
      subset([addr('1.2.3.4', 'pod0')], [port(8080)], [addr('1.2.3.5', 'pod1')]),
    ]);
  });
});

describe('planEndpoints: create', () => {
  it('TestSyncEndpointsNewNoSubsets: no pods and no object → create with empty subsets', () => {
    const got = written(plan({}), 'create');
    assert.deepEqual(got, {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'foo', namespace: 'default' },
      subsets: [],
    });
  });

  it('creates when the current object has no resourceVersion yet, keeping its metadata', () => {
    const current = endpoints({ resourceVersion: '', annotations: { keep: 'me' } });
    const got = written(plan({ current, pods: [pod()] }), 'create');
    assert.deepEqual(got.metadata.annotations, { keep: 'me' });
    assert.equal(got.subsets?.length, 1);
  });

  it('TestSyncEndpointsItemsWithLabels: copies the Service labels, plus the headless label', () => {
    const svc = service({ clusterIP: '', labels: { foo: 'bar' } });
    assert.deepEqual(written(plan({ service: svc }), 'create').metadata.labels, { foo: 'bar', ...HEADLESS });
  });

  it('TestLastTriggerChangeTimeAnnotation: writes the trigger time it is given', () => {
    const got = written(plan({ triggerTime: T0 }), 'create');
    assert.deepEqual(got.metadata.annotations, { [LAST_CHANGE_TRIGGER_TIME_ANNOTATION]: T0 });
  });
});

describe('planEndpoints: unchanged (no write)', () => {
  const ready0 = addr('1.2.3.4', 'pod0');
  const rows: Array<[string, Partial<PlanEndpointsInput>]> = [
    [
      'TestSyncEndpointsExistingNilSubsets: no subsets and no pods',
      { service: service({ clusterIP: '' }), current: endpoints() },
    ],
    [
      'TestSyncEndpointsExistingEmptySubsets: [] subsets and no pods',
      { service: service({ clusterIP: '' }), current: endpoints({ subsets: [] }) },
    ],
    [
      'TestSyncEndpointsHeadlessServiceLabel: the headless label is already there',
      { service: service({ clusterIP: '' }), current: endpoints({ subsets: [], labels: HEADLESS }) },
    ],
    [
      'TestSyncEndpointsWithPodResourceVersionUpdateOnly: only targetRef.resourceVersion differs',
      {
        pods: [pod({ name: 'pod0', ip: '1.2.3.4' }), pod({ name: 'pod1', ip: '1.2.3.5', ready: false })],
        current: endpoints({
          subsets: [
            subset(
              [{ ...ready0, targetRef: { ...ready0.targetRef, resourceVersion: '1' } }],
              [port(8080, 'http')],
              [
                {
                  ...addr('1.2.3.5', 'pod1'),
                  targetRef: { ...addr('1.2.3.5', 'pod1').targetRef, resourceVersion: '2' },
                },
              ],
            ),
          ],
        }),
      },
    ],
    [
      'TestSyncEndpointsItemsPreexistingIdentical: equal subsets, the missing headless label alone is no reason',
      {
        service: service({ clusterIP: '' }),
        pods: [pod()],
        current: endpoints({ subsets: [subset([ready0], [port(8080, 'http')])] }),
      },
    ],
    [
      'a stale headless label on a Service that now has a cluster IP (labels compare without it)',
      { current: endpoints({ subsets: [], labels: HEADLESS }) },
    ],
    [
      'a Service that carries the headless label itself (compared without it on both sides)',
      {
        service: service({ labels: { a: 'b', ...HEADLESS } }),
        current: endpoints({ subsets: [], labels: { a: 'b' } }),
      },
    ],
    [
      'equal labels and subsets; the trigger time alone is no reason',
      {
        service: service({ labels: { foo: 'bar' } }),
        pods: [pod()],
        triggerTime: '2019-01-01T00:00:00Z',
        current: endpoints({
          labels: { foo: 'bar' },
          annotations: { [LAST_CHANGE_TRIGGER_TIME_ANNOTATION]: T0, other: 'x' },
          subsets: [subset([ready0], [port(8080, 'http')])],
        }),
      },
    ],
    [
      'subsets and ports in another order than ours',
      {
        service: service({
          ports: [
            { name: 'a', port: 1, protocol: 'TCP' },
            { name: 'b', port: 2, protocol: 'TCP' },
          ],
        }),
        pods: [pod({ name: 'pod0', ip: '1.2.3.4' }), pod({ name: 'pod1', ip: '1.2.3.5', ready: false })],
        current: endpoints({
          subsets: [subset([ready0], [port(2, 'b'), port(1, 'a')], [addr('1.2.3.5', 'pod1')])],
        }),
      },
    ],
  ];
  for (const [what, input] of rows) {
    it(what, () => {
      assert.deepEqual(plan(input), { kind: 'unchanged' });
    });
  }
});

describe('planEndpoints: update', () => {
  const stale = [subset([addr('6.7.8.9')], [port(1000)])];

  it('TestSyncEndpointsItemsPreexisting: replaces stale subsets and keeps the metadata of the current object', () => {
    const current = endpoints({ subsets: stale, annotations: { keep: 'me' } });
    const got = written(plan({ current, pods: [pod()] }), 'update');
    assert.deepEqual(got.metadata, {
      name: 'foo',
      namespace: 'default',
      uid: 'ep-uid',
      resourceVersion: '1',
      creationTimestamp: '2020-01-01T00:00:00Z',
      annotations: { keep: 'me' },
    });
    assert.deepEqual(got.subsets, [subset([addr('1.2.3.4', 'pod0')], [port(8080, 'http')])]);
  });

  for (const protocol of ['TCP', 'UDP', 'SCTP']) {
    it(`TestSyncEndpointsProtocol${protocol}: writes the pod with port 8080/${protocol} and the headless label`, () => {
      const svc = service({
        namespace: 'other',
        selector: {},
        clusterIP: '',
        ports: [{ port: 80, targetPort: 8080, protocol }],
      });
      const current = endpoints({
        namespace: 'other',
        subsets: [subset([addr('6.7.8.9')], [port(1000, undefined, protocol)])],
      });
      const got = written(plan({ service: svc, current, pods: [pod({ namespace: 'other' })] }), 'update');
      assert.deepEqual(got.metadata.labels, HEADLESS);
      assert.deepEqual(got.subsets, [
        subset([addr('1.2.3.4', 'pod0', 'other')], [port(8080, undefined, protocol)]),
      ]);
    });
  }

  const labelRows: Array<
    [string, Record<string, string> | undefined, ServiceOptions, Record<string, string> | undefined]
  > = [
    [
      'TestSyncEndpointsItemsPreexistingLabelsChange: stale labels are replaced',
      { foo: 'bar' },
      { clusterIP: '', labels: { baz: 'blah' } },
      { baz: 'blah', ...HEADLESS },
    ],
    ['a changed label value is written', { foo: 'bar' }, { labels: { foo: 'baz' } }, { foo: 'baz' }],
    [
      'labels the Service dropped are removed',
      { foo: 'bar', gone: 'x' },
      { labels: { foo: 'bar' } },
      { foo: 'bar' },
    ],
    [
      'the headless label is added for clusterIP "None"',
      undefined,
      { clusterIP: 'None', labels: { a: 'b' } },
      { a: 'b', ...HEADLESS },
    ],
    [
      'the headless label is removed for a Service with a cluster IP',
      { ...HEADLESS, a: 'b' },
      { labels: { a: 'c' } },
      { a: 'c' },
    ],
    [
      'exclude terminal pods: labels the Service lacks are dropped',
      { foo: 'bar' },
      { clusterIP: '' },
      HEADLESS,
    ],
    [
      'a headless label on the Service itself is not copied when it has a cluster IP',
      { a: 'b' },
      { labels: { a: 'c', ...HEADLESS } },
      { a: 'c' },
    ],
  ];
  for (const [what, currentLabels, svcOpts, want] of labelRows) {
    it(what, () => {
      const current = endpoints({ subsets: [], ...(currentLabels ? { labels: currentLabels } : {}) });
      const got = written(plan({ service: service(svcOpts), current }), 'update');
      assert.deepEqual(got.metadata.labels, want);
      assert.deepEqual(got.subsets, []);
    });
  }

  it('exclude terminal pods: Failed and Succeeded pods leave the subsets empty', () => {
    const pods = [
      pod({ name: 'a', ip: '1.1.1.1', phase: 'Failed', ready: false }),
      pod({ name: 'b', ip: '1.1.1.2', phase: 'Succeeded', ready: false }),
    ];
    const got = written(
      plan({ service: service({ clusterIP: '' }), pods, current: endpoints({ subsets: stale }) }),
      'update',
    );
    assert.deepEqual(got.subsets, []);
  });

  it('TestLastTriggerChangeTimeAnnotation_AnnotationOverridden: replaces an older trigger time', () => {
    const current = endpoints({
      subsets: stale,
      annotations: { [LAST_CHANGE_TRIGGER_TIME_ANNOTATION]: '2017-12-31T23:00:00Z' },
    });
    const got = written(plan({ current, triggerTime: T0 }), 'update');
    assert.deepEqual(got.metadata.annotations, { [LAST_CHANGE_TRIGGER_TIME_ANNOTATION]: T0 });
  });

  it('TestLastTriggerChangeTimeAnnotation_AnnotationCleared: removes it when there is no trigger time', () => {
    const current = endpoints({
      subsets: stale,
      annotations: { [LAST_CHANGE_TRIGGER_TIME_ANNOTATION]: T0, keep: 'x' },
    });
    assert.deepEqual(written(plan({ current }), 'update').metadata.annotations, { keep: 'x' });
  });

  it('removes an over-capacity annotation that no longer applies, even when nothing else changed', () => {
    const current = endpoints({ subsets: [], annotations: { [OVER_CAPACITY_ANNOTATION]: 'warning' } });
    const got = written(plan({ current }), 'update');
    assert.equal(got.metadata.annotations, undefined);
  });

  it('shares no objects with the current object', () => {
    const current = endpoints({ subsets: stale, annotations: { keep: 'me' }, labels: { a: 'b' } });
    current.metadata.ownerReferences = [{ apiVersion: 'v1', kind: 'Service', name: 'foo', uid: 'u' }];
    const before = structuredClone(current);
    const got = written(plan({ current, pods: [pod()] }), 'update');
    got.metadata.ownerReferences![0]!.name = 'changed';
    got.metadata.annotations!['keep'] = 'changed';
    got.subsets![0]!.addresses![0]!.ip = '9.9.9.9';
    assert.deepEqual(current, before);
  });
});

describe('planEndpoints: the 1,000-address cap', () => {
  const readyPods = (n: number, from = 0, o: PodOptions = {}): Pod[] =>
    Array.from({ length: n }, (_, i) => pod({ ...o, name: `pod${from + i}`, ip: nthIP(from + i) }));
  const count = (e: Endpoints): [number, number] => [
    (e.subsets ?? []).reduce((n, s) => n + (s.addresses?.length ?? 0), 0),
    (e.subsets ?? []).reduce((n, s) => n + (s.notReadyAddresses?.length ?? 0), 0),
  ];

  it('250 pods: not truncated, no annotation', () => {
    const p = plan({ pods: readyPods(250) });
    const got = written(p, 'create');
    assert.deepEqual(count(got), [250, 0]);
    assert.equal(got.metadata.annotations, undefined);
    assert.equal(p.kind === 'create' && p.truncated, false);
  });

  it('1,200 ready pods: the first 1,000 addresses by IP are kept and the object is marked truncated', () => {
    const p = plan({ pods: readyPods(1200) });
    const got = written(p, 'create');
    assert.deepEqual(count(got), [1000, 0]);
    assert.deepEqual(got.metadata.annotations, { [OVER_CAPACITY_ANNOTATION]: 'truncated' });
    const all = desiredSubsets(service(), readyPods(1200))[0]!.addresses!;
    assert.deepEqual(got.subsets![0]!.addresses, all.slice(0, 1000));
  });

  it('600 ready + 600 not ready: all ready kept, 400 not ready', () => {
    const pods = [...readyPods(600), ...readyPods(600, 600, { ready: false })];
    assert.deepEqual(count(written(plan({ pods }))), [600, 400]);
  });

  it('1,001 ready + 50 not ready: not-ready all dropped', () => {
    const pods = [...readyPods(1001), ...readyPods(50, 1001, { ready: false })];
    assert.deepEqual(count(written(plan({ pods }))), [1000, 0]);
  });

  // TestSyncServiceOverCapacity: [start annotation, existing addresses, ready pods, not-ready pods] →
  // [ready, not ready, annotation] of the object after the sync (written, or left as it was).
  const rows: Array<[string | undefined, number, number, number, number, number, string | undefined]> = [
    [undefined, 0, 0, 0, 0, 0, undefined],
    [undefined, 999, 997, 4, 997, 3, 'truncated'],
    [undefined, 999, 1000, 10, 1000, 0, 'truncated'],
    ['truncated', 999, 999, 0, 999, 0, undefined],
    ['warning', 1000, 1000, 0, 1000, 0, undefined],
    ['warning', 1001, 1001, 0, 1000, 0, 'truncated'],
    ['truncated', 1000, 1000, 0, 1000, 0, undefined],
    ['invalid', 1001, 1001, 0, 1000, 0, 'truncated'],
  ];
  for (const [start, existing, nReady, nNotReady, wantReady, wantNotReady, wantAnnotation] of rows) {
    it(`annotation ${start ?? 'none'}, ${existing} existing, ${nReady} ready + ${nNotReady} not ready → ${wantReady} + ${wantNotReady}, annotation ${wantAnnotation ?? 'absent'}`, () => {
      const current = endpoints({
        subsets:
          existing === 0
            ? []
            : [
                subset(
                  Array.from({ length: existing }, (_, i) => addr(nthIP(100000 + i))),
                  [port(8080, 'http')],
                ),
              ],
        ...(start === undefined ? {} : { annotations: { [OVER_CAPACITY_ANNOTATION]: start } }),
      });
      const pods = [...readyPods(nReady), ...readyPods(nNotReady, nReady, { ready: false })];
      const p = plan({ current, pods });
      const after = p.kind === 'unchanged' ? current : written(p, 'update');
      assert.deepEqual(count(after), [wantReady, wantNotReady]);
      assert.equal(after.metadata.annotations?.[OVER_CAPACITY_ANNOTATION], wantAnnotation);
    });
  }

  it('does not rewrite an object already truncated to exactly what it would write (upstream would)', () => {
    const first = written(plan({ pods: readyPods(1200) }));
    const current: Endpoints = { ...first, metadata: { ...first.metadata, resourceVersion: '5' } };
    assert.deepEqual(plan({ current, pods: readyPods(1200) }), { kind: 'unchanged' });
    // …but does when the truncated content would change, or the annotation is not exactly "truncated".
    assert.equal(plan({ current, pods: readyPods(1200, 1) }).kind, 'update');
    for (const annotations of [{}, { [OVER_CAPACITY_ANNOTATION]: 'warning' }]) {
      const marked: Endpoints = { ...current, metadata: { ...current.metadata, annotations } };
      const again = written(plan({ current: marked, pods: readyPods(1200) }), 'update');
      assert.equal(again.metadata.annotations?.[OVER_CAPACITY_ANNOTATION], 'truncated');
    }
  });
});
