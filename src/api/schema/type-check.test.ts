import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeErrorText, findTypeMismatch, schemaTypeErrorText } from './type-check.js';
import { schemaFor } from './index.js';

const text = (group: string, kind: string, obj: unknown): string | undefined => {
  const m = findTypeMismatch(obj, schemaFor(group, kind)!);
  return m === undefined ? undefined : decodeErrorText(m);
};

describe('findTypeMismatch: Go decoder wording (encoding/json UnmarshalTypeError)', () => {
  const cases: Array<[string, string, string, unknown, string | undefined]> = [
    [
      'status of the wrong type',
      '',
      'Node',
      { status: 'garbage' },
      'json: cannot unmarshal string into Go struct field Node.status of type v1.NodeStatus',
    ],
    [
      'a list given a string',
      '',
      'Node',
      { status: { conditions: 'x' } },
      'json: cannot unmarshal string into Go struct field NodeStatus.status.conditions of type []v1.NodeCondition',
    ],
    [
      'list items: no index in the field name',
      '',
      'Node',
      { status: { conditions: [{ type: 'Ready' }, 'x'] } },
      'json: cannot unmarshal string into Go struct field NodeStatus.status.conditions of type v1.NodeCondition',
    ],
    [
      'a field inside a list item',
      '',
      'Service',
      { spec: { ports: [{ port: '80' }] } },
      'json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32',
    ],
    [
      'a fraction where Go has an integer',
      'apps',
      'Deployment',
      { spec: { replicas: 1.5 } },
      'json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of type int32',
    ],
    [
      'a map value: the key is not part of the name',
      '',
      'Pod',
      { metadata: { labels: { app: 1 } } },
      'json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string',
    ],
    [
      'a bool where a map is',
      '',
      'Pod',
      { metadata: { annotations: true } },
      'json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.annotations of type map[string]string',
    ],
    [
      'an object where a string is',
      '',
      'Service',
      { spec: { type: {} } },
      'json: cannot unmarshal object into Go struct field ServiceSpec.spec.type of type string',
    ],
    [
      'an array where a struct is',
      '',
      'Pod',
      { spec: [] },
      'json: cannot unmarshal array into Go struct field Pod.spec of type v1.PodSpec',
    ],
    [
      'IntOrString given a bool',
      '',
      'Service',
      { spec: { ports: [{ port: 80, targetPort: true }] } },
      'json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32',
    ],
    [
      'Quantity given a bool: the quantity parser answers',
      '',
      'Node',
      { status: { capacity: { cpu: true } } },
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ],
    ['Quantity given a number', '', 'Node', { status: { capacity: { cpu: 2, memory: '1Gi' } } }, undefined],
    ['IntOrString given a string', '', 'Service', { spec: { ports: [{ targetPort: 'http' }] } }, undefined],
    ['null anywhere', '', 'Node', { spec: null, status: { conditions: null, capacity: null } }, undefined],
    ['unknown fields are not this check', '', 'Node', { status: { bogus: 3 } }, undefined],
    [
      'free-form fields (managedFields fieldsV1) take anything',
      '',
      'Node',
      { metadata: { managedFields: [{ fieldsV1: 'x' }] } },
      undefined,
    ],
    [
      'the first mismatch in document order',
      '',
      'Node',
      { spec: { unschedulable: 'yes' }, status: 'garbage' },
      'json: cannot unmarshal string into Go struct field NodeSpec.spec.unschedulable of type bool',
    ],
  ];
  for (const [name, group, kind, obj, want] of cases) {
    it(name, () => assert.equal(text(group, kind, obj), want));
  }
});

describe('findTypeMismatch: custom resources (OpenAPI validation wording)', () => {
  it('names the path with indices and the JSON type found', () => {
    const m = findTypeMismatch(
      { spec: { template: { ports: [{ port: 'x' }] } } },
      schemaFor('superedge.io', 'ServiceGrid')!,
    );
    assert.ok(m);
    assert.equal(m.path, 'spec.template.ports[0].port');
    assert.equal(
      schemaTypeErrorText(m),
      'spec.template.ports[0].port in body must be of type integer: "string"',
    );
  });
  it('an object of the wrong type', () => {
    const m = findTypeMismatch({ status: 'garbage' }, schemaFor('superedge.io', 'DeploymentGrid')!);
    assert.equal(schemaTypeErrorText(m!), 'status in body must be of type object: "string"');
  });
});
