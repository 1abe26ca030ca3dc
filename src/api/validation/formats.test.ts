import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FieldPath, fieldErrorString } from '../field-errors.js';
import {
  isDNS1035Label,
  isFullyQualifiedDomainName,
  isValidPathSegmentName,
  isValidPercent,
  isValidPortName,
  maskTrailingDash,
  nameValidator,
} from './formats.js';
import { validateObjectMeta, validateObjectMetaUpdate } from './object-meta.js';
import { isMicroTime, isRFC3339 } from './time.js';

describe('formats', () => {
  it('DNS-1035 labels start with a letter', () => {
    assert.deepEqual(isDNS1035Label('web-1'), []);
    assert.equal(isDNS1035Label('1web').length, 1);
    assert.deepEqual(isDNS1035Label('a'.repeat(64))[0], 'must be no more than 63 characters');
  });

  it('port names (IANA_SVC_NAME)', () => {
    assert.deepEqual(isValidPortName('http'), []);
    assert.deepEqual(isValidPortName('http-alt2'), []);
    assert.deepEqual(isValidPortName('8080'), ['must contain at least one letter (a-z)']);
    assert.deepEqual(isValidPortName('-web'), ['must not begin or end with a hyphen (-)']);
    assert.deepEqual(isValidPortName('a-very-long-port-name'), ['must be no more than 15 characters']);
    assert.deepEqual(isValidPortName('Web'), [
      'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
    ]);
  });

  it('percentages and path segments', () => {
    assert.deepEqual(isValidPercent('25%'), []);
    assert.equal(isValidPercent('25').length, 1);
    assert.deepEqual(isValidPathSegmentName('..'), ["may not be '..'"]);
    assert.deepEqual(isValidPathSegmentName('a/b%c'), ["may not contain '/'", "may not contain '%'"]);
    assert.deepEqual(isValidPathSegmentName('a.b:c'), []);
  });

  it('generateName prefixes mask a trailing dash', () => {
    assert.equal(maskTrailingDash('web-'), 'wea');
    assert.equal(maskTrailingDash('-'), '-');
    assert.deepEqual(nameValidator('subdomain')('web-', true), []);
    assert.equal(nameValidator('subdomain')('web-', false).length, 1);
    assert.equal(nameValidator('label')('-', true).length, 1);
  });

  it('FQDNs', () => {
    const p = FieldPath.root('x');
    assert.deepEqual(isFullyQualifiedDomainName(p, 'db.example.com.'), []);
    assert.deepEqual(isFullyQualifiedDomainName(p, '').map(fieldErrorString), ['x: Required value']);
  });

  it('timestamps', () => {
    assert.ok(isRFC3339('2024-02-29T23:59:59Z'));
    assert.ok(isRFC3339('2024-02-29T23:59:59.5+01:00'));
    assert.ok(!isRFC3339('2023-02-29T00:00:00Z'));
    assert.ok(!isRFC3339('2024-01-01 00:00:00Z'));
    assert.ok(isMicroTime('2024-01-01T00:00:00.123456Z'));
    assert.ok(isMicroTime('2024-01-01T00:00:00.123Z'));
    assert.ok(isMicroTime('2024-01-01T00:00:00Z'));
    assert.ok(!isMicroTime('2024-01-01T00:00:00.1234Z'));
  });
});

describe('validateObjectMeta directly', () => {
  const msgs = (errs: { field: string }[]): string[] => errs.map((e) => fieldErrorString(e as never));
  it('isCreate false checks only the common fields', () => {
    const meta = { name: 'Bad_Name', labels: { ok: 'fine' } };
    assert.deepEqual(
      validateObjectMeta(meta, { namespaced: true, nameRule: 'subdomain', isCreate: false }),
      [],
    );
    assert.equal(
      validateObjectMeta(meta, { namespaced: true, nameRule: 'subdomain', isCreate: true }).length,
      2,
    );
  });

  it('metadata that is not an object is a type error', () => {
    assert.deepEqual(
      msgs(validateObjectMeta('x', { namespaced: false, nameRule: 'label', isCreate: true })),
      [
        'metadata: Invalid value: "x": must be of type object',
        'metadata.name: Required value: name or generateName is required',
      ],
    );
  });

  it('update: generation may not go down; empty uid means "not sent"', () => {
    const old = { name: 'a', uid: 'u', generation: 3 };
    assert.deepEqual(msgs(validateObjectMetaUpdate({ name: 'a', generation: 2 }, old)), [
      'metadata.generation: Invalid value: 2: must not be decremented',
    ]);
    assert.deepEqual(msgs(validateObjectMetaUpdate({ name: 'a', generation: 3, namespace: 'x' }, old)), [
      'metadata.namespace: Invalid value: "x": field is immutable',
    ]);
  });
});
