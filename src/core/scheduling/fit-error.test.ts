import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failedSchedulingMessage, NO_NODES_AVAILABLE, truncateEventMessage } from './fit-error.js';
import type { NodeFailure } from './filters.js';

const unresolvable = (reason: string): NodeFailure => ({ plugin: 'x', reasons: [reason], resolvable: false });
const resolvable = (...reasons: string[]): NodeFailure => ({
  plugin: 'NodeResourcesFit',
  reasons,
  resolvable: true,
});

describe('failedSchedulingMessage', () => {
  it('counts reasons, sorts them as strings and appends the preemption message with ".."', () => {
    assert.equal(
      failedSchedulingMessage(3, [
        unresolvable("node(s) didn't match Pod's node affinity/selector"),
        unresolvable('node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }'),
        unresolvable("node(s) didn't match Pod's node affinity/selector"),
      ]),
      "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..",
    );
  });

  it('says no preemption victims were found for nodes short of resources', () => {
    assert.equal(
      failedSchedulingMessage(2, [resolvable('Insufficient cpu'), resolvable('Insufficient cpu')]),
      '0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..',
    );
  });

  it('sorts "10 x" before "2 y" (string order, not numeric)', () => {
    const failures = [
      ...Array.from({ length: 10 }, () => unresolvable('node(s) were unschedulable')),
      ...Array.from({ length: 2 }, () => resolvable('Too many pods')),
    ];
    assert.equal(
      failedSchedulingMessage(12, failures),
      '0/12 nodes are available: 10 node(s) were unschedulable, 2 Too many pods. preemption: 0/12 nodes are available: 10 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..',
    );
  });

  it('counts every reason of a node that fails several resources once per reason', () => {
    assert.equal(
      failedSchedulingMessage(1, [resolvable('Too many pods', 'Insufficient memory')]),
      '0/1 nodes are available: 1 Insufficient memory, 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..',
    );
  });

  it('says preemptionPolicy=Never pods are not eligible', () => {
    assert.equal(
      failedSchedulingMessage(1, [resolvable('Too many pods')], true),
      '0/1 nodes are available: 1 Too many pods. preemption: not eligible due to preemptionPolicy=Never..',
    );
  });

  it('has its own message when there are no nodes', () => {
    assert.equal(failedSchedulingMessage(0, []), NO_NODES_AVAILABLE);
    assert.equal(NO_NODES_AVAILABLE, 'no nodes available to schedule pods');
  });
});

describe('truncateEventMessage', () => {
  it('keeps a short message', () => assert.equal(truncateEventMessage('abc'), 'abc'));
  it('cuts to 1024 bytes ending in " ..."', () => {
    const out = truncateEventMessage('x'.repeat(2000));
    assert.equal(Buffer.byteLength(out), 1024);
    assert.ok(out.endsWith('x ...'));
  });
  it('never splits a character', () => {
    const out = truncateEventMessage('é'.repeat(1000));
    assert.ok(Buffer.byteLength(out) <= 1024);
    assert.ok(!out.includes('\uFFFD'));
  });
});
