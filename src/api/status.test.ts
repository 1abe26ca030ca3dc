import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  duplicate,
  FieldPath,
  formatValue,
  forbidden,
  invalid,
  notSupported,
  required,
} from './field-errors.js';
import { isStatusError, statusErrors } from './status.js';

const services = { group: '', resource: 'services' };
const grids = { group: 'superedge.io', resource: 'servicegrids' };

describe('Status errors as kube-apiserver writes them', () => {
  it('NotFound: message, code and details kubectl prints from', () => {
    const e = statusErrors.notFound(services, 'nope');
    assert.deepEqual(e.status, {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'services "nope" not found',
      reason: 'NotFound',
      details: { name: 'nope', kind: 'services' },
      code: 404,
    });
    assert.equal(statusErrors.notFound(grids, 'sg').message, 'servicegrids.superedge.io "sg" not found');
    assert.equal(statusErrors.notFound(grids, 'sg').status.details?.group, 'superedge.io');
    assert.ok(isStatusError(e, 'NotFound'));
    assert.ok(!isStatusError(e, 'Conflict'));
  });

  it('AlreadyExists and Conflict', () => {
    assert.equal(statusErrors.alreadyExists(services, 'web').message, 'services "web" already exists');
    assert.equal(statusErrors.alreadyExists(services, 'web').code, 409);
    const c = statusErrors.conflict(services, 'conflict');
    assert.equal(
      c.message,
      'Operation cannot be fulfilled on services "conflict": the object has been modified; please apply your changes to the latest version and try again',
    );
    assert.equal(c.status.reason, 'Conflict');
  });

  it('Invalid: one cause on one line, several in brackets, causes carry field and message', () => {
    const one = statusErrors.invalid({ group: '', kind: 'Service' }, 'invalid', [
      required(FieldPath.root('spec', 'ports')),
    ]);
    assert.equal(one.message, 'Service "invalid" is invalid: spec.ports: Required value');
    assert.equal(one.code, 422);
    const two = statusErrors.invalid({ group: '', kind: 'Service' }, 'inv2', [
      required('spec.ports'),
      invalid('spec.clusterIP', 'foo', 'must be a valid IP'),
    ]);
    assert.equal(
      two.message,
      'Service "inv2" is invalid: [spec.ports: Required value, spec.clusterIP: Invalid value: "foo": must be a valid IP]',
    );
    assert.deepEqual(two.status.details, {
      name: 'inv2',
      kind: 'Service',
      causes: [
        { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.ports' },
        {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: "foo": must be a valid IP',
          field: 'spec.clusterIP',
        },
      ],
    });
    const grid = statusErrors.invalid({ group: 'superedge.io', kind: 'ServiceGrid' }, 'g', [
      required('spec.gridUniqKey'),
    ]);
    assert.equal(grid.message, 'ServiceGrid.superedge.io "g" is invalid: spec.gridUniqKey: Required value');
  });

  it('the allocation texts come out exactly', () => {
    const e = statusErrors.invalid({ group: '', kind: 'Service' }, 'web', [
      invalid(
        FieldPath.root('spec').child('clusterIPs'),
        ['10.96.0.5'],
        'failed to allocate IP 10.96.0.5: provided IP is already allocated',
      ),
    ]);
    assert.equal(
      e.message,
      'Service "web" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.5"}: failed to allocate IP 10.96.0.5: provided IP is already allocated',
    );
    const full = statusErrors.internal(new Error('failed to allocate a serviceIP: range is full'));
    assert.equal(full.code, 500);
    assert.equal(full.message, 'Internal error occurred: failed to allocate a serviceIP: range is full');
    assert.equal(full.status.reason, 'InternalError');
  });

  it('field error bodies for every type', () => {
    const p = FieldPath.root('spec').child('ports').index(1).child('name');
    assert.equal(p.toString(), 'spec.ports[1].name');
    assert.equal(FieldPath.root('metadata', 'labels').key('app').toString(), 'metadata.labels[app]');
    const cases: Array<[ReturnType<typeof required>, string]> = [
      [required('spec.selector', 'must be set'), 'Required value: must be set'],
      [
        invalid('spec.ports[0].port', 70000, 'must be between 1 and 65535, inclusive'),
        'Invalid value: 70000: must be between 1 and 65535, inclusive',
      ],
      [
        notSupported('spec.type', 'Foo', ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort']),
        'Unsupported value: "Foo": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"',
      ],
      [duplicate(p, 'http'), 'Duplicate value: "http"'],
      [
        forbidden('spec.clusterIP', 'may not be set for ExternalName services'),
        'Forbidden: may not be set for ExternalName services',
      ],
    ];
    for (const [err, body] of cases) {
      assert.equal(
        statusErrors.invalid({ group: '', kind: 'Service' }, 'x', [err]).status.details?.causes?.[0]?.message,
        body,
      );
    }
  });

  it('formatValue() prints values the way Go validation does', () => {
    assert.equal(formatValue('a"b'), '"a\\"b"');
    assert.equal(formatValue(80), '80');
    assert.equal(formatValue(true), 'true');
    assert.equal(formatValue(null), '"null"');
    assert.equal(formatValue(['a', 'b']), '[]string{"a", "b"}');
    assert.equal(formatValue([30000, 30001]), '[]int{30000, 30001}');
  });

  it('the other reasons carry their codes', () => {
    const cases: Array<[ReturnType<typeof statusErrors.badRequest>, number, string]> = [
      [statusErrors.badRequest('x'), 400, 'BadRequest'],
      [statusErrors.expired('too old resource version: 5 (10)'), 410, 'Expired'],
      [statusErrors.gone('gone away'), 410, 'Gone'],
      [statusErrors.methodNotSupported(services, 'patch'), 405, 'MethodNotAllowed'],
      [statusErrors.notAcceptable(['application/json']), 406, 'NotAcceptable'],
      [statusErrors.unsupportedMediaType(['application/json-patch+json']), 415, 'UnsupportedMediaType'],
      [statusErrors.requestEntityTooLarge(3145728), 413, 'RequestEntityTooLarge'],
      [statusErrors.forbidden(services, 'web', 'User "x" cannot get resource'), 403, 'Forbidden'],
      [statusErrors.unauthorized(), 401, 'Unauthorized'],
      [statusErrors.tooManyRequests('slow down', 1), 429, 'TooManyRequests'],
      [statusErrors.timeout('timed out'), 504, 'Timeout'],
      [statusErrors.serviceUnavailable('store unavailable'), 503, 'ServiceUnavailable'],
    ];
    for (const [e, code, reason] of cases) {
      assert.equal(e.code, code);
      assert.equal(e.reason, reason);
      assert.equal(e.status.kind, 'Status');
      assert.equal(e.status.status, 'Failure');
    }
    assert.equal(
      statusErrors.unsupportedMediaType([
        'application/json-patch+json',
        'application/merge-patch+json',
        'application/apply-patch+yaml',
      ]).message,
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
  });
});
