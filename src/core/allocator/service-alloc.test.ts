import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldErrorString } from '../../api/field-errors.js';
import type { JsonRecord } from '../../api/json.js';
import type { IPFamily } from './cidr.js';
import {
  assignClusterIPs,
  assignNodePorts,
  clusterIPRequests,
  heldValues,
  initIPFamilyFields,
  isHeadlessSpec,
  needsHealthCheck,
  nodePortRequests,
  releasedByUpdate,
  shouldAllocateNodePorts,
  type ClusterFamilies,
} from './service-alloc.js';

const V4 = '10.0.0.10';
const V6 = 'fd00::10';
const V4ONLY: ClusterFamilies = { families: ['IPv4'] };
const V4V6: ClusterFamilies = { families: ['IPv4', 'IPv6'] };
const V6V4: ClusterFamilies = { families: ['IPv6', 'IPv4'] };

const SS = 'SingleStack';
const PDS = 'PreferDualStack';
const RDS = 'RequireDualStack';
const MULTI_IPS = "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified";
const MULTI_FAMILIES =
  "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified";
const NOT_DUAL = 'this cluster is not configured for dual-stack services';
const policyErr = (policy: string, detail: string): string =>
  `spec.ipFamilyPolicy: Invalid value: "${policy}": ${detail}`;
const ipsLiteral = (ips: string[]): string => `[]string{${ips.map((ip) => JSON.stringify(ip)).join(', ')}}`;
const ipNotConfigured = (i: number, ips: string[], fam: IPFamily): string =>
  `spec.clusterIPs[${i}]: Invalid value: ${ipsLiteral(ips)}: ${fam} is not configured on this cluster`;
const familyNotConfigured = (i: number, fam: IPFamily): string =>
  `spec.ipFamilies[${i}]: Invalid value: "${fam}": not configured on this cluster`;

type Variant = 'none' | 'v4' | 'v6' | 'v4v6' | 'v6v4' | 'headless' | 'headlessSel';
const VARIANTS: Variant[] = ['none', 'v4', 'v6', 'v4v6', 'v6v4', 'headless', 'headlessSel'];
const IPS: Record<Variant, string[]> = {
  none: [],
  v4: [V4],
  v6: [V6],
  v4v6: [V4, V6],
  v6v4: [V6, V4],
  headless: ['None'],
  headlessSel: ['None'],
};

function makeSpec(variant: Variant, policy?: string, extra: JsonRecord = {}): JsonRecord {
  const ips = IPS[variant];
  const spec: JsonRecord = { type: 'ClusterIP', ports: [{ port: 80, protocol: 'TCP' }] };
  if (variant !== 'headless') spec['selector'] = { app: 'web' };
  if (ips.length > 0) {
    spec['clusterIP'] = ips[0];
    spec['clusterIPs'] = [...ips];
  }
  if (policy !== undefined) spec['ipFamilyPolicy'] = policy;
  return { ...spec, ...extra };
}

const run = (spec: JsonRecord, old: JsonRecord | undefined, cluster: ClusterFamilies): string[] =>
  initIPFamilyFields(spec, old, cluster).map(fieldErrorString);

/** Expected outcome: the settled [policy, families], or the verbatim field errors. */
type Want = { policy: string; families: IPFamily[] } | { errors: string[] };
const ok = (policy: string, ...families: IPFamily[]): Want => ({ policy, families });
const fail = (...errors: string[]): Want => ({ errors });

