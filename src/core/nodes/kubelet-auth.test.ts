// The kubelet API's authorization attributes (pkg/kubelet/server/auth.go), its 403 text, and the caches.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  AUTHORIZED_TTL_MS,
  decisionKey,
  kubeletAttributes,
  kubeletForbiddenMessage,
  OFFLINE_DECISION_MAX_AGE_MS,
  OfflineDecisions,
  TtlCache,
} from './kubelet-auth.js';

const alice = { name: 'alice', groups: ['devs', 'system:authenticated'] };

describe('kubeletAttributes', () => {
  const rows: Array<[string, string, string, string]> = [
    ['GET', '/pods', 'get', 'proxy'],
    ['GET', '/healthz', 'get', 'proxy'],
    ['GET', '/stats/summary', 'get', 'stats'],
    ['GET', '/stats', 'get', 'stats'],
    ['GET', '/statsx', 'get', 'proxy'],
    ['GET', '/metrics', 'get', 'metrics'],
    ['GET', '/metrics/cadvisor', 'get', 'metrics'],
    ['GET', '/logs/syslog', 'get', 'log'],
    ['POST', '/checkpoint/ns/pod/c', 'create', 'checkpoint'],
    ['PUT', '/pods', 'update', 'proxy'],
    ['PATCH', '/pods', 'patch', 'proxy'],
    ['DELETE', '/pods', 'delete', 'proxy'],
  ];
  for (const [method, path, verb, sub] of rows) {
    it(`${method} ${path} is ${verb} nodes/${sub}`, () => {
      const a = kubeletAttributes(alice, method, path, 'edge-0');
      assert.deepEqual(
        { verb: a.verb, resource: a.resource, subresource: a.subresource, name: a.name, group: a.apiGroup },
        { verb, resource: 'nodes', subresource: sub, name: 'edge-0', group: '' },
      );
      assert.equal(a.resourceRequest, true);
      assert.equal(a.namespace, '');
    });
  }

  it("the 403 text names user, verb, resource and subresource as the kubelet's does", () => {
    assert.equal(
      kubeletForbiddenMessage(kubeletAttributes(alice, 'GET', '/pods', 'n')),
      'Forbidden (user=alice, verb=get, resource=nodes, subresource=proxy)',
    );
  });

  it('the decision key ignores group order and tells users, nodes and subresources apart', () => {
    const a = kubeletAttributes(alice, 'GET', '/pods', 'n');
    const b = kubeletAttributes(
      { name: 'alice', groups: [...alice.groups].reverse() },
      'GET',
      '/healthz',
      'n',
    );
    assert.equal(decisionKey(a), decisionKey(b));
    assert.notEqual(decisionKey(a), decisionKey(kubeletAttributes(alice, 'GET', '/pods', 'm')));
    assert.notEqual(decisionKey(a), decisionKey(kubeletAttributes(alice, 'GET', '/stats', 'n')));
    assert.notEqual(
      decisionKey(a),
      decisionKey(kubeletAttributes({ ...alice, name: 'bob' }, 'GET', '/pods', 'n')),
    );
    assert.notEqual(
      decisionKey(a),
      decisionKey(kubeletAttributes({ ...alice, groups: ['system:masters'] }, 'GET', '/pods', 'n')),
    );
  });
});

describe('TtlCache', () => {
  it('answers until the TTL ends, then forgets', () => {
    const c = new TtlCache<string>();
    c.set('k', 'v', 1000, 500);
    assert.equal(c.get('k', 1499), 'v');
    assert.equal(c.get('k', 1500), undefined);
    assert.equal(c.get('k', 1000), undefined); // forgotten, not just hidden
  });

  it('property: never holds more than its bound, and the newest entry is always there', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 3 }), { maxLength: 50 }),
        fc.integer({ min: 1, max: 8 }),
        (keys, max) => {
          const c = new TtlCache<number>(max);
          keys.forEach((k, i) => {
            c.set(k, i, 0, 1000);
            assert.equal(c.get(k, 0), i);
          });
          const live = new Set(keys).size;
          const present = [...new Set(keys)].filter((k) => c.get(k, 0) !== undefined).length;
          assert.ok(present <= Math.min(max, live));
        },
      ),
    );
  });
});

describe('OfflineDecisions', () => {
  it('answers with an allowed decision for 24 h, not after; a denial forgets it', () => {
    const d = new OfflineDecisions();
    assert.equal(d.allow('k', 1000), true);
    assert.equal(d.allowedAt('k', 1000 + OFFLINE_DECISION_MAX_AGE_MS), 1000);
    assert.equal(d.allowedAt('k', 1001 + OFFLINE_DECISION_MAX_AGE_MS), undefined);
    assert.equal(d.allowedAt('other', 1000), undefined);
    assert.equal(d.deny('k'), true);
    assert.equal(d.allowedAt('k', 1000), undefined);
    assert.equal(d.deny('k'), false);
  });

  it('asks for a write only when an entry is new or older than the authorized cache', () => {
    const d = new OfflineDecisions();
    assert.equal(d.allow('k', 0), true);
    assert.equal(d.allow('k', AUTHORIZED_TTL_MS - 1), false);
    assert.equal(d.allow('k', 2 * AUTHORIZED_TTL_MS), true);
  });

  it('survives encode/decode, dropping expired entries; a bad file is a problem string', () => {
    const d = new OfflineDecisions();
    d.allow('old', 0);
    d.allow('new', OFFLINE_DECISION_MAX_AGE_MS);
    const back = OfflineDecisions.decode(d.encode(OFFLINE_DECISION_MAX_AGE_MS + 10));
    assert.ok(back instanceof OfflineDecisions);
    assert.equal(back.allowedAt('new', OFFLINE_DECISION_MAX_AGE_MS + 10), OFFLINE_DECISION_MAX_AGE_MS);
    assert.equal(back.allowedAt('old', 0), undefined);
    assert.equal(OfflineDecisions.decode('{'), 'not JSON');
    assert.match(
      String(OfflineDecisions.decode('{"kind":"KubeletAuthorizations","entries":[{"key":1}]}')),
      /entry/,
    );
    assert.equal(OfflineDecisions.decode('[]'), 'not a KubeletAuthorizations document');
  });
});
