import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, isValidLabelValue } from './names.js';

const valid = (errs: string[]): boolean => errs.length === 0;

describe('name validation (Kubernetes rules and messages)', () => {
  it('DNS-1123 labels', () => {
    for (const ok of ['a', 'web', 'my-svc', '0', 'a1-b2', 'x'.repeat(63)])
      assert.ok(valid(isDNS1123Label(ok)), ok);
    for (const bad of ['', 'A', 'web.', '-a', 'a-', 'a_b', 'a.b', 'x'.repeat(64)])
      assert.ok(!valid(isDNS1123Label(bad)), bad);
    assert.deepEqual(isDNS1123Label('My_Svc'), [
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ]);
    assert.deepEqual(isDNS1123Label('x'.repeat(64)), ['must be no more than 63 characters']);
  });

  it('DNS-1123 subdomains', () => {
    for (const ok of ['a', 'a.b', 'web-1.default', 'x'.repeat(253)])
      assert.ok(valid(isDNS1123Subdomain(ok)), ok);
    for (const bad of ['', 'a..b', '.a', 'a.', 'A.b', 'a_b', 'x'.repeat(254)])
      assert.ok(!valid(isDNS1123Subdomain(bad)), bad);
    assert.deepEqual(isDNS1123Subdomain('a_b'), [
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]);
  });

  it('qualified names (label and annotation keys)', () => {
    for (const ok of [
      'app',
      'App_1',
      'a.b-c',
      'example.com/zone',
      'kubernetes.io/service-name',
      'x'.repeat(63),
    ]) {
      assert.ok(valid(isQualifiedName(ok)), ok);
    }
    for (const bad of [
      '',
      '/a',
      'a/',
      'a/b/c',
      '-a',
      'a b',
      'Example.com/x',
      'x'.repeat(64),
      `${'x'.repeat(254)}/a`,
    ]) {
      assert.ok(!valid(isQualifiedName(bad)), bad);
    }
    const namePart =
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    assert.deepEqual(isQualifiedName('my.annotation/with_invalid_characters!'), [namePart]);
    // An empty name part fails twice, as upstream reports it.
    assert.deepEqual(isQualifiedName(''), ['name part must be non-empty', namePart]);
    assert.deepEqual(isQualifiedName('/a'), ['prefix part must be non-empty']);
    assert.match(
      isQualifiedName('A.com/a')[0]!,
      /^prefix part a lowercase RFC 1123 subdomain must consist of/,
    );
    assert.match(
      isQualifiedName('a/b/c')[0]!,
      /^a qualified name must consist of .* with an optional DNS subdomain prefix and '\/' \(e\.g\. 'example\.com\/MyName'\)$/,
    );
  });

  it('label values', () => {
    for (const ok of ['', 'a', 'A-b_c.d', '123', 'x'.repeat(63)]) assert.ok(valid(isValidLabelValue(ok)), ok);
    for (const bad of ['-a', 'a-', 'a b', 'a/b', 'x'.repeat(64), 'demo-{nginx}'])
      assert.ok(!valid(isValidLabelValue(bad)), bad);
    assert.deepEqual(isValidLabelValue('x'.repeat(64)), ['must be no more than 63 characters']);
  });
});