// initIPFamilyFields on create, as upstream's pkg/registry/core/service/storage/alloc.go decides it:
// cluster × ipFamilyPolicy × clusterIPs.
const CREATE: Record<string, { cluster: ClusterFamilies; rows: Record<string, Record<Variant, Want>> }> = {
  'single-stack IPv4 cluster': {
    cluster: V4ONLY,
    rows: {
      unset: {
        none: ok(SS, 'IPv4'),
        v4: ok(SS, 'IPv4'),
        v6: fail(ipNotConfigured(0, [V6], 'IPv6')),
        v4v6: fail(policyErr(SS, MULTI_IPS), ipNotConfigured(1, [V4, V6], 'IPv6')),
        v6v4: fail(policyErr(SS, MULTI_IPS), ipNotConfigured(0, [V6, V4], 'IPv6')),
        headless: ok(RDS, 'IPv4', 'IPv6'),
        headlessSel: ok(SS, 'IPv4'),
      },
      [SS]: {
        none: ok(SS, 'IPv4'),
        v4: ok(SS, 'IPv4'),
        v6: fail(ipNotConfigured(0, [V6], 'IPv6')),
        v4v6: fail(policyErr(SS, MULTI_IPS), ipNotConfigured(1, [V4, V6], 'IPv6')),
        v6v4: fail(policyErr(SS, MULTI_IPS), ipNotConfigured(0, [V6, V4], 'IPv6')),
        headless: ok(SS, 'IPv4'),
        headlessSel: ok(SS, 'IPv4'),
      },
      [PDS]: {
        none: ok(PDS, 'IPv4'),
        v4: ok(PDS, 'IPv4'),
        v6: fail(ipNotConfigured(0, [V6], 'IPv6')),
        v4v6: fail(ipNotConfigured(1, [V4, V6], 'IPv6')),
        v6v4: fail(ipNotConfigured(0, [V6, V4], 'IPv6')),
        headless: ok(PDS, 'IPv4', 'IPv6'),
        headlessSel: ok(PDS, 'IPv4'),
      },
      [RDS]: {
        none: fail(policyErr(RDS, NOT_DUAL)),
        v4: fail(policyErr(RDS, NOT_DUAL)),
        v6: fail(ipNotConfigured(0, [V6], 'IPv6')),
        v4v6: fail(ipNotConfigured(1, [V4, V6], 'IPv6')),
        v6v4: fail(ipNotConfigured(0, [V6, V4], 'IPv6')),
        headless: ok(RDS, 'IPv4', 'IPv6'), // headless + selectorless: allowed even on a single-stack cluster
        headlessSel: fail(policyErr(RDS, NOT_DUAL)),
      },
    },
  },
  'IPv4,IPv6 cluster': {
    cluster: V4V6,
    rows: {
      unset: {
        none: ok(SS, 'IPv4'),
        v4: ok(SS, 'IPv4'),
        v6: ok(SS, 'IPv6'),
        v4v6: fail(policyErr(SS, MULTI_IPS)),
        v6v4: fail(policyErr(SS, MULTI_IPS)),
        headless: ok(RDS, 'IPv4', 'IPv6'),
        headlessSel: ok(SS, 'IPv4'),
      },
      [SS]: {
        none: ok(SS, 'IPv4'),
        v4: ok(SS, 'IPv4'),
        v6: ok(SS, 'IPv6'),
        v4v6: fail(policyErr(SS, MULTI_IPS)),
        v6v4: fail(policyErr(SS, MULTI_IPS)),
        headless: ok(SS, 'IPv4'),
        headlessSel: ok(SS, 'IPv4'),
      },
      [PDS]: {
        none: ok(PDS, 'IPv4', 'IPv6'),
        v4: ok(PDS, 'IPv4', 'IPv6'),
        v6: ok(PDS, 'IPv6', 'IPv4'),
        v4v6: ok(PDS, 'IPv4', 'IPv6'),
        v6v4: ok(PDS, 'IPv6', 'IPv4'),
        headless: ok(PDS, 'IPv4', 'IPv6'),
        headlessSel: ok(PDS, 'IPv4', 'IPv6'),
      },
      [RDS]: {
        none: ok(RDS, 'IPv4', 'IPv6'),
        v4: ok(RDS, 'IPv4', 'IPv6'),
        v6: ok(RDS, 'IPv6', 'IPv4'),
        v4v6: ok(RDS, 'IPv4', 'IPv6'),
        v6v4: ok(RDS, 'IPv6', 'IPv4'),
        headless: ok(RDS, 'IPv4', 'IPv6'),
        headlessSel: ok(RDS, 'IPv4', 'IPv6'),
      },
    },
  },
  'IPv6,IPv4 cluster': {
    cluster: V6V4,
    rows: {
      unset: {
        none: ok(SS, 'IPv6'),
        v4: ok(SS, 'IPv4'),
        v6: ok(SS, 'IPv6'),
        v4v6: fail(policyErr(SS, MULTI_IPS)),
        v6v4: fail(policyErr(SS, MULTI_IPS)),
        headless: ok(RDS, 'IPv6', 'IPv4'),
        headlessSel: ok(SS, 'IPv6'),
      },
      [SS]: {
        none: ok(SS, 'IPv6'),
        v4: ok(SS, 'IPv4'),
        v6: ok(SS, 'IPv6'),
        v4v6: fail(policyErr(SS, MULTI_IPS)),
        v6v4: fail(policyErr(SS, MULTI_IPS)),
        headless: ok(SS, 'IPv6'),
        headlessSel: ok(SS, 'IPv6'),
      },
      [PDS]: {
        none: ok(PDS, 'IPv6', 'IPv4'),
        v4: ok(PDS, 'IPv4', 'IPv6'),
        v6: ok(PDS, 'IPv6', 'IPv4'),
        v4v6: ok(PDS, 'IPv4', 'IPv6'),
        v6v4: ok(PDS, 'IPv6', 'IPv4'),
        headless: ok(PDS, 'IPv6', 'IPv4'),
        headlessSel: ok(PDS, 'IPv6', 'IPv4'),
      },
      [RDS]: {
        none: ok(RDS, 'IPv6', 'IPv4'),
        v4: ok(RDS, 'IPv4', 'IPv6'),
        v6: ok(RDS, 'IPv6', 'IPv4'),
        v4v6: ok(RDS, 'IPv4', 'IPv6'),
        v6v4: ok(RDS, 'IPv6', 'IPv4'),
        headless: ok(RDS, 'IPv6', 'IPv4'),
        headlessSel: ok(RDS, 'IPv6', 'IPv4'),
      },
    },
  },
};

