// Endpoints validation (validateEndpointSubsets): every subset has addresses, every address is a
// valid, non-special IP, ports are 1-65535 with a supported protocol and names when several.
import { FieldPath, type FieldError, invalid, notSupported, required } from '../field-errors.js';
import { isValidPortNum, validateDNS1123Label, validateQualifiedName } from './formats.js';
import { validateIP, validateNonSpecialIP } from './ip.js';
import { In } from './json.js';
import { isDNS1123Subdomain } from './names.js';
import type { ValidationOptions } from './options.js';

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];

function validateAddress(a: In, opts: ValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  const ip = a.s('ip');
  errs.push(...validateIP(a.p('ip'), ip));
  const hostname = a.s('hostname');
  if (hostname !== '') errs.push(...validateDNS1123Label(a.p('hostname'), hostname));
  const nodeName = a.str('nodeName');
  if (nodeName !== undefined)
    for (const m of isDNS1123Subdomain(nodeName)) errs.push(invalid(a.p('nodeName'), nodeName, m));
  errs.push(...validateNonSpecialIP(a.p('ip'), ip, { allowLoopback: opts.allowLoopbackEndpoints === true }));
  a.obj('targetRef');
  return errs;
}

/** An Endpoints or EndpointSlice-style port: name (required when several), number, protocol. */
export function validateEndpointPort(port: In, requireName: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const name = port.s('name');
  if (requireName && name === '') errs.push(required(port.p('name'), ''));
  else if (name !== '') errs.push(...validateDNS1123Label(port.p('name'), name));
  const num = port.int('port') ?? 0;
  for (const m of isValidPortNum(num)) errs.push(invalid(port.p('port'), num, m));
  const protocol = port.s('protocol');
  if (protocol === '') errs.push(required(port.p('protocol'), ''));
  else if (!PROTOCOLS.includes(protocol)) errs.push(notSupported(port.p('protocol'), protocol, PROTOCOLS));
  const appProtocol = port.str('appProtocol');
  if (appProtocol !== undefined) errs.push(...validateQualifiedName(port.p('appProtocol'), appProtocol));
  return errs;
}

export function validateEndpoints(obj: Record<string, unknown>, opts: ValidationOptions = {}): FieldError[] {
  const errs: FieldError[] = [];
  const root = new In(obj, FieldPath.root(''), errs);
  for (const ss of root.objs('subsets')) {
    const addresses = ss.objs('addresses');
    const notReady = ss.objs('notReadyAddresses');
    if (addresses.length === 0 && notReady.length === 0) {
      errs.push(required(ss.path, 'must specify `addresses` or `notReadyAddresses`'));
    }
    for (const a of addresses) errs.push(...validateAddress(a, opts));
    for (const a of notReady) errs.push(...validateAddress(a, opts));
    const ports = ss.objs('ports');
    for (const port of ports) errs.push(...validateEndpointPort(port, ports.length > 1));
  }
  return errs;
}
