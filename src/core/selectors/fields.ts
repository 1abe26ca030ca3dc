// Field selectors: the `fieldSelector` query parameter, parsed and matched as Kubernetes does.
//
//   selector := "" | term ("," term)*
//   term     := FIELD ("=" | "==" | "!=") VALUE
//
// Values may contain `\,`, `\=` and `\\` escapes. Which fields a resource supports is the caller's
// (the registry's) business; checkSupportedFields gives the upstream error for the others.
import { SelectorError } from './labels.js';

export type FieldOperator = 'Equals' | 'DoubleEquals' | 'NotEquals';

export interface FieldRequirement {
  readonly field: string;
  readonly operator: FieldOperator;
  readonly value: string;
}

/** Terms in the order given. No terms matches everything. */
export interface FieldSelector {
  readonly requirements: readonly FieldRequirement[];
}

/** Splits on commas that are not escaped with a backslash. */
function splitTerms(input: string): string[] {
  const terms: string[] = [];
  let start = 0;
  for (let i = 0; i < input.length; i++) {
    if (input[i] === '\\') i++;
    else if (input[i] === ',') {
      terms.push(input.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(input.slice(start));
  return terms;
}

/** Finds the first unescaped occurrence of `op` in a term. */
function indexOfUnescaped(term: string, op: string): number {
  for (let i = 0; i < term.length; i++) {
    if (term[i] === '\\') i++;
    else if (term.startsWith(op, i)) return i;
  }
  return -1;
}

function unescape(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\') {
      const n = value[i + 1];
      if (n !== '\\' && n !== ',' && n !== '=') {
        throw new SelectorError(`invalid field selector: invalid escape sequence: \\${n ?? ''}`);
      }
      out += n;
      i++;
    } else if (c === ',' || c === '=') {
      throw new SelectorError(`invalid field selector: unescaped ${c} in value`);
    } else {
      out += c;
    }
  }
  return out;
}

/** Parses a field selector; throws SelectorError with kube-apiserver's message. */
export function parseFieldSelector(input: string): FieldSelector {
  if (input.trim() === '') return { requirements: [] };
  const requirements = splitTerms(input).map((term): FieldRequirement => {
    // "!=" and "==" are looked for before "=", so "a!=b" is not read as field "a!" equal to "b".
    for (const [op, operator] of [
      ['!=', 'NotEquals'],
      ['==', 'DoubleEquals'],
      ['=', 'Equals'],
    ] as const) {
      const at = indexOfUnescaped(term, op);
      if (at >= 0) {
        return { field: term.slice(0, at), operator, value: unescape(term.slice(at + op.length)) };
      }
    }
    throw new SelectorError(`invalid selector: '${input}'; can't understand '${term}'`);
  });
  return { requirements };
}

/** Throws kube-apiserver's 400 message for the first field the resource does not support. */
export function checkSupportedFields(sel: FieldSelector, supported: ReadonlySet<string>): void {
  for (const r of sel.requirements) {
    if (!supported.has(r.field)) throw new SelectorError(`field label not supported: ${r.field}`);
  }
}

/** True when every term holds; a field the object lacks reads as "". */
export function matchesFields(sel: FieldSelector, fields: Readonly<Record<string, string>>): boolean {
  return sel.requirements.every((r) => {
    const v = Object.prototype.hasOwnProperty.call(fields, r.field) ? fields[r.field]! : '';
    return r.operator === 'NotEquals' ? v !== r.value : v === r.value;
  });
}

/** The value a selector requires `field` to equal exactly, if it does (e.g. metadata.name for a GET-like list). */
export function requiresExactMatch(sel: FieldSelector, field: string): string | undefined {
  const r = sel.requirements.find((x) => x.field === field && x.operator !== 'NotEquals');
  return r?.value;
}

const escapeValue = (v: string): string => v.replace(/[\\,=]/g, (c) => `\\${c}`);

export function fieldSelectorToString(sel: FieldSelector): string {
  return sel.requirements
    .map(
      (r) =>
        `${r.field}${r.operator === 'NotEquals' ? '!=' : r.operator === 'DoubleEquals' ? '==' : '='}${escapeValue(r.value)}`,
    )
    .join(',');
}