describe('initIPFamilyFields on create (table)', () => {
  for (const [clusterName, { cluster, rows }] of Object.entries(CREATE)) {
    describe(clusterName, () => {
      for (const [policy, byVariant] of Object.entries(rows)) {
        for (const variant of VARIANTS) {
          const want = byVariant[variant];
          const label =
            'errors' in want
              ? `refuses: ${want.errors.join(' | ')}`
              : `settles ${want.policy} [${want.families.join(', ')}]`;
          it(`ipFamilyPolicy ${policy}, clusterIPs ${variant}: ${label}`, () => {
            const spec = makeSpec(variant, policy === 'unset' ? undefined : policy);
            const errs = run(spec, undefined, cluster);
            if ('errors' in want) {
              assert.deepEqual(errs, want.errors);
              return;
            }
            assert.deepEqual(errs, []);
            assert.equal(spec['ipFamilyPolicy'], want.policy);
            assert.deepEqual(spec['ipFamilies'], want.families);
            const ips = IPS[variant];
            if (ips.length === 0) {
              assert.equal(spec['clusterIPs'], undefined, 'no clusterIPs invented');
            } else {
              assert.deepEqual(spec['clusterIPs'], ips);
              assert.equal(spec['clusterIP'], ips[0]);
            }
          });
        }
      }
    });
  }
});

describe('initIPFamilyFields: ipFamilies given, loose pre-validation, ExternalName', () => {
  it('SingleStack with two ipFamilies is refused', () => {
    assert.deepEqual(run(makeSpec('none', SS, { ipFamilies: ['IPv4', 'IPv6'] }), undefined, V4V6), [
      policyErr(SS, MULTI_FAMILIES),
    ]);
  });

  it('SingleStack with two clusterIPs and two ipFamilies reports both in one 422', () => {
    assert.deepEqual(run(makeSpec('v4v6', SS, { ipFamilies: ['IPv4', 'IPv6'] }), undefined, V4V6), [
      policyErr(SS, MULTI_IPS),
      policyErr(SS, MULTI_FAMILIES),
    ]);
  });

  it('a requested family the cluster lacks is refused at spec.ipFamilies[i]', () => {
    assert.deepEqual(run(makeSpec('none', SS, { ipFamilies: ['IPv6'] }), undefined, V4ONLY), [
      familyNotConfigured(0, 'IPv6'),
    ]);
    assert.deepEqual(run(makeSpec('none', PDS, { ipFamilies: ['IPv4', 'IPv6'] }), undefined, V4ONLY), [
      familyNotConfigured(1, 'IPv6'),
    ]);
  });

  it('an IP whose family is given in ipFamilies is checked as that family (spec.ipFamilies[i], not spec.clusterIPs[i])', () => {
    assert.deepEqual(run(makeSpec('v6', SS, { ipFamilies: ['IPv6'] }), undefined, V4ONLY), [
      familyNotConfigured(0, 'IPv6'),
    ]);
  });

  it('RequireDualStack on a single-stack cluster with an unconfigured family reports both', () => {
    assert.deepEqual(run(makeSpec('none', RDS, { ipFamilies: ['IPv6'] }), undefined, V4ONLY), [
      policyErr(RDS, NOT_DUAL),
      familyNotConfigured(0, 'IPv6'),
    ]);
  });

  it('a headless selectorless Service may name a family the cluster lacks', () => {
    const single = makeSpec('headless', SS, { ipFamilies: ['IPv6'] });
    assert.deepEqual(run(single, undefined, V4ONLY), []);
    assert.deepEqual(single['ipFamilies'], ['IPv6']);
    const dual = makeSpec('headless', RDS, { ipFamilies: ['IPv6'] });
    assert.deepEqual(run(dual, undefined, V4ONLY), []);
    assert.deepEqual(dual['ipFamilies'], ['IPv6', 'IPv4']);
  });

  it('a given secondary family is kept as given on a dual-stack cluster', () => {
    const spec = makeSpec('v4', PDS, { ipFamilies: ['IPv4', 'IPv6'] });
    assert.deepEqual(run(spec, undefined, V6V4), []);
    assert.deepEqual(spec['ipFamilies'], ['IPv4', 'IPv6']);
  });

  it('refuses what loose validation refuses, with its texts', () => {
    assert.deepEqual(run(makeSpec('none', SS, { clusterIPs: [V4] }), undefined, V4V6), [
      `spec.clusterIPs: Invalid value: ${ipsLiteral([V4])}: must be empty when \`clusterIP\` is not specified`,
    ]);
    assert.deepEqual(run(makeSpec('v4', SS, { ipFamilies: ['IPv6'] }), undefined, V4V6), [
      `spec.clusterIPs[0]: Invalid value: "${V4}": expected an IPv6 value as indicated by \`ipFamilies[0]\``,
    ]);
    assert.deepEqual(run(makeSpec('none', 'Bogus'), undefined, V4V6), [
      'spec.ipFamilyPolicy: Unsupported value: "Bogus": supported values: "PreferDualStack", "RequireDualStack", "SingleStack"',
    ]);
    assert.deepEqual(run(makeSpec('v4', SS, { clusterIPs: [V4, '10.0.0.11'] }), undefined, V4V6), [
      `spec.clusterIPs: Invalid value: ${ipsLiteral([V4, '10.0.0.11'])}: may specify no more than one IP for each IP family`,
    ]);
  });

  it('leaves an ExternalName Service alone', () => {
    const spec: JsonRecord = { type: 'ExternalName', externalName: 'example.com' };
    assert.deepEqual(run(spec, undefined, V4V6), []);
    assert.deepEqual(spec, { type: 'ExternalName', externalName: 'example.com' });
  });
});

