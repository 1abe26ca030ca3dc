import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  NO_SCHEDULE_KEYS,
  desiredNoScheduleKeys,
  noExecuteAction,
  noScheduleTaintsUpdate,
  withNoExecuteTaint,
  withoutNoExecuteTaints,
} from './taints.js';
import {
  TAINT_NOT_READY,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
  rfc3339,
  type Node,
  type NodeCondition,
  type Taint,
} from './types.js';

const T0 = Date.parse('2024-01-01T00:00:00Z');

const node = (o: { conditions?: NodeCondition[]; taints?: Taint[]; unschedulable?: boolean }): Node => ({
  metadata: { name: 'n1' },
  spec: {
    ...(o.taints === undefined ? {} : { taints: o.taints }),
    ...(o.unschedulable === undefined ? {} : { unschedulable: o.unschedulable }),
  },
  status: { conditions: o.conditions ?? [] },
});
const ready = (status: string): NodeCondition => ({ type: 'Ready', status });
const taint = (key: string, effect = 'NoSchedule'): Taint => ({ key, effect });
const keysOf = (ts: readonly Taint[]): string[] => ts.map((t) => `${t.key}:${t.effect}`);

describe('desiredNoScheduleKeys', () => {
  const cases: [string, NodeCondition[], boolean, string[]][] = [
    ['Ready True', [ready('True')], false, []],
    ['Ready False', [ready('False')], false, [TAINT_NOT_READY]],
    ['Ready Unknown', [ready('Unknown')], false, [TAINT_UNREACHABLE]],
    ['no Ready condition', [], false, []],
    [
      'pressures True',
      [
        ready('True'),
        { type: 'MemoryPressure', status: 'True' },
        { type: 'DiskPressure', status: 'True' },
        { type: 'PIDPressure', status: 'True' },
        { type: 'NetworkUnavailable', status: 'True' },
      ],
      false,
      [
        'node.kubernetes.io/memory-pressure',
        'node.kubernetes.io/disk-pressure',
        'node.kubernetes.io/pid-pressure',
        'node.kubernetes.io/network-unavailable',
      ],
    ],
    ['pressure Unknown is no taint', [{ type: 'MemoryPressure', status: 'Unknown' }], false, []],
    ['unschedulable', [ready('True')], true, [TAINT_UNSCHEDULABLE]],
  ];
  for (const [name, conditions, unschedulable, want] of cases) {
    it(`${name} → ${want.join(', ') || 'none'}`, () => {
      assert.deepEqual(desiredNoScheduleKeys(node({ conditions, unschedulable })), want);
    });
  }
});

describe('noScheduleTaintsUpdate', () => {
  it('adds unreachable when Ready turns Unknown, keeping foreign taints in place', () => {
    const n = node({ conditions: [ready('Unknown')], taints: [taint('dedicated'), taint(TAINT_NOT_READY)] });
    assert.deepEqual(keysOf(noScheduleTaintsUpdate(n)!), [
      'dedicated:NoSchedule',
      `${TAINT_UNREACHABLE}:NoSchedule`,
    ]);
  });

  it('removes them on recovery, and leaves NoExecute taints to the health pass', () => {
    const n = node({
      conditions: [ready('True')],
      taints: [taint(TAINT_UNREACHABLE), taint(TAINT_UNREACHABLE, 'NoExecute')],
    });
    assert.deepEqual(keysOf(noScheduleTaintsUpdate(n)!), [`${TAINT_UNREACHABLE}:NoExecute`]);
  });

  it('is undefined when the taints are right already', () => {
    assert.equal(noScheduleTaintsUpdate(node({ conditions: [ready('True')] })), undefined);
    assert.equal(
      noScheduleTaintsUpdate(node({ conditions: [ready('False')], taints: [taint(TAINT_NOT_READY)] })),
      undefined,
    );
  });

  const statuses = fc.constantFrom('True', 'False', 'Unknown', undefined);
  const arbNode = fc
    .record({
      ready: statuses,
      memory: statuses,
      disk: statuses,
      pid: statuses,
      network: statuses,
      unschedulable: fc.boolean(),
      taints: fc.array(
        fc.record({
          key: fc.constantFrom(...NO_SCHEDULE_KEYS, 'dedicated', 'example.com/x'),
          effect: fc.constantFrom('NoSchedule', 'NoExecute', 'PreferNoSchedule'),
        }),
        { maxLength: 8 },
      ),
    })
    .map((r) => {
      const conditions: NodeCondition[] = [];
      const add = (type: string, s: string | undefined): void => {
        if (s !== undefined) conditions.push({ type, status: s });
      };
      add('Ready', r.ready);
      add('MemoryPressure', r.memory);
      add('DiskPressure', r.disk);
      add('PIDPressure', r.pid);
      add('NetworkUnavailable', r.network);
      return node({ conditions, taints: r.taints, unschedulable: r.unschedulable });
    });

  it('property: the controller-owned NoSchedule taints are exactly those the state implies; others are untouched', () => {
    fc.assert(
      fc.property(arbNode, (n) => {
        const after = noScheduleTaintsUpdate(n) ?? n.spec!.taints!;
        const owned = (t: Taint): boolean => t.effect === 'NoSchedule' && NO_SCHEDULE_KEYS.includes(t.key);
        assert.deepEqual(
          [...new Set(after.filter(owned).map((t) => t.key))].sort(),
          desiredNoScheduleKeys(n).sort(),
        );
        assert.deepEqual(
          after.filter((t) => !owned(t)),
          n.spec!.taints!.filter((t) => !owned(t)),
        );
        // Idempotent: once written, nothing more to do.
        assert.equal(noScheduleTaintsUpdate({ ...n, spec: { ...n.spec, taints: after } }), undefined);
      }),
    );
  });
});

