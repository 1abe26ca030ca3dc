// String formats beyond names.ts, with kube-apiserver's messages: DNS-1035 labels (Service names),
// path-segment names, port names and numbers, percentages, fully qualified domain names, and the
// name-validator table that ObjectMeta validation picks from.
import { type FieldError, type FieldPath, invalid, required } from '../field-errors.js';
import { isDNS1123Label, isDNS1123Subdomain, isQualifiedName, maxLenError } from './names.js';

function regexError(msg: string, fmt: string, examples: string[]): string {
  const eg = examples.length === 0 ? '' : `e.g. '${examples.join("',  or '")}', `;
  return `${msg} (${eg}regex used for validation is '${fmt}')`;
}

const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";

/** RFC 1035 label: Service names (they become DNS labels and must start with a letter). */
export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!DNS1035_LABEL.test(value))
    errs.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, ['my-name', 'abc-123']));
  return errs;
}

/** Names that are only path segments: not "." or "..", no "/" or "%". */
export function isValidPathSegmentName(name: string, prefix = false): string[] {
  if (!prefix) {
    for (const bad of ['.', '..']) if (name === bad) return [`may not be '${bad}'`];
  }
  return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
}

export const inclusiveRangeError = (lo: number, hi: number): string =>
  `must be between ${lo} and ${hi}, inclusive`;

/** A TCP/UDP port number. */
export const isValidPortNum = (port: number): string[] =>
  port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)];

/** An IANA_SVC_NAME: a named port (container ports, targetPort names). */
export function isValidPortName(port: string): string[] {
  const errs: string[] = [];
  if (port.length > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(port))
    errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(port)) errs.push('must contain at least one letter (a-z)');
  if (port.includes('--')) errs.push('must not contain consecutive hyphens (--)');
  if (port.length > 0 && (port.startsWith('-') || port.endsWith('-'))) {
    errs.push('must not begin or end with a hyphen (-)');
  }
  return errs;
}

const PERCENT_FMT = '[0-9]+%';
export const isValidPercent = (s: string): string[] =>
  new RegExp(`^${PERCENT_FMT}$`).test(s)
    ? []
    : [
        regexError("a valid percent string must be a numeric string followed by an ending '%'", PERCENT_FMT, [
          '1%',
          '93%',
        ]),
      ];

/** An FQDN as EndpointSlice FQDN addresses need it: a subdomain with at least two labels. */
export function isFullyQualifiedDomainName(p: FieldPath, name: string): FieldError[] {
  if (name.length === 0) return [required(p, '')];
  const n = name.endsWith('.') ? name.slice(0, -1) : name;
  const sub = isDNS1123Subdomain(n);
  if (sub.length > 0) return [invalid(p, n, sub.join(','))];
  const labels = n.split('.');
  if (labels.length < 2)
    return [invalid(p, n, 'should be a domain with at least two segments separated by dots')];
  for (const label of labels) {
    const errs = isDNS1123Label(label);
    if (errs.length > 0) return [invalid(p, label, errs.join(','))];
  }
  return [];
}

/**
 * Replace a trailing dash, as generateName prefixes may end in one (upstream's maskTrailingDash
 * swaps the last two characters for "a"; a lone "-" is left as is and fails validation).
 */
export function maskTrailingDash(name: string): string {
  if (!name.endsWith('-') || name.length < 2) return name;
  return `${name.slice(0, -2)}a`;
}

export type NameRule = 'label' | 'subdomain' | 'path-segment' | 'dns1035';

/** The name validator for a rule; `prefix` is true for generateName. */
export function nameValidator(rule: NameRule): (name: string, prefix: boolean) => string[] {
  switch (rule) {
    case 'label':
      return (n, prefix) => isDNS1123Label(prefix ? maskTrailingDash(n) : n);
    case 'subdomain':
      return (n, prefix) => isDNS1123Subdomain(prefix ? maskTrailingDash(n) : n);
    case 'dns1035':
      return (n, prefix) => isDNS1035Label(prefix ? maskTrailingDash(n) : n);
    case 'path-segment':
      return isValidPathSegmentName;
  }
}

// Field-error builders over the string checks: one Invalid per message, at the given path.
const each =
  (check: (v: string) => string[]) =>
  (p: FieldPath, value: string): FieldError[] =>
    check(value).map((m) => invalid(p, value, m));

export const validateDNS1123Label = each(isDNS1123Label);
export const validateDNS1123Subdomain = each(isDNS1123Subdomain);
export const validateQualifiedName = each(isQualifiedName);
export const validatePortName = each(isValidPortName);