describe('initIPFamilyFields on update', () => {
  const stored = (variant: Variant, policy: string, families: IPFamily[], type = 'ClusterIP'): JsonRecord =>
    makeSpec(variant, policy, { ipFamilies: families, type });

  it('never upgrades an unchanged PreferDualStack Service behind its back', () => {
    const old = stored('v4', PDS, ['IPv4']);
    const spec = stored('v4', PDS, ['IPv4']);
    assert.deepEqual(run(spec, old, V4V6), []);
    assert.deepEqual(spec['ipFamilies'], ['IPv4']);
  });

  it('settles a PreferDualStack Service again when its type changes (ClusterIP → NodePort upgrades it)', () => {
    const old = stored('v4', PDS, ['IPv4']);
    const spec = stored('v4', PDS, ['IPv4'], 'NodePort');
    assert.deepEqual(run(spec, old, V4V6), []);
    assert.deepEqual(spec['ipFamilies'], ['IPv4', 'IPv6']);
  });

  it('adopts the stored policy when the update leaves it out', () => {
    const old = stored('v4v6', RDS, ['IPv4', 'IPv6']);
    const spec = makeSpec('v4v6', undefined, { ipFamilies: ['IPv4', 'IPv6'] });
    assert.deepEqual(run(spec, old, V4V6), []);
    assert.equal(spec['ipFamilyPolicy'], RDS);
  });

  it('defaults to SingleStack when the stored object had no policy (ExternalName → ClusterIP)', () => {
    const old: JsonRecord = { type: 'ExternalName', externalName: 'example.com' };
    const spec = makeSpec('none');
    assert.deepEqual(run(spec, old, V4V6), []);
    assert.equal(spec['ipFamilyPolicy'], SS);
    assert.deepEqual(spec['ipFamilies'], ['IPv4']);
  });

  it('SingleStack with unchanged dual-stack fields is a downgrade by intent: both lists are cut to their first entry', () => {
    const old = stored('v4v6', RDS, ['IPv4', 'IPv6']);
    const spec = stored('v4v6', SS, ['IPv4', 'IPv6']);
    assert.deepEqual(run(spec, old, V4V6), []);
    assert.deepEqual(spec['clusterIPs'], [V4]);
    assert.equal(spec['clusterIP'], V4);
    assert.deepEqual(spec['ipFamilies'], ['IPv4']);
  });

  it('SingleStack with a newly added second clusterIP is refused', () => {
    const old = stored('v4', SS, ['IPv4']);
    assert.deepEqual(run(makeSpec('v4v6', SS), old, V4V6), [policyErr(SS, MULTI_IPS)]);
  });

  it('releasing the secondary cluster IP needs SingleStack', () => {
    const old = stored('v4v6', RDS, ['IPv4', 'IPv6']);
    assert.deepEqual(run(stored('v4', RDS, ['IPv4', 'IPv6']), old, V4V6), [
      policyErr(RDS, "must be 'SingleStack' to release the secondary cluster IP"),
    ]);
  });

  it('releasing the secondary IP family needs SingleStack', () => {
    assert.deepEqual(run(stored('v4v6', PDS, ['IPv4']), stored('v4v6', PDS, ['IPv4', 'IPv6']), V4V6), [
      policyErr(PDS, "must be 'SingleStack' to release the secondary IP family"),
    ]);
  });

  it('releasing both the secondary IP and family without SingleStack reports both', () => {
    const old = stored('v4v6', RDS, ['IPv4', 'IPv6']);
    assert.deepEqual(run(stored('v4', RDS, ['IPv4']), old, V4V6), [
      policyErr(RDS, "must be 'SingleStack' to release the secondary cluster IP"),
      policyErr(RDS, "must be 'SingleStack' to release the secondary IP family"),
    ]);
  });

  it('an update that leaves clusterIPs or ipFamilies out does not "reduce" them', () => {
    const old = stored('v4v6', RDS, ['IPv4', 'IPv6']);
    const noFamilies = makeSpec('v4v6', RDS);
    assert.deepEqual(run(noFamilies, old, V4V6), []);
    assert.deepEqual(noFamilies['ipFamilies'], ['IPv4', 'IPv6']);
    const nothing = makeSpec('none', RDS);
    assert.deepEqual(run(nothing, old, V4V6), []);
    assert.deepEqual(nothing['ipFamilies'], ['IPv4', 'IPv6']);
  });

  it('upgrading a SingleStack Service to RequireDualStack adds the other family', () => {
    const old = stored('v6', SS, ['IPv6']);
    const spec = stored('v6', RDS, ['IPv6']);
    assert.deepEqual(run(spec, old, V4V6), []);
    assert.deepEqual(spec['ipFamilies'], ['IPv6', 'IPv4']);
    assert.deepEqual(spec['clusterIPs'], [V6]);
  });
});