describe('NoExecute', () => {
  const cases: [string, Taint[], string, string][] = [
    ['Unknown, untainted → queue unreachable', [], 'Unknown', 'queue:' + TAINT_UNREACHABLE],
    ['False, untainted → queue not-ready', [], 'False', 'queue:' + TAINT_NOT_READY],
    [
      'Unknown with not-ready → swap now',
      [taint(TAINT_NOT_READY, 'NoExecute')],
      'Unknown',
      'swap:' + TAINT_UNREACHABLE,
    ],
    [
      'False with unreachable → swap now',
      [taint(TAINT_UNREACHABLE, 'NoExecute')],
      'False',
      'swap:' + TAINT_NOT_READY,
    ],
    ['Unknown with unreachable → none', [taint(TAINT_UNREACHABLE, 'NoExecute')], 'Unknown', 'none'],
    ['True with unreachable → remove', [taint(TAINT_UNREACHABLE, 'NoExecute')], 'True', 'remove'],
    ['True with only NoSchedule → cancel', [taint(TAINT_UNREACHABLE)], 'True', 'cancel'],
  ];
  for (const [name, taints, status, want] of cases) {
    it(name, () => {
      const a = noExecuteAction(node({ taints }), status);
      assert.equal('key' in a ? `${a.kind}:${a.key}` : a.kind, want);
    });
  }

  it('withNoExecuteTaint stamps timeAdded and drops the opposite taint', () => {
    const n = node({ taints: [taint('dedicated'), taint(TAINT_NOT_READY, 'NoExecute')] });
    assert.deepEqual(withNoExecuteTaint(n, TAINT_UNREACHABLE, T0), [
      taint('dedicated'),
      { key: TAINT_UNREACHABLE, effect: 'NoExecute', timeAdded: rfc3339(T0) },
    ]);
    const done = node({ taints: [taint(TAINT_UNREACHABLE, 'NoExecute')] });
    assert.equal(withNoExecuteTaint(done, TAINT_UNREACHABLE, T0), undefined);
  });

  it('recovery: a Ready node ends with none of the controller taints', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            key: fc.constantFrom(TAINT_NOT_READY, TAINT_UNREACHABLE, 'dedicated'),
            effect: fc.constantFrom('NoSchedule', 'NoExecute'),
          }),
          { maxLength: 6 },
        ),
        (taints) => {
          let n = node({ conditions: [ready('True')], taints });
          const ns = noScheduleTaintsUpdate(n);
          if (ns !== undefined) n = { ...n, spec: { ...n.spec, taints: ns } };
          const action = noExecuteAction(n, 'True');
          if (action.kind === 'remove') n = { ...n, spec: { ...n.spec, taints: withoutNoExecuteTaints(n)! } };
          else assert.equal(action.kind, 'cancel');
          assert.deepEqual(
            n.spec!.taints!.filter((t) => t.key !== 'dedicated'),
            [],
          );
          assert.deepEqual(
            n.spec!.taints,
            taints.filter((t) => t.key === 'dedicated'),
          );
        },
      ),
    );
  });
});
