import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FieldPath, fieldErrorString, type FieldError } from '../field-errors.js';
import { MAX_SERVICE_TOPOLOGY_KEYS, TOPOLOGY_KEY_ANY, validateTopologyKeys } from './topology-keys.js';

const PATH = FieldPath.root('spec', 'topologyKeys');
const eg = (...xs: string[]): string => `e.g. '${xs.join("',  or '")}', `;
const NAME_RE = "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'";
const NAME_PART_MSG = `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (${eg('MyName', 'my.name', '123-abc')}${NAME_RE})`;
const QUALIFIED_MSG = `a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (${eg('MyName', 'my.name', '123-abc')}${NAME_RE}) with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`;
const LAST = '"*" must be the last value specified';

interface Case {
  readonly name: string;
  readonly keys: readonly string[];
  readonly etp?: string;
  readonly want: readonly FieldError[];
}

const seventeen = Array.from({ length: 17 }, (_, i) => `example.com/k${i}`);

const cases: Case[] = [
  { name: 'empty list', keys: [], want: [] },
  { name: 'empty list with externalTrafficPolicy Local', keys: [], etp: 'Local', want: [] },
  {
    name: 'hostname, zone, then any',
    keys: ['kubernetes.io/hostname', 'topology.kubernetes.io/zone', '*'],
    want: [],
  },
  { name: 'only any', keys: ['*'], want: [] },
  { name: 'sixteen keys', keys: seventeen.slice(0, 16), want: [] },
  { name: 'externalTrafficPolicy Cluster', keys: ['kubernetes.io/hostname'], etp: 'Cluster', want: [] },
  {
    name: 'any not last',
    keys: ['*', 'kubernetes.io/hostname'],
    want: [{ type: 'FieldValueInvalid', field: 'spec.topologyKeys[0]', badValue: '*', detail: LAST }],
  },
  {
    name: 'duplicate key',
    keys: ['kubernetes.io/hostname', 'kubernetes.io/hostname'],
    want: [
      {
        type: 'FieldValueDuplicate',
        field: 'spec.topologyKeys[1]',
        badValue: 'kubernetes.io/hostname',
        detail: '',
      },
    ],
  },
  {
    name: 'duplicate any, last one last: only the duplicate and the first not last',
    keys: ['*', '*'],
    want: [
      { type: 'FieldValueInvalid', field: 'spec.topologyKeys[0]', badValue: '*', detail: LAST },
      { type: 'FieldValueDuplicate', field: 'spec.topologyKeys[1]', badValue: '*', detail: '' },
    ],
  },
  {
    name: 'duplicate any not last gives both errors',
    keys: ['*', '*', 'zone'],
    want: [
      { type: 'FieldValueInvalid', field: 'spec.topologyKeys[0]', badValue: '*', detail: LAST },
      { type: 'FieldValueDuplicate', field: 'spec.topologyKeys[1]', badValue: '*', detail: '' },
      { type: 'FieldValueInvalid', field: 'spec.topologyKeys[1]', badValue: '*', detail: LAST },
    ],
  },
  {
    name: 'seventeen keys',
    keys: seventeen,
    want: [
      {
        type: 'FieldValueTooMany',
        field: 'spec.topologyKeys',
        badValue: 17,
        detail: 'must have at most 16 items',
      },
    ],
  },
  {
    name: 'a key with a space: the whole list is the value',
    keys: ['zone', 'bad key'],
    want: [
      {
        type: 'FieldValueInvalid',
        field: 'spec.topologyKeys[1]',
        badValue: ['zone', 'bad key'],
        detail: NAME_PART_MSG,
      },
    ],
  },
  {
    name: 'a key starting with a dash',
    keys: ['-x'],
    want: [
      { type: 'FieldValueInvalid', field: 'spec.topologyKeys[0]', badValue: ['-x'], detail: NAME_PART_MSG },
    ],
  },
  {
    name: 'a key with two slashes',
    keys: ['a/b/c', '*'],
    want: [
      {
        type: 'FieldValueInvalid',
        field: 'spec.topologyKeys[0]',
        badValue: ['a/b/c', '*'],
        detail: QUALIFIED_MSG,
      },
    ],
  },
  {
    name: 'an empty key: both name-part messages',
    keys: [''],
    want: [
      {
        type: 'FieldValueInvalid',
        field: 'spec.topologyKeys[0]',
        badValue: [''],
        detail: 'name part must be non-empty',
      },
      { type: 'FieldValueInvalid', field: 'spec.topologyKeys[0]', badValue: [''], detail: NAME_PART_MSG },
    ],
  },
  {
    name: 'externalTrafficPolicy Local',
    keys: ['kubernetes.io/hostname'],
    etp: 'Local',
    want: [
      {
        type: 'FieldValueForbidden',
        field: 'spec.topologyKeys',
        detail: 'may not be specified when `externalTrafficPolicy=Local`',
      },
    ],
  },
  {
    name: 'every rule at once, in upstream order',
    keys: [...seventeen.slice(0, 15), '*', '*', 'example.com/k0'],
    etp: 'Local',
    want: [
      {
        type: 'FieldValueForbidden',
        field: 'spec.topologyKeys',
        detail: 'may not be specified when `externalTrafficPolicy=Local`',
      },
      {
        type: 'FieldValueTooMany',
        field: 'spec.topologyKeys',
        badValue: 18,
        detail: 'must have at most 16 items',
      },
      { type: 'FieldValueInvalid', field: 'spec.topologyKeys[15]', badValue: '*', detail: LAST },
      { type: 'FieldValueDuplicate', field: 'spec.topologyKeys[16]', badValue: '*', detail: '' },
      { type: 'FieldValueInvalid', field: 'spec.topologyKeys[16]', badValue: '*', detail: LAST },
      { type: 'FieldValueDuplicate', field: 'spec.topologyKeys[17]', badValue: 'example.com/k0', detail: '' },
    ],
  },
];