describe('clusterIPRequests / assignClusterIPs', () => {
  it('on create asks for the next free address of every family without an IP, and for each given IP', () => {
    assert.deepEqual(clusterIPRequests({ ipFamilies: ['IPv4', 'IPv6'] }, undefined), [
      { family: 'IPv4' },
      { family: 'IPv6' },
    ]);
    assert.deepEqual(clusterIPRequests({ clusterIPs: [V4], ipFamilies: ['IPv4', 'IPv6'] }, undefined), [
      { family: 'IPv4', ip: V4 },
      { family: 'IPv6' },
    ]);
    assert.deepEqual(clusterIPRequests({ clusterIPs: [V6, V4], ipFamilies: ['IPv6', 'IPv4'] }, undefined), [
      { family: 'IPv6', ip: V6 },
      { family: 'IPv4', ip: V4 },
    ]);
  });

  it('asks for nothing for a headless or ExternalName Service', () => {
    assert.deepEqual(
      clusterIPRequests({ clusterIP: 'None', clusterIPs: ['None'], ipFamilies: ['IPv4', 'IPv6'] }, undefined),
      [],
    );
    assert.deepEqual(clusterIPRequests({ type: 'ExternalName', ipFamilies: ['IPv4'] }, undefined), []);
  });

  it('on update asks only for what the stored object does not hold (upgrade: the secondary only)', () => {
    const old = { clusterIP: V4, clusterIPs: [V4], ipFamilies: ['IPv4'] };
    assert.deepEqual(
      clusterIPRequests({ clusterIP: V4, clusterIPs: [V4], ipFamilies: ['IPv4', 'IPv6'] }, old),
      [{ family: 'IPv6' }],
    );
    assert.deepEqual(
      clusterIPRequests({ clusterIP: V4, clusterIPs: [V4, V6], ipFamilies: ['IPv4', 'IPv6'] }, old),
      [{ family: 'IPv6', ip: V6 }],
    );
    assert.deepEqual(clusterIPRequests({ clusterIP: V4, clusterIPs: [V4], ipFamilies: ['IPv4'] }, old), []);
  });

  it('recognises a held address in any spelling', () => {
    const old = { clusterIP: 'fd00:0:0::10', clusterIPs: ['fd00:0:0::10'], ipFamilies: ['IPv6'] };
    assert.deepEqual(clusterIPRequests({ clusterIP: V6, clusterIPs: [V6], ipFamilies: ['IPv6'] }, old), []);
  });

  it('ExternalName → ClusterIP asks for everything', () => {
    const old = { type: 'ExternalName', externalName: 'example.com' };
    assert.deepEqual(clusterIPRequests({ type: 'ClusterIP', ipFamilies: ['IPv4'] }, old), [
      { family: 'IPv4' },
    ]);
  });

  it('assignClusterIPs fills clusterIPs by family and sets clusterIP to the first', () => {
    const spec: JsonRecord = { clusterIPs: [V4], ipFamilies: ['IPv4', 'IPv6'] };
    assignClusterIPs(spec, new Map([['IPv6', 'fd00::99']]));
    assert.deepEqual(spec, { clusterIPs: [V4, 'fd00::99'], clusterIP: V4, ipFamilies: ['IPv4', 'IPv6'] });
    const fresh: JsonRecord = { ipFamilies: ['IPv6', 'IPv4'] };
    assignClusterIPs(
      fresh,
      new Map<IPFamily, string>([
        ['IPv4', '10.0.0.99'],
        ['IPv6', 'fd00::99'],
      ]),
    );
    assert.deepEqual(fresh['clusterIPs'], ['fd00::99', '10.0.0.99']);
    assert.equal(fresh['clusterIP'], 'fd00::99');
    const headless: JsonRecord = { clusterIP: 'None', clusterIPs: ['None'], ipFamilies: ['IPv4'] };
    assignClusterIPs(headless, new Map([['IPv4', '10.0.0.99']]));
    assert.deepEqual(headless['clusterIPs'], ['None']);
  });
});

