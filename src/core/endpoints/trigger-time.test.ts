import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pod, service } from './testing/builders.js';
import { formatRFC3339Nano, serviceKey, TriggerTimeTracker } from './trigger-time.js';

const T0 = '2018-01-01T00:00:00Z';
const T1 = '2018-01-01T00:00:01Z';
const T2 = '2018-01-01T00:00:02Z';
const T3 = '2018-01-01T00:00:03Z';

/**
 * One sync: the Service's creationTimestamp, its pods (name → Ready lastTransitionTime, null: none); `failed`:
 * its write did not land, so the computation is not committed.
 */
type Step = { created?: string; pods: Record<string, string | null>; want: string; failed?: true } | 'forget';

function run(steps: Step[]): string[] {
  const tracker = new TriggerTimeTracker();
  const out: string[] = [];
  for (const step of steps) {
    if (step === 'forget') {
      tracker.forget('default/foo');
      continue;
    }
    const svc = service(step.created === undefined ? {} : { creationTimestamp: step.created });
    const pods = Object.entries(step.pods).map(([name, at]) =>
      pod(at === null ? { name, noReadyCondition: true } : { name, readyAt: at }),
    );
    const trigger = tracker.computeEndpointLastChangeTriggerTime(svc, pods);
    out.push(trigger.value);
    if (step.failed !== true) trigger.commit();
  }
  return out;
}