describe('validateTopologyKeys', () => {
  it('has upstream constants', () => {
    assert.equal(MAX_SERVICE_TOPOLOGY_KEYS, 16);
    assert.equal(TOPOLOGY_KEY_ANY, '*');
  });

  for (const c of cases) {
    it(c.name, () => assert.deepEqual(validateTopologyKeys(c.keys, PATH, c.etp), c.want));
  }

  it('renders upstream texts', () => {
    const text = (keys: readonly string[], etp?: string): string[] =>
      validateTopologyKeys(keys, PATH, etp).map(fieldErrorString);
    assert.deepEqual(text(['*', 'kubernetes.io/hostname']), [
      'spec.topologyKeys[0]: Invalid value: "*": "*" must be the last value specified',
    ]);
    assert.deepEqual(text(['kubernetes.io/hostname'], 'Local'), [
      'spec.topologyKeys: Forbidden: may not be specified when `externalTrafficPolicy=Local`',
    ]);
    assert.deepEqual(text(seventeen), ['spec.topologyKeys: Too many: 17: must have at most 16 items']);
    assert.deepEqual(text(['zone', 'zone']), ['spec.topologyKeys[1]: Duplicate value: "zone"']);
    assert.deepEqual(text(['bad key', '*']), [
      `spec.topologyKeys[0]: Invalid value: []string{"bad key", "*"}: ${NAME_PART_MSG}`,
    ]);
    assert.deepEqual(text(['a/b/c']), [
      `spec.topologyKeys[0]: Invalid value: []string{"a/b/c"}: ${QUALIFIED_MSG}`,
    ]);
  });

  it('depends only on its arguments: any path, and the list is not kept', () => {
    const keys = ['bad key'];
    const p = FieldPath.root('metadata', 'annotations').key('service.svcplane.io/topology-keys');
    const errs = validateTopologyKeys(keys, p, undefined);
    keys.push('more');
    assert.deepEqual(errs.map(fieldErrorString), [
      `metadata.annotations[service.svcplane.io/topology-keys][0]: Invalid value: []string{"bad key"}: ${NAME_PART_MSG}`,
    ]);
  });
});