describe('shouldAllocateNodePorts / needsHealthCheck / isHeadlessSpec', () => {
  it('NodePort always allocates; LoadBalancer unless allocateLoadBalancerNodePorts is false; others never', () => {
    assert.equal(shouldAllocateNodePorts({ type: 'NodePort' }), true);
    assert.equal(shouldAllocateNodePorts({ type: 'LoadBalancer' }), true);
    assert.equal(
      shouldAllocateNodePorts({ type: 'LoadBalancer', allocateLoadBalancerNodePorts: true }),
      true,
    );
    assert.equal(
      shouldAllocateNodePorts({ type: 'LoadBalancer', allocateLoadBalancerNodePorts: false }),
      false,
    );
    assert.equal(shouldAllocateNodePorts({ type: 'ClusterIP' }), false);
    assert.equal(shouldAllocateNodePorts({}), false);
  });

  it('only LoadBalancer with externalTrafficPolicy Local needs a health-check node port', () => {
    assert.equal(needsHealthCheck({ type: 'LoadBalancer', externalTrafficPolicy: 'Local' }), true);
    assert.equal(needsHealthCheck({ type: 'LoadBalancer', externalTrafficPolicy: 'Cluster' }), false);
    assert.equal(needsHealthCheck({ type: 'NodePort', externalTrafficPolicy: 'Local' }), false);
  });

  it('headless means clusterIPs is exactly ["None"]', () => {
    assert.equal(isHeadlessSpec({ clusterIPs: ['None'] }), true);
    assert.equal(isHeadlessSpec({ clusterIP: 'None' }), false);
    assert.equal(isHeadlessSpec({ clusterIPs: ['None', V4] }), false);
  });
});

const port = (p: number, protocol: string, nodePort = 0, name?: string): JsonRecord => ({
  port: p,
  protocol,
  ...(nodePort === 0 ? {} : { nodePort }),
  ...(name === undefined ? {} : { name }),
});
const nodePortSpec = (ports: JsonRecord[], extra: JsonRecord = {}): JsonRecord => ({
  type: 'NodePort',
  ports,
  ...extra,
});
const npField = (i: number): string => `spec.ports[${i}].nodePort`;

describe('nodePortRequests on create (initNodePorts)', () => {
  it('53/TCP and 53/UDP share one node port', () => {
    const plan = nodePortRequests(nodePortSpec([port(53, 'TCP'), port(53, 'UDP')]), undefined);
    assert.deepEqual(plan, {
      requests: [{ kind: 'next' }],
      assign: [
        { portIndex: 0, request: 0 },
        { portIndex: 1, request: 0 },
      ],
    });
  });

  it('a nodePort given on any port of a shared port number is the one they share', () => {
    const spec = nodePortSpec([port(53, 'TCP'), port(53, 'UDP', 30053)]);
    const plan = nodePortRequests(spec, undefined);
    assert.deepEqual(plan.requests, [{ kind: 'specific', port: 30053, field: npField(0) }]);
    assert.deepEqual(plan.assign, [{ portIndex: 0, request: 0 }]);
    assignNodePorts(spec, plan, [30053]);
    assert.deepEqual(
      (spec['ports'] as JsonRecord[]).map((p) => p['nodePort']),
      [30053, 30053],
    );
  });

  it('the same explicit nodePort on both protocols is taken once', () => {
    const plan = nodePortRequests(nodePortSpec([port(53, 'TCP', 30053), port(53, 'UDP', 30053)]), undefined);
    assert.deepEqual(plan.requests, [{ kind: 'specific', port: 30053, field: npField(0) }]);
  });

  it('a different explicit nodePort on a later port of the same number is taken separately', () => {
    const plan = nodePortRequests(nodePortSpec([port(53, 'TCP', 30053), port(53, 'UDP', 30054)]), undefined);
    assert.deepEqual(plan.requests, [
      { kind: 'specific', port: 30053, field: npField(0) },
      { kind: 'specific', port: 30054, field: npField(1) },
    ]);
    assert.deepEqual(plan.assign, [{ portIndex: 0, request: 0 }]);
  });

  it('honours an explicit nodePort and allocates the rest', () => {
    const plan = nodePortRequests(nodePortSpec([port(80, 'TCP', 30080), port(443, 'TCP')]), undefined);
    assert.deepEqual(plan, {
      requests: [{ kind: 'specific', port: 30080, field: npField(0) }, { kind: 'next' }],
      assign: [
        { portIndex: 0, request: 0 },
        { portIndex: 1, request: 1 },
      ],
    });
  });

  it('a LoadBalancer with allocateLoadBalancerNodePorts false takes only explicit nodePorts', () => {
    const spec = {
      type: 'LoadBalancer',
      allocateLoadBalancerNodePorts: false,
      ports: [port(80, 'TCP'), port(443, 'TCP', 30443)],
    };
    assert.deepEqual(nodePortRequests(spec, undefined), {
      requests: [{ kind: 'specific', port: 30443, field: npField(1) }],
      assign: [{ portIndex: 1, request: 0 }],
    });
    const none = { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false, ports: [port(80, 'TCP')] };
    assert.deepEqual(nodePortRequests(none, undefined), { requests: [], assign: [] });
  });

  it('a LoadBalancer allocates node ports by default', () => {
    const plan = nodePortRequests({ type: 'LoadBalancer', ports: [port(80, 'TCP')] }, undefined);
    assert.deepEqual(plan.requests, [{ kind: 'next' }]);
  });

  it('a ClusterIP Service takes no node ports', () => {
    assert.deepEqual(nodePortRequests({ type: 'ClusterIP', ports: [port(80, 'TCP')] }, undefined), {
      requests: [],
      assign: [],
    });
  });

  it('a LoadBalancer with externalTrafficPolicy Local gets a health-check node port (given or next)', () => {
    const next = nodePortRequests(
      { type: 'LoadBalancer', externalTrafficPolicy: 'Local', ports: [port(80, 'TCP')] },
      undefined,
    );
    assert.deepEqual(next, {
      requests: [{ kind: 'next' }, { kind: 'next' }],
      assign: [{ portIndex: 0, request: 0 }],
      healthCheck: 1,
    });
    const given = nodePortRequests(
      {
        type: 'LoadBalancer',
        externalTrafficPolicy: 'Local',
        healthCheckNodePort: 31000,
        ports: [port(80, 'TCP')],
      },
      undefined,
    );
    assert.deepEqual(given.requests[1], { kind: 'specific', port: 31000, field: 'spec.healthCheckNodePort' });
    assert.equal(given.healthCheck, 1);
  });

  it('NodePort with Local and LoadBalancer with Cluster get no health-check node port', () => {
    assert.equal(
      nodePortRequests(nodePortSpec([port(80, 'TCP')], { externalTrafficPolicy: 'Local' }), undefined)
        .healthCheck,
      undefined,
    );
    assert.equal(
      nodePortRequests(
        { type: 'LoadBalancer', externalTrafficPolicy: 'Cluster', ports: [port(80, 'TCP')] },
        undefined,
      ).healthCheck,
      undefined,
    );
  });

  it('assignNodePorts writes the taken values into the ports and healthCheckNodePort', () => {
    const spec: JsonRecord = {
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      ports: [port(53, 'TCP'), port(53, 'UDP'), port(80, 'TCP', 30080)],
    };
    const plan = nodePortRequests(spec, undefined);
    assert.deepEqual(plan.requests, [
      { kind: 'next' },
      { kind: 'specific', port: 30080, field: npField(2) },
      { kind: 'next' },
    ]);
    assignNodePorts(spec, plan, [30053, 30080, 31000]);
    assert.deepEqual(
      (spec['ports'] as JsonRecord[]).map((p) => p['nodePort']),
      [30053, 30053, 30080],
    );
    assert.equal(spec['healthCheckNodePort'], 31000);
  });
});

