import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  filterNode,
  REASON_NODE_AFFINITY,
  REASON_NODE_PORTS,
  REASON_NOT_READY,
  REASON_TOO_MANY_PODS,
  REASON_UNSCHEDULABLE,
} from './filters.js';
import { NodeInfo } from './node-info.js';
import { podInfoOf } from './pod-info.js';
import { node, pod, type NodeOptions, type PodOptions } from './testing/builders.js';
import type { NodeSelectorRequirement } from './types.js';

const run = (p: PodOptions, n: NodeOptions, existing: PodOptions[] = []): string[] | undefined => {
  const info = new NodeInfo(node('n1', n));
  for (const e of existing) info.account(podInfoOf(pod({ ...e, nodeName: 'n1' })), 1);
  return filterNode(podInfoOf(pod(p)), info)?.reasons.slice();
};

const required = (...exprs: NodeSelectorRequirement[]): PodOptions => ({
  nodeAffinity: {
    requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: exprs }] },
  },
});

describe('filterNode', () => {
  const table: [string, PodOptions, NodeOptions, string[] | undefined, PodOptions[]?][] = [
    ['a plain pod fits a plain node', {}, {}, undefined],
    ['an unschedulable node refuses', {}, { unschedulable: true }, [REASON_UNSCHEDULABLE]],
    [
      'an unschedulable node takes a pod tolerating node.kubernetes.io/unschedulable',
      {
        tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }],
      },
      { unschedulable: true },
      undefined,
    ],
    [
      'a NoSchedule taint refuses, printed {key: value}',
      {},
      { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] },
      ['node(s) had untolerated taint {dedicated: gpu}'],
    ],
    [
      'an empty taint value prints {key: }',
      {},
      { taints: [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] },
      ['node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }'],
    ],
    [
      'a NoExecute taint refuses',
      {},
      { taints: [{ key: 'k', value: 'v', effect: 'NoExecute' }] },
      ['node(s) had untolerated taint {k: v}'],
    ],
    [
      'a PreferNoSchedule taint never filters',
      {},
      { taints: [{ key: 'k', effect: 'PreferNoSchedule' }] },
      undefined,
    ],
    [
      'the first untolerated taint in node order is reported',
      { tolerations: [{ key: 'a', operator: 'Exists' }] },
      {
        taints: [
          { key: 'a', value: '1', effect: 'NoSchedule' },
          { key: 'b', value: '2', effect: 'NoSchedule' },
          { key: 'c', value: '3', effect: 'NoSchedule' },
        ],
      },
      ['node(s) had untolerated taint {b: 2}'],
    ],
    [
      'an Equal toleration with the same value tolerates',
      { tolerations: [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule' }] },
      { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] },
      undefined,
    ],
    [
      'an Equal toleration with another value does not',
      { tolerations: [{ key: 'k', value: 'w' }] },
      { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] },
      ['node(s) had untolerated taint {k: v}'],
    ],
    [
      'a toleration for another effect does not tolerate',
      { tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoExecute' }] },
      { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }] },
      ['node(s) had untolerated taint {k: v}'],
    ],
    [
      'an empty key with Exists tolerates everything',
      { tolerations: [{ operator: 'Exists' }] },
      { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }], unschedulable: true },
      undefined,
    ],
    ['a node whose Ready is False refuses', {}, { ready: false }, [REASON_NOT_READY]],
    ['a node without conditions is not ready', {}, { ready: 'none' }, [REASON_NOT_READY]],
    [
      'a pod tolerating not-ready passes a not-ready node',
      { tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists' }] },
      { ready: false },
      undefined,
    ],
    [
      'the not-ready taint is reported by TaintToleration, before readiness',
      {},
      { ready: false, taints: [{ key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }] },
      ['node(s) had untolerated taint {node.kubernetes.io/not-ready: }'],
    ],
    [
      'unschedulable comes before taints',
      {},
      { unschedulable: true, taints: [{ key: 'k', effect: 'NoSchedule' }] },
      [REASON_UNSCHEDULABLE],
    ],
    [
      'taints come before node affinity',
      { nodeSelector: { disk: 'ssd' } },
      { taints: [{ key: 'k', effect: 'NoSchedule' }] },
      ['node(s) had untolerated taint {k: }'],
    ],
    [
      'nodeSelector matches equal labels',
      { nodeSelector: { disk: 'ssd' } },
      { labels: { disk: 'ssd' } },
      undefined,
    ],
    [
      'nodeSelector refuses another value',
      { nodeSelector: { disk: 'ssd' } },
      { labels: { disk: 'hdd' } },
      [REASON_NODE_AFFINITY],
    ],
    ['nodeSelector refuses a missing label', { nodeSelector: { disk: 'ssd' } }, {}, [REASON_NODE_AFFINITY]],
    [
      'nodeSelector and required affinity are ANDed',
      { nodeSelector: { disk: 'ssd' }, ...required({ key: 'zone', operator: 'In', values: ['a'] }) },
      { labels: { disk: 'ssd', zone: 'b' } },
      [REASON_NODE_AFFINITY],
    ],
    [
      'In matches a listed value',
      required({ key: 'zone', operator: 'In', values: ['a', 'b'] }),
      { labels: { zone: 'b' } },
      undefined,
    ],
    [
      'In refuses a missing label',
      required({ key: 'zone', operator: 'In', values: ['a'] }),
      {},
      [REASON_NODE_AFFINITY],
    ],
    [
      'NotIn matches a missing label',
      required({ key: 'zone', operator: 'NotIn', values: ['a'] }),
      {},
      undefined,
    ],
    [
      'NotIn refuses a listed value',
      required({ key: 'zone', operator: 'NotIn', values: ['a'] }),
      { labels: { zone: 'a' } },
      [REASON_NODE_AFFINITY],
    ],
    [
      'Exists matches an empty value',
      required({ key: 'gpu', operator: 'Exists' }),
      { labels: { gpu: '' } },
      undefined,
    ],
    [
      'Exists refuses a missing label',
      required({ key: 'gpu', operator: 'Exists' }),
      {},
      [REASON_NODE_AFFINITY],
    ],
    [
      'DoesNotExist matches a missing label',
      required({ key: 'gpu', operator: 'DoesNotExist' }),
      {},
      undefined,
    ],
    [
      'DoesNotExist refuses a present label',
      required({ key: 'gpu', operator: 'DoesNotExist' }),
      { labels: { gpu: '1' } },
      [REASON_NODE_AFFINITY],
    ],
    [
      'Gt compares as integers',
      required({ key: 'cores', operator: 'Gt', values: ['8'] }),
      { labels: { cores: '16' } },
      undefined,
    ],
    [
      'Gt is strict',
      required({ key: 'cores', operator: 'Gt', values: ['16'] }),
      { labels: { cores: '16' } },
      [REASON_NODE_AFFINITY],
    ],
    [
      'Lt compares as integers',
      required({ key: 'cores', operator: 'Lt', values: ['10'] }),
      { labels: { cores: '9' } },
      undefined,
    ],
    [
      'Gt refuses a non-integer label',
      required({ key: 'cores', operator: 'Gt', values: ['1'] }),
      { labels: { cores: 'many' } },
      [REASON_NODE_AFFINITY],
    ],
    [
      'Gt with two values is a bad term',
      required({ key: 'c', operator: 'Gt', values: ['1', '2'] }),
      { labels: { c: '5' } },
      [REASON_NODE_AFFINITY],
    ],
    [
      'In with no values is a bad term',
      required({ key: 'c', operator: 'In', values: [] }),
      { labels: { c: '5' } },
      [REASON_NODE_AFFINITY],
    ],
    [
      'an unknown operator never matches',
      required({ key: 'c', operator: 'Like', values: ['5'] }),
      { labels: { c: '5' } },
      [REASON_NODE_AFFINITY],
    ],
    [
      'expressions in a term are ANDed',
      required({ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Exists' }),
      { labels: { a: '1' } },
      [REASON_NODE_AFFINITY],
    ],
    [
      'terms are ORed',
      {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'a', operator: 'Exists' }] },
              { matchExpressions: [{ key: 'b', operator: 'Exists' }] },
            ],
          },
        },
      },
      { labels: { b: '1' } },
      undefined,
    ],
    [
      'empty terms are dropped, so only empty terms match nothing',
      {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{}, { matchExpressions: [] }],
          },
        },
      },
      {},
      [REASON_NODE_AFFINITY],
    ],
    [
      'an empty term beside a matching one is ignored',
      {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{}, { matchExpressions: [{ key: 'a', operator: 'Exists' }] }],
          },
        },
      },
      { labels: { a: '' } },
      undefined,
    ],
    [
      'matchFields metadata.name In matches the node name',
      {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] }],
          },
        },
      },
      {},
      undefined,
    ],
    [
      'matchFields metadata.name NotIn refuses the node name',
      {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['n1'] }] },
            ],
          },
        },
      },
      {},
      [REASON_NODE_AFFINITY],
    ],
    [
      'matchFields on another field never matches',
      {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.uid', operator: 'In', values: ['n1'] }] }],
          },
        },
      },
      {},
      [REASON_NODE_AFFINITY],
    ],
    [
      'preferred affinity never filters',
      {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            { weight: 10, preference: { matchExpressions: [{ key: 'x', operator: 'Exists' }] } },
          ],
        },
      },
      {},
      undefined,
    ],
    ['a full node has too many pods', {}, { pods: 2 }, [REASON_TOO_MANY_PODS], [{}, {}]],
    ['the last free pod slot fits', {}, { pods: 3 }, undefined, [{}, {}]],
    [
      'a node with no pods allocatable has too many pods',
      {},
      { allocatable: { cpu: '1' } },
      [REASON_TOO_MANY_PODS],
    ],
    [
      'insufficient cpu',
      { requests: { cpu: '3' } },
      { cpu: '4' },
      ['Insufficient cpu'],
      [{ requests: { cpu: '1500m' } }],
    ],
    [
      'cpu that just fits',
      { requests: { cpu: '2500m' } },
      { cpu: '4' },
      undefined,
      [{ requests: { cpu: '1500m' } }],
    ],
    [
      'every shortfall is reported, pods first',
      { requests: { cpu: '5', memory: '9Gi', 'example.com/gpu': '1' } },
      { pods: 1 },
      [REASON_TOO_MANY_PODS, 'Insufficient cpu', 'Insufficient memory', 'Insufficient example.com/gpu'],
      [{}],
    ],
    ['a host port in use refuses', { hostPort: 8080 }, {}, [REASON_NODE_PORTS], [{ hostPort: 8080 }]],
    ['another host port fits', { hostPort: 8080 }, {}, undefined, [{ hostPort: 8081 }]],
  ];
  for (const [name, p, n, want, existing] of table) {
    it(name, () => assert.deepEqual(run(p, n, existing ?? []), want));
  }

  it('terminal pods are not counted by the cache, so they free their slot', async () => {
    const { SchedulerCache } = await import('./cache.js');
    const cache = new SchedulerCache();
    cache.setNode(node('n1', { pods: 1 }));
    cache.setPod(pod({ name: 'done', nodeName: 'n1', phase: 'Succeeded' }));
    assert.equal(filterNode(podInfoOf(pod()), cache.node('n1')!), undefined);
    cache.setPod(pod({ name: 'running', nodeName: 'n1', phase: 'Running' }));
    assert.deepEqual(filterNode(podInfoOf(pod()), cache.node('n1')!)?.reasons, [REASON_TOO_MANY_PODS]);
  });
});
