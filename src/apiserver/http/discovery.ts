// Discovery documents built from the resource table: aggregated discovery (apidiscovery.k8s.io v2 and
// v2beta1, whose Content-Type decides how kubectl parses them) and the legacy APIVersions,
// APIGroupList, APIGroup and APIResourceList.
import { RESOURCES, groupVersion, type ResourceInfo } from '../../api/resources.js';
import { LEGACY_BINDINGS, subresourcesOf } from '../../api/subresources.js';
import { REVIEW_RESOURCES, type ReviewResource } from './reviews.js';

export const AGGREGATED_CONTENT_TYPE = (v: 'v2' | 'v2beta1'): string =>
  `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`;

/** The whole table (subresources and the legacy bindings included), or a server's own subset (the wrapper). */
const isFull = (rs: readonly ResourceInfo[]): boolean => rs === RESOURCES;

/** The create-only review resources (reviews.ts), served by the full API server only. */
const reviewsOf = (rs: readonly ResourceInfo[], group: string, version: string): ReviewResource[] =>
  isFull(rs) ? REVIEW_RESOURCES.filter((r) => r.group === group && r.version === version) : [];

/** Groups in the order discovery lists them (kube: core first, then by priority; ours: table order). */
function groups(rs: readonly ResourceInfo[]): { group: string; versions: string[] }[] {
  const out: { group: string; versions: string[] }[] = [];
  for (const r of [...rs, ...(isFull(rs) ? REVIEW_RESOURCES : [])]) {
    if (r.group === '') continue;
    let g = out.find((x) => x.group === r.group);
    if (g === undefined) out.push((g = { group: r.group, versions: [] }));
    if (!g.versions.includes(r.version)) g.versions.push(r.version);
  }
  return out;
}

const resourcesOf = (rs: readonly ResourceInfo[], group: string, version: string): ResourceInfo[] =>
  rs.filter((r) => r.group === group && r.version === version);

function aggregatedResource(r: ResourceInfo, full: boolean): Record<string, unknown> {
  return {
    resource: r.resource,
    responseKind: { group: r.group, version: r.version, kind: r.kind },
    scope: r.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: r.singular,
    verbs: [...r.verbs],
    ...(r.shortNames.length > 0 ? { shortNames: [...r.shortNames] } : {}),
    ...(r.categories.length > 0 ? { categories: [...r.categories] } : {}),
    ...(full && subresourcesOf(r).length > 0
      ? {
          subresources: subresourcesOf(r).map((s) => ({
            subresource: s.name,
            responseKind: { ...s.kind },
            verbs: [...s.verbs],
          })),
        }
      : {}),
  };
}

/** The legacy core `bindings` resource (create only), listed as kube-apiserver lists it. */
const legacyBindingsAggregated = (): Record<string, unknown> => ({
  resource: LEGACY_BINDINGS.resource,
  responseKind: { group: '', version: 'v1', kind: LEGACY_BINDINGS.kind },
  scope: 'Namespaced',
  singularResource: LEGACY_BINDINGS.singular,
  verbs: [...LEGACY_BINDINGS.verbs],
});

function aggregatedGroup(
  rs: readonly ResourceInfo[],
  group: string,
  versions: string[],
): Record<string, unknown> {
  return {
    metadata: { name: group, creationTimestamp: null },
    versions: versions.map((version) => ({
      version,
      resources: [
        ...resourcesOf(rs, group, version).map((r) => aggregatedResource(r, isFull(rs))),
        ...(isFull(rs) && group === '' && version === 'v1' ? [legacyBindingsAggregated()] : []),
        ...reviewsOf(rs, group, version).map((r) => ({
          resource: r.resource,
          responseKind: { group: r.group, version: r.version, kind: r.kind },
          scope: 'Cluster',
          singularResource: r.singular,
          verbs: [...r.verbs],
        })),
      ],
      freshness: 'Current',
    })),
  };
}

export function aggregatedDiscovery(
  legacy: boolean,
  v: 'v2' | 'v2beta1',
  rs: readonly ResourceInfo[] = RESOURCES,
): Record<string, unknown> {
  const items = legacy
    ? [aggregatedGroup(rs, '', ['v1'])]
    : groups(rs).map((g) => aggregatedGroup(rs, g.group, g.versions));
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${v}`, metadata: {}, items };
}

export function apiVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function apiGroup(group: string, versions: string[]): Record<string, unknown> {
  const vs = versions.map((version) => ({ groupVersion: `${group}/${version}`, version }));
  return { name: group, versions: vs, preferredVersion: vs[0] };
}

export function apiGroupList(rs: readonly ResourceInfo[] = RESOURCES): Record<string, unknown> {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: groups(rs).map((g) => apiGroup(g.group, g.versions)),
  };
}

export function apiGroupDoc(
  group: string,
  rs: readonly ResourceInfo[] = RESOURCES,
): Record<string, unknown> | undefined {
  const g = groups(rs).find((x) => x.group === group);
  return g === undefined
    ? undefined
    : { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup(g.group, g.versions) };
}

export function apiResourceList(
  group: string,
  version: string,
  table: readonly ResourceInfo[] = RESOURCES,
): Record<string, unknown> | undefined {
  const rs = resourcesOf(table, group, version);
  const reviews = reviewsOf(table, group, version);
  if (rs.length === 0 && reviews.length === 0) return undefined;
  const full = isFull(table);
  const resources: Record<string, unknown>[] = [];
  for (const r of rs) {
    resources.push({
      name: r.resource,
      singularName: r.singular,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: [...r.verbs],
      ...(r.shortNames.length > 0 ? { shortNames: [...r.shortNames] } : {}),
      ...(r.categories.length > 0 ? { categories: [...r.categories] } : {}),
    });
    for (const s of full ? subresourcesOf(r) : []) {
      const own = s.kind.group === r.group && s.kind.version === r.version;
      resources.push({
        name: `${r.resource}/${s.name}`,
        singularName: '',
        namespaced: r.namespaced,
        ...(own ? {} : { group: s.kind.group, version: s.kind.version }),
        kind: s.kind.kind,
        verbs: [...s.verbs],
      });
    }
  }
  if (full && group === '' && version === 'v1') {
    resources.push({
      name: LEGACY_BINDINGS.resource,
      singularName: LEGACY_BINDINGS.singular,
      namespaced: true,
      kind: LEGACY_BINDINGS.kind,
      verbs: [...LEGACY_BINDINGS.verbs],
    });
  }
  for (const r of reviews)
    resources.push({
      name: r.resource,
      singularName: r.singular,
      namespaced: false,
      kind: r.kind,
      verbs: [...r.verbs],
    });
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersion({ group, version }),
    resources,
  };
}