describe('nodePortRequests on update (txnUpdateNodePorts)', () => {
  const old = nodePortSpec([port(80, 'TCP', 30080, 'http')]);

  it('takes only the values the stored object does not hold', () => {
    const plan = nodePortRequests(
      nodePortSpec([port(80, 'TCP', 30080, 'http'), port(81, 'TCP', 0, 'alt')]),
      old,
    );
    assert.deepEqual(plan, { requests: [{ kind: 'next' }], assign: [{ portIndex: 1, request: 0 }] });
    assert.deepEqual(nodePortRequests(nodePortSpec([port(80, 'TCP', 30080, 'http')]), old), {
      requests: [],
      assign: [],
    });
  });

  it('a changed nodePort value is taken as a specific request', () => {
    assert.deepEqual(nodePortRequests(nodePortSpec([port(80, 'TCP', 30081)]), old), {
      requests: [{ kind: 'specific', port: 30081, field: npField(0) }],
      assign: [],
    });
  });

  it('a new explicit value listed for two protocols is taken once', () => {
    const plan = nodePortRequests(nodePortSpec([port(53, 'TCP', 30053), port(53, 'UDP', 30053)]), old);
    assert.deepEqual(plan.requests, [{ kind: 'specific', port: 30053, field: npField(0) }]);
    assert.equal(plan.error, undefined);
  });

  it('the same (protocol, nodePort) twice is the plain error "duplicate nodePort: {TCP 30080}"', () => {
    const plan = nodePortRequests(nodePortSpec([port(80, 'TCP', 30080), port(81, 'TCP', 30080)]), old);
    assert.equal(plan.error, 'duplicate nodePort: {TCP 30080}');
  });

  it('ClusterIP → NodePort allocates each port separately (no sharing on update)', () => {
    const before = { type: 'ClusterIP', ports: [port(53, 'TCP'), port(53, 'UDP')] };
    assert.deepEqual(nodePortRequests(nodePortSpec([port(53, 'TCP'), port(53, 'UDP')]), before), {
      requests: [{ kind: 'next' }, { kind: 'next' }],
      assign: [
        { portIndex: 0, request: 0 },
        { portIndex: 1, request: 1 },
      ],
    });
  });

  it('NodePort → ClusterIP takes nothing', () => {
    assert.deepEqual(nodePortRequests({ type: 'ClusterIP', ports: [port(80, 'TCP')] }, old), {
      requests: [],
      assign: [],
    });
  });

  it('takes a health-check node port only when the update starts to need one', () => {
    const lbCluster = {
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Cluster',
      ports: [port(80, 'TCP', 30080)],
    };
    const lbLocal = { ...lbCluster, externalTrafficPolicy: 'Local', healthCheckNodePort: 31000 };
    const started = nodePortRequests({ ...lbCluster, externalTrafficPolicy: 'Local' }, lbCluster);
    assert.deepEqual(started, { requests: [{ kind: 'next' }], assign: [], healthCheck: 0 });
    assert.deepEqual(nodePortRequests(lbLocal, lbLocal), { requests: [], assign: [] });
  });
});

