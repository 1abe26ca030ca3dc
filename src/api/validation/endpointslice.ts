// EndpointSlice validation (pkg/apis/discovery/validation): address type, up to 1000 endpoints of
// 1-100 addresses each valid for the address type, node names, hostnames, hints, and up to 20000
// uniquely named ports.
import { FieldPath, type FieldError, duplicate, invalid, notSupported, required } from '../field-errors.js';
import { isFullyQualifiedDomainName, validateDNS1123Label, validateQualifiedName } from './formats.js';
import { isIPv4, isIPv6, validateNonSpecialIP } from './ip.js';
import type { ValidationOptions } from './options.js';
import { In } from './json.js';
import { validateLabels } from './labels.js';
import { tooMany } from './limits.js';
import { isDNS1123Subdomain, isValidLabelValue } from './names.js';

export const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const MAX_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 20000;
const MAX_TOPOLOGY_LABELS = 16;
const MAX_ZONE_HINTS = 8;
const MAX_NODE_HINTS = 8;

function validateHints(hints: In): FieldError[] {
  const errs: FieldError[] = [];
  const zones = hints.objs('forZones');
  if (zones.length > MAX_ZONE_HINTS) return [tooMany(hints.p('forZones'), zones.length, MAX_ZONE_HINTS)];
  const seenZones = new Set<string>();
  for (const z of zones) {
    const name = z.s('name');
    if (seenZones.has(name)) errs.push(duplicate(z.p('name'), name));
    else seenZones.add(name);
    for (const m of isValidLabelValue(name)) errs.push(invalid(z.p('name'), name, m));
  }
  const nodes = hints.objs('forNodes');
  if (nodes.length > MAX_NODE_HINTS)
    return [...errs, tooMany(hints.p('forNodes'), nodes.length, MAX_NODE_HINTS)];
  const seenNodes = new Set<string>();
  for (const n of nodes) {
    const name = n.s('name');
    if (seenNodes.has(name)) errs.push(duplicate(n.p('name'), name));
    else seenNodes.add(name);
    for (const m of isDNS1123Subdomain(name)) errs.push(invalid(n.p('name'), name, m));
  }
  return errs;
}

function validateEndpointsList(root: In, addressType: string, opts: ValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  const list = root.arr('endpoints') ?? [];
  if (list.length > MAX_ENDPOINTS) return [tooMany(root.p('endpoints'), list.length, MAX_ENDPOINTS)];
  for (const ep of root.objs('endpoints')) {
    const addrPath = ep.p('addresses');
    const addresses = ep.strs('addresses') ?? [];
    if (addresses.length === 0) errs.push(required(addrPath, 'must contain at least 1 address'));
    else if (addresses.length > MAX_ADDRESSES) errs.push(tooMany(addrPath, addresses.length, MAX_ADDRESSES));
    addresses.forEach((a, i) => {
      const p = addrPath.index(i);
      switch (addressType) {
        case 'IPv4':
          if (!isIPv4(a)) errs.push(invalid(p, a, 'must be a valid IPv4 address'));
          errs.push(...validateNonSpecialIP(p, a, { allowLoopback: opts.allowLoopbackEndpoints === true }));
          break;
        case 'IPv6':
          if (!isIPv6(a)) errs.push(invalid(p, a, 'must be a valid IPv6 address'));
          errs.push(...validateNonSpecialIP(p, a, { allowLoopback: opts.allowLoopbackEndpoints === true }));
          break;
        case 'FQDN':
          errs.push(...isFullyQualifiedDomainName(p, a));
          break;
      }
    });
    const nodeName = ep.str('nodeName');
    if (nodeName !== undefined)
      for (const m of isDNS1123Subdomain(nodeName)) errs.push(invalid(ep.p('nodeName'), nodeName, m));
    const topology = ep.strMap('deprecatedTopology');
    if (topology !== undefined && topology.size > MAX_TOPOLOGY_LABELS) {
      errs.push(tooMany(ep.p('deprecatedTopology'), topology.size, MAX_TOPOLOGY_LABELS));
    }
    errs.push(...validateLabels(topology, ep.p('deprecatedTopology')));
    const hostname = ep.str('hostname');
    if (hostname !== undefined) errs.push(...validateDNS1123Label(ep.p('hostname'), hostname));
    const hints = ep.obj('hints');
    if (hints !== undefined) errs.push(...validateHints(hints));
    const conditions = ep.obj('conditions');
    conditions?.bool('ready');
    conditions?.bool('serving');
    conditions?.bool('terminating');
    ep.str('zone');
    ep.obj('targetRef');
  }
  return errs;
}

function validatePorts(root: In): FieldError[] {
  const errs: FieldError[] = [];
  const list = root.arr('ports') ?? [];
  if (list.length > MAX_PORTS) return [tooMany(root.p('ports'), list.length, MAX_PORTS)];
  const names = new Set<string>();
  for (const port of root.objs('ports')) {
    const name = port.s('name');
    if (name !== '') errs.push(...validateDNS1123Label(port.p('name'), name));
    if (names.has(name)) errs.push(duplicate(port.p('name'), name));
    else names.add(name);
    const protocol = port.str('protocol');
    if (protocol === undefined) errs.push(required(port.p('protocol'), ''));
    else if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(port.p('protocol'), protocol, PROTOCOLS));
    const appProtocol = port.str('appProtocol');
    if (appProtocol !== undefined) errs.push(...validateQualifiedName(port.p('appProtocol'), appProtocol));
    port.int('port');
  }
  return errs;
}

export function validateEndpointSlice(
  obj: Record<string, unknown>,
  opts: ValidationOptions = {},
): FieldError[] {
  const errs: FieldError[] = [];
  const root = new In(obj, FieldPath.root(''), errs);
  const addressType = root.s('addressType');
  if (addressType === '') errs.push(required('addressType', ''));
  else if (!ADDRESS_TYPES.includes(addressType))
    errs.push(notSupported('addressType', addressType, ADDRESS_TYPES));
  errs.push(...validateEndpointsList(root, addressType, opts));
  errs.push(...validatePorts(root));
  return errs;
}

export function validateEndpointSliceUpdate(
  obj: Record<string, unknown>,
  old: Record<string, unknown>,
): FieldError[] {
  const now = typeof obj['addressType'] === 'string' ? obj['addressType'] : '';
  const before = typeof old['addressType'] === 'string' ? old['addressType'] : '';
  return now === before ? [] : [invalid('addressType', now, 'field is immutable')];
}
