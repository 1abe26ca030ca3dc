import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HostNodePresence } from './host-node.js';

function recorder() {
  const lines: string[] = [];
  return {
    lines,
    log: {
      info: (msg: string) => lines.push(`info ${msg}`),
      warn: (msg: string) => lines.push(`warn ${msg}`),
    },
  };
}

describe('HostNodePresence', () => {
  it('says nothing while the node is there, from the first sync on', () => {
    const r = recorder();
    const h = new HostNodePresence('edge-0', r.log);
    h.observe('edge-1', true);
    h.observe('edge-0', true);
    h.initialSyncDone();
    h.observe('edge-0', true); // an update
    h.observe('edge-1', false); // another node goes
    assert.deepEqual(r.lines, []);
  });

  it('warns once when the first sync lacks the node, and says when it appears and goes', () => {
    const r = recorder();
    const h = new HostNodePresence('edge-0', r.log);
    h.observe('edge-1', true);
    h.initialSyncDone();
    h.initialSyncDone();
    assert.equal(r.lines.length, 1);
    assert.match(r.lines[0]!, /^warn this node is not in the upstream/);
    h.observe('edge-0', true);
    h.observe('edge-0', true);
    assert.match(r.lines[1]!, /^info this node is in the upstream now/);
    h.observe('edge-0', false);
    assert.match(r.lines[2]!, /^warn this node is not in the upstream/);
    assert.equal(r.lines.length, 3);
  });

  it('a node added and deleted before the first sync is reported missing once', () => {
    const r = recorder();
    const h = new HostNodePresence('edge-0', r.log);
    h.observe('edge-0', true);
    h.observe('edge-0', false);
    assert.deepEqual(r.lines, []);
    h.initialSyncDone();
    assert.equal(r.lines.length, 1);
  });
});
