import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { endpointSlicesEqual } from './equal.js';
import { ep, slice } from './testing/builders.js';
import type { EndpointSlice } from './types.js';

const base = (): EndpointSlice =>
  slice({
    endpoints: [ep('10.0.0.1', { zone: 'z1', nodeName: 'n1', hint: 'z1' }), ep('10.0.0.2', { ready: false })],
    ports: [
      { name: 'a', port: 1, protocol: 'TCP' },
      { name: 'b', port: 2, protocol: 'UDP' },
    ],
  });

/** A copy of base() changed by `f`. */
const changed = (f: (s: EndpointSlice) => void): EndpointSlice => {
  const s = base();
  f(s);
  return s;
};

describe('endpointSlicesEqual: what does not matter', () => {
  const same: Array<[string, (s: EndpointSlice) => void]> = [
    ['nothing', () => {}],
    ['endpoint order', (s) => s.endpoints.reverse()],
    ['port order', (s) => s.ports?.reverse()],
    [
      'annotations',
      (s) => (s.metadata.annotations = { 'endpoints.kubernetes.io/last-change-trigger-time': 'x' }),
    ],
    [
      'name, resourceVersion, uid, generateName',
      (s) => (s.metadata = { ...s.metadata, name: 'x', resourceVersion: '9', uid: 'u', generateName: 'g-' }),
    ],
    ['targetRef.resourceVersion', (s) => (s.endpoints[0]!.targetRef!.resourceVersion = '42')],
    ['an absent protocol versus TCP', (s) => delete s.ports![0]!.protocol],
    ['an empty hint list versus none', (s) => (s.endpoints[1]!.hints = { forZones: [], forNodes: [] })],
    ['an empty zone versus none', (s) => (s.endpoints[1]!.zone = '')],
    ['an ownerReference order', (s) => s.metadata.ownerReferences?.reverse()],
  ];
  for (const [name, f] of same) {
    it(`ignores ${name}`, () => {
      assert.equal(endpointSlicesEqual(base(), changed(f)), true);
      assert.equal(endpointSlicesEqual(changed(f), base()), true);
    });
  }
});

describe('endpointSlicesEqual: what matters', () => {
  const differ: Array<[string, (s: EndpointSlice) => void]> = [
    ['addressType', (s) => (s.addressType = 'IPv6')],
    ['a label value', (s) => (s.metadata.labels = { ...s.metadata.labels, extra: '' })],
    ['a missing label', (s) => (s.metadata.labels = {})],
    ['the owner', (s) => (s.metadata.ownerReferences![0]!.uid = 'other')],
    ['the controller flag of the owner', (s) => (s.metadata.ownerReferences![0]!.controller = false)],
    ['a port number', (s) => (s.ports![0]!.port = 3)],
    ['a port name', (s) => (s.ports![0]!.name = 'z')],
    ['appProtocol', (s) => (s.ports![0]!.appProtocol = 'http')],
    ['an extra port', (s) => s.ports!.push({ name: 'c', port: 3, protocol: 'TCP' })],
    ['a missing endpoint', (s) => s.endpoints.pop()],
    ['a duplicated endpoint', (s) => s.endpoints.push(structuredClone(s.endpoints[0]!))],
    ['ready', (s) => (s.endpoints[0]!.conditions.ready = false)],
    ['serving', (s) => (s.endpoints[0]!.conditions.serving = false)],
    ['terminating', (s) => (s.endpoints[0]!.conditions.terminating = true)],
    ['an absent condition versus false', (s) => delete s.endpoints[1]!.conditions.ready],
    ['the address', (s) => (s.endpoints[0]!.addresses = ['10.0.0.9'])],
    ['the order of addresses', (s) => (s.endpoints[0]!.addresses = ['10.0.0.1', '10.0.0.9'])],
    ['hostname', (s) => (s.endpoints[0]!.hostname = 'h')],
    ['nodeName', (s) => (s.endpoints[0]!.nodeName = 'n2')],
    ['zone', (s) => (s.endpoints[0]!.zone = 'z2')],
    ['a zone hint', (s) => (s.endpoints[0]!.hints = { forZones: [{ name: 'z2' }] })],
    [
      'a node hint',
      (s) => (s.endpoints[0]!.hints = { forZones: [{ name: 'z1' }], forNodes: [{ name: 'n1' }] }),
    ],
    ['targetRef uid', (s) => (s.endpoints[0]!.targetRef!.uid = 'x')],
    ['no targetRef', (s) => delete s.endpoints[0]!.targetRef],
    ['deprecatedTopology', (s) => (s.endpoints[0]!.deprecatedTopology = { k: 'v' })],
  ];
  for (const [name, f] of differ) {
    it(`notices ${name}`, () => {
      assert.equal(endpointSlicesEqual(base(), changed(f)), false);
      assert.equal(endpointSlicesEqual(changed(f), base()), false);
    });
  }

  it('reads garbage defensively', () => {
    assert.equal(endpointSlicesEqual(undefined, null), true);
    assert.equal(endpointSlicesEqual({ endpoints: 'x', ports: 3 }, {}), true);
    assert.equal(endpointSlicesEqual(base(), undefined), false);
  });
});