describe('TriggerTimeTracker.computeEndpointLastChangeTriggerTime', () => {
  const rows: Array<[string, Step[]]> = [
    [
      'the first sync returns the Service creationTimestamp, even when pods changed later',
      [{ created: T0, pods: { a: T2 }, want: T0 }],
    ],
    ['the first sync of a Service without creationTimestamp returns ""', [{ pods: { a: T1 }, want: '' }]],
    [
      'a later sync where nothing moved returns ""',
      [
        { created: T0, pods: { a: T1 }, want: T0 },
        { created: T0, pods: { a: T1 }, want: '' },
      ],
    ],
    [
      'a pod whose Ready transition advanced gives its time',
      [
        { created: T0, pods: { a: T1, b: T1 }, want: T0 },
        { created: T0, pods: { a: T1, b: T3 }, want: T3 },
      ],
    ],
    [
      'several pods advanced: the earliest of them',
      [
        { created: T0, pods: { a: T0, b: T0, c: T0 }, want: T0 },
        { created: T0, pods: { a: T3, b: T2, c: T0 }, want: T2 },
      ],
    ],
    [
      'a pod not seen before counts as advanced',
      [
        { created: T0, pods: { a: T1 }, want: T0 },
        { created: T0, pods: { a: T1, b: T2 }, want: T2 },
      ],
    ],
    [
      'a pod that went away changes nothing',
      [
        { created: T0, pods: { a: T1, b: T2 }, want: T0 },
        { created: T0, pods: { a: T1 }, want: '' },
      ],
    ],
    [
      'a pod whose time went backwards does not count',
      [
        { created: T0, pods: { a: T2 }, want: T0 },
        { created: T0, pods: { a: T1 }, want: '' },
      ],
    ],
    [
      'a pod that lost its Ready condition and got it back counts again',
      [
        { created: T0, pods: { a: T1 }, want: T0 },
        { created: T0, pods: { a: null }, want: '' },
        { created: T0, pods: { a: T1 }, want: T1 },
      ],
    ],
    [
      'a later Service creationTimestamp counts, with the pods',
      [
        { created: T0, pods: { a: T3 }, want: T0 },
        { created: T2, pods: { a: T3 }, want: T2 },
        { created: T2, pods: { a: T3 }, want: '' },
      ],
    ],
    [
      'an earlier Service creationTimestamp (a recreated object restored from backup) does not count',
      [
        { created: T2, pods: {}, want: T2 },
        { created: T1, pods: {}, want: '' },
      ],
    ],
    [
      'state is replaced on every sync: each advance is reported once',
      [
        { created: T0, pods: { a: T0 }, want: T0 },
        { created: T0, pods: { a: T1 }, want: T1 },
        { created: T0, pods: { a: T1 }, want: '' },
        { created: T0, pods: { a: T2 }, want: T2 },
      ],
    ],
    [
      'forget() makes the next sync a first sync again',
      [{ created: T0, pods: { a: T1 }, want: T0 }, 'forget', { created: T0, pods: { a: T1 }, want: T0 }],
    ],
    [
      "Go's zero time is no time",
      [
        { created: '0001-01-01T00:00:00Z', pods: { a: '0001-01-01T00:00:00Z' }, want: '' },
        { created: '0001-01-01T00:00:00Z', pods: { a: '0001-01-01T00:00:00Z' }, want: '' },
      ],
    ],
    [
      'a sync whose write failed is retried with the same time (kube would retry without one)',
      [
        { created: T0, pods: { a: T1 }, want: T0 },
        { created: T0, pods: { a: T2 }, want: T2, failed: true },
        { created: T0, pods: { a: T2 }, want: T2 },
        { created: T0, pods: { a: T2 }, want: '' },
      ],
    ],
    [
      "a failed first sync: the retry is still the first, and gives the Service's time",
      [
        { created: T0, pods: { a: T1 }, want: T0, failed: true },
        { created: T0, pods: { a: T1 }, want: T0 },
        { created: T0, pods: { a: T1 }, want: '' },
      ],
    ],
    [
      'a failed sync, then another pod changed: the earlier of the two, neither written yet',
      [
        { created: T0, pods: { a: T0, b: T0 }, want: T0 },
        { created: T0, pods: { a: T1, b: T0 }, want: T1, failed: true },
        { created: T0, pods: { a: T1, b: T3 }, want: T1 },
      ],
    ],
  ];
  for (const [what, steps] of rows) {
    it(what, () => {
      const want = steps.flatMap((s) => (s === 'forget' ? [] : [s.want]));
      assert.deepEqual(run(steps), want);
    });
  }

  it('keeps Services apart by namespace/name', () => {
    const tracker = new TriggerTimeTracker();
    const a = service({ namespace: 'a', creationTimestamp: T0 });
    const b = service({ namespace: 'b', creationTimestamp: T1 });
    const sync = (svc: typeof a): string => {
      const trigger = tracker.computeEndpointLastChangeTriggerTime(svc, []);
      trigger.commit();
      return trigger.value;
    };
    assert.equal(sync(a), T0);
    assert.equal(sync(b), T1);
    assert.equal(sync(a), '');
    tracker.forget(serviceKey(b));
    assert.equal(tracker.has('a/foo'), true);
    assert.equal(tracker.has('b/foo'), false);
  });

  it('writes the result in UTC', () => {
    const tracker = new TriggerTimeTracker();
    const svc = service({ creationTimestamp: '2018-01-01T02:00:00+02:00' });
    assert.equal(tracker.computeEndpointLastChangeTriggerTime(svc, []).value, T0);
  });

  it('a stale commit does not undo a newer one', () => {
    const tracker = new TriggerTimeTracker();
    const svc = service({ creationTimestamp: T0 });
    const older = tracker.computeEndpointLastChangeTriggerTime(svc, [pod({ name: 'a', readyAt: T1 })]);
    const newer = tracker.computeEndpointLastChangeTriggerTime(svc, [pod({ name: 'a', readyAt: T2 })]);
    newer.commit();
    older.commit();
    const next = tracker.computeEndpointLastChangeTriggerTime(svc, [pod({ name: 'a', readyAt: T2 })]);
    assert.equal(next.value, '', 'a at T2 was observed; the older commit did not put T1 back');
  });
});

describe('formatRFC3339Nano', () => {
  const rows: Array<[number, string]> = [
    [Date.UTC(2018, 0, 1), '2018-01-01T00:00:00Z'],
    [Date.UTC(2018, 0, 1, 12, 30, 5, 500), '2018-01-01T12:30:05.5Z'],
    [Date.UTC(2018, 0, 1, 12, 30, 5, 120), '2018-01-01T12:30:05.12Z'],
    [Date.UTC(2018, 0, 1, 12, 30, 5, 7), '2018-01-01T12:30:05.007Z'],
    [Date.UTC(1969, 11, 31, 23, 59, 59, 250), '1969-12-31T23:59:59.25Z'],
  ];
  for (const [ms, want] of rows) {
    it(`prints ${want} as Go's RFC3339Nano does (fraction only when non-zero, no trailing zeros)`, () => {
      assert.equal(formatRFC3339Nano(ms), want);
    });
  }
});