describe('heldValues', () => {
  it('holds the canonical cluster IPs and each node port once', () => {
    assert.deepEqual(
      heldValues({
        type: 'NodePort',
        clusterIP: V4,
        clusterIPs: [V4, 'fd00:0::10'],
        ports: [port(53, 'TCP', 30053), port(53, 'UDP', 30053)],
      }),
      { ips: [V4, V6], ports: [30053] },
    );
  });

  it('holds clusterIP when clusterIPs is missing, and nothing for headless or ExternalName', () => {
    assert.deepEqual(heldValues({ clusterIP: V4 }).ips, [V4]);
    assert.deepEqual(heldValues({ clusterIP: 'None', clusterIPs: ['None'] }).ips, []);
    assert.deepEqual(heldValues({ type: 'ExternalName', clusterIP: V4, clusterIPs: [V4] }).ips, []);
  });

  it('holds the health-check node port only while it is needed', () => {
    const lb = { type: 'LoadBalancer', ports: [port(80, 'TCP', 30080)], healthCheckNodePort: 31000 };
    assert.deepEqual(heldValues({ ...lb, externalTrafficPolicy: 'Local' }).ports, [30080, 31000]);
    assert.deepEqual(heldValues({ ...lb, externalTrafficPolicy: 'Cluster' }).ports, [30080]);
  });
});

describe('releasedByUpdate', () => {
  const np: JsonRecord = {
    type: 'NodePort',
    clusterIP: V4,
    clusterIPs: [V4],
    ports: [port(80, 'TCP', 30080, 'http'), port(443, 'TCP', 30443, 'https')],
  };

  it('NodePort → ClusterIP releases every node port and keeps the cluster IP', () => {
    const cip = {
      type: 'ClusterIP',
      clusterIP: V4,
      clusterIPs: [V4],
      ports: [port(80, 'TCP', 0, 'http'), port(443, 'TCP', 0, 'https')],
    };
    assert.deepEqual(releasedByUpdate(np, cip), { ips: [], ports: [30080, 30443] });
  });

  it('leaving NodePort releases every old node port even if the new spec still lists some', () => {
    const ext = {
      type: 'ExternalName',
      externalName: 'example.com',
      ports: [port(80, 'TCP', 30080), port(81, 'TCP', 30081)],
    };
    assert.deepEqual(releasedByUpdate(np, ext), { ips: [V4], ports: [30080, 30443] });
    const cip = { ...np, type: 'ClusterIP' };
    assert.deepEqual(releasedByUpdate(np, cip).ports, [30080, 30443]);
  });

  it('dual-stack → single-stack releases the secondary IP only', () => {
    const dual = { type: 'ClusterIP', clusterIP: V4, clusterIPs: [V4, V6], ipFamilies: ['IPv4', 'IPv6'] };
    const single = { type: 'ClusterIP', clusterIP: V4, clusterIPs: [V4], ipFamilies: ['IPv4'] };
    assert.deepEqual(releasedByUpdate(dual, single), { ips: [V6], ports: [] });
  });

  it('→ ExternalName releases every cluster IP', () => {
    const dual = { type: 'ClusterIP', clusterIP: V6, clusterIPs: [V6, V4] };
    assert.deepEqual(releasedByUpdate(dual, { type: 'ExternalName', externalName: 'example.com' }), {
      ips: [V6, V4],
      ports: [],
    });
  });

  it('a changed nodePort releases the old value; an unchanged Service releases nothing', () => {
    const changed = { ...np, ports: [port(80, 'TCP', 30081, 'http'), port(443, 'TCP', 30443, 'https')] };
    assert.deepEqual(releasedByUpdate(np, changed), { ips: [], ports: [30080] });
    assert.deepEqual(releasedByUpdate(np, structuredClone(np)), { ips: [], ports: [] });
    assert.deepEqual(releasedByUpdate(np, { ...np, type: 'LoadBalancer' }), { ips: [], ports: [] });
  });

  it('LoadBalancer Local → Cluster releases the health-check node port', () => {
    const local = {
      type: 'LoadBalancer',
      externalTrafficPolicy: 'Local',
      healthCheckNodePort: 31000,
      ports: [port(80, 'TCP', 30080)],
    };
    assert.deepEqual(releasedByUpdate(local, { ...local, externalTrafficPolicy: 'Cluster' }), {
      ips: [],
      ports: [31000],
    });
  });

  it('headless → anything releases no IP', () => {
    const headless = { type: 'ClusterIP', clusterIP: 'None', clusterIPs: ['None'] };
    assert.deepEqual(releasedByUpdate(headless, { type: 'ExternalName', externalName: 'x.example' }), {
      ips: [],
      ports: [],
    });
  });
});
