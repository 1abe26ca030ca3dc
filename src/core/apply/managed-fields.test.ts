import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { field, FieldSet } from './fieldset.js';
import {
  capUpdateManagers,
  decodeManagedFields,
  decodeManagedFieldsOrEmpty,
  encodeManagedFields,
  identityKey,
  isResetManagedFields,
  ManagedFieldsError,
  type Managed,
  type ManagedFields,
} from './managed-fields.js';

const set = (...names: string[]): FieldSet => FieldSet.fromPaths(names.map((n) => [field(n)]));
const entry = (m: Partial<Managed> & Pick<Managed, 'manager' | 'operation'>): Managed => ({
  apiVersion: 'v1',
  fields: set('x'),
  ...m,
});
const managedOf = (...ms: Managed[]): ManagedFields => new Map(ms.map((m) => [identityKey(m), m]));

describe('manager identity', () => {
  it('is the JSON of manager, operation, the apiVersion of an Update, and the subresource', () => {
    assert.equal(
      identityKey({ manager: 'kubectl', operation: 'Apply', apiVersion: 'v1' }),
      '{"manager":"kubectl","operation":"Apply"}',
    );
    assert.equal(
      identityKey({ manager: 'k', operation: 'Update', apiVersion: 'apps/v1', subresource: 'status' }),
      '{"manager":"k","operation":"Update","apiVersion":"apps/v1","subresource":"status"}',
    );
  });
});

describe('decodeManagedFields', () => {
  const good = {
    manager: 'kubectl',
    operation: 'Apply',
    apiVersion: 'v1',
    time: '2024-01-01T00:00:00Z',
    fieldsType: 'FieldsV1',
    fieldsV1: { 'f:spec': { 'f:replicas': {} } },
  };

  it('decodes entries into field sets per manager', () => {
    const m = decodeManagedFields([
      good,
      { ...good, operation: 'Update', manager: 'edit', fieldsV1: undefined },
    ]);
    assert.equal(m.size, 2);
    const apply = m.get('{"manager":"kubectl","operation":"Apply"}');
    assert.deepEqual(apply?.fields.toStrings(), ['.spec.replicas']);
    assert.equal(apply?.time, '2024-01-01T00:00:00Z');
    assert.ok(m.get('{"manager":"edit","operation":"Update","apiVersion":"v1"}')?.fields.isEmpty());
    assert.equal(decodeManagedFields(undefined).size, 0);
    assert.equal(decodeManagedFields(null).size, 0);
  });

  it('a later entry with the same identity replaces an earlier one', () => {
    const m = decodeManagedFields([good, { ...good, fieldsV1: { 'f:a': {} } }]);
    assert.deepEqual(
      [...m.values()].map((x) => x.fields.toStrings()),
      [['.a']],
    );
  });

  it('refuses entries kube-apiserver refuses, with its messages', () => {
    const cases: Array<[unknown, string | RegExp]> = [
      [[{ ...good, operation: 'Patch' }], 'operation must be `Apply` or `Update`'],
      [[{ ...good, apiVersion: '' }], 'apiVersion must not be empty'],
      [[{ ...good, fieldsType: undefined }], 'missing fieldsType in managed fields entry 0'],
      [
        [good, { ...good, fieldsType: 'FieldsV2' }],
        'invalid fieldsType "FieldsV2" in managed fields entry 1',
      ],
      [[{ ...good, fieldsV1: { 'q:x': {} } }], /managed fields entry 0: unknown FieldsV1 key/],
      [{}, 'managedFields must be a list'],
    ];
    for (const [input, message] of cases) {
      assert.throws(
        () => decodeManagedFields(input),
        (e: unknown) => {
          assert.ok(e instanceof ManagedFieldsError);
          if (typeof message === 'string') assert.equal(e.message, message);
          else assert.match(e.message, message);
          return true;
        },
      );
      assert.equal(decodeManagedFieldsOrEmpty(input).size, 0);
    }
  });
});

describe('isResetManagedFields', () => {
  it('is true for [] and [{}] only', () => {
    assert.equal(isResetManagedFields([]), true);
    assert.equal(isResetManagedFields([{}]), true);
    assert.equal(isResetManagedFields([{ manager: '' }]), true);
    assert.equal(isResetManagedFields(undefined), false);
    assert.equal(isResetManagedFields(null), false);
    assert.equal(isResetManagedFields([{}, {}]), false);
    assert.equal(isResetManagedFields([{ manager: 'x' }]), false);
  });
});

describe('encodeManagedFields', () => {
  it('sorts Apply before Update, then oldest first, then by manager; drops empty sets', () => {
    const out = encodeManagedFields(
      managedOf(
        entry({ manager: 'z', operation: 'Update', time: '2024-01-01T00:00:00Z' }),
        entry({ manager: 'b', operation: 'Apply', time: '2024-01-02T00:00:00Z' }),
        entry({ manager: 'a', operation: 'Apply', time: '2024-01-02T00:00:00Z' }),
        entry({ manager: 'c', operation: 'Apply', time: '2024-01-01T00:00:00Z' }),
        entry({ manager: 'empty', operation: 'Apply', fields: FieldSet.empty() }),
        entry({ manager: 'y', operation: 'Update', time: '2024-01-01T00:00:00Z', subresource: 'status' }),
      ),
    );
    assert.deepEqual(
      out?.map((e) => `${e.operation} ${e.manager}`),
      ['Apply c', 'Apply a', 'Apply b', 'Update y', 'Update z'],
    );
    assert.deepEqual(out?.[3], {
      manager: 'y',
      operation: 'Update',
      apiVersion: 'v1',
      time: '2024-01-01T00:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:x': {} },
      subresource: 'status',
    });
  });

  it('is undefined when nobody owns anything', () => {
    assert.equal(encodeManagedFields(new Map()), undefined);
    assert.equal(
      encodeManagedFields(managedOf(entry({ manager: 'a', operation: 'Apply', fields: FieldSet.empty() }))),
      undefined,
    );
  });
});

describe('capUpdateManagers', () => {
  it('folds the oldest Update entries per apiVersion, leaving Apply entries alone', () => {
    const ms: Managed[] = [entry({ manager: 'applier', operation: 'Apply', time: '2024-01-01T00:00:00Z' })];
    for (let i = 0; i < 6; i++) {
      const t = `2024-01-01T00:0${i}:00Z`;
      ms.push(
        entry({ manager: `v1-${i}`, operation: 'Update', apiVersion: 'v1', time: t, fields: set(`a${i}`) }),
      );
      ms.push(
        entry({ manager: `v2-${i}`, operation: 'Update', apiVersion: 'v2', time: t, fields: set(`b${i}`) }),
      );
    }
    const capped = capUpdateManagers(managedOf(...ms), 10);
    const updates = [...capped.values()].filter((m) => m.operation === 'Update');
    assert.equal(updates.length, 10);
    assert.ok([...capped.values()].some((m) => m.manager === 'applier'));
    const v1 = capped.get('{"manager":"ancient-changes","operation":"Update","apiVersion":"v1"}');
    const v2 = capped.get('{"manager":"ancient-changes","operation":"Update","apiVersion":"v2"}');
    assert.deepEqual(v1?.fields.toStrings(), ['.a0', '.a1']);
    assert.deepEqual(v2?.fields.toStrings(), ['.b0', '.b1']);
    assert.equal(v1?.time, '2024-01-01T00:01:00Z');
    assert.equal(capped.has(identityKey(ms[1] as Managed)), false);
  });

  it('does nothing at or under the cap', () => {
    const m = managedOf(
      entry({ manager: 'a', operation: 'Update' }),
      entry({ manager: 'b', operation: 'Update' }),
    );
    assert.equal(capUpdateManagers(m, 2), m);
  });
});
