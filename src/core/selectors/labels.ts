// Label selectors: the `labelSelector` query parameter, parsed as Kubernetes does; api/label-match.ts matches.
//
//   selector    := "" | requirement ("," requirement)*
//   requirement := ["!"] KEY
//                | KEY ("=" | "==" | "!=") VALUE?
//                | KEY ("in" | "notin") "(" VALUE? ("," VALUE?)* ")"
//                | KEY (">" | "<") INTEGER
//
// Whitespace separates tokens; `in`/`notin` are keywords only where an operator is expected. Keys must
// be qualified names and values label values. Error texts follow kube-apiserver's, which clients show.
import { int64 } from '../../api/label-match.js';
import { isQualifiedName, isValidLabelValue } from '../../api/validation/names.js';

export type LabelOperator =
  | 'Exists'
  | 'DoesNotExist'
  | 'Equals'
  | 'DoubleEquals'
  | 'NotEquals'
  | 'In'
  | 'NotIn'
  | 'GreaterThan'
  | 'LessThan';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** Sorted and without duplicates; empty for Exists and DoesNotExist. */
  readonly values: readonly string[];
}

/** A parsed selector: requirements sorted by key. No requirements matches everything. */
export interface LabelSelector {
  readonly requirements: readonly LabelRequirement[];
}

export class SelectorError extends Error {
  override readonly name = 'SelectorError';
}

type Tok =
  | { kind: 'id'; lit: string }
  | { kind: 'op'; lit: '!' | '=' | '==' | '!=' | '>' | '<' | '(' | ')' | ',' }
  | { kind: 'end'; lit: '' };

const SPECIAL = new Set(['!', '=', '>', '<', '(', ')', ',']);
const isSpace = (c: string): boolean =>
  c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v';

function tokenize(input: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (isSpace(c)) {
      i++;
    } else if (c === '!' || c === '=') {
      if (input[i + 1] === '=') {
        toks.push({ kind: 'op', lit: c === '!' ? '!=' : '==' });
        i += 2;
      } else {
        toks.push({ kind: 'op', lit: c });
        i++;
      }
    } else if (SPECIAL.has(c)) {
      toks.push({ kind: 'op', lit: c as '>' | '<' | '(' | ')' | ',' });
      i++;
    } else {
      let j = i;
      while (j < input.length && !SPECIAL.has(input[j]!) && !isSpace(input[j]!)) j++;
      toks.push({ kind: 'id', lit: input.slice(i, j) });
      i = j;
    }
  }
  toks.push({ kind: 'end', lit: '' });
  return toks;
}

const requirementError = (msg: string): SelectorError =>
  new SelectorError(`unable to parse requirement: ${msg}`);

/** Go's %q for the strings we quote: double quotes, with backslash and quote escaped. */
export const goQuote = (s: string): string => JSON.stringify(s);

class Parser {
  private pos = 0;
  constructor(private readonly toks: Tok[]) {}

  private peek(): Tok {
    return this.toks[this.pos]!;
  }
  private next(): Tok {
    return this.toks[this.pos++]!;
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    const first = this.peek();
    if (first.kind === 'end') return reqs;
    if (first.kind !== 'id' && first.lit !== '!') {
      throw new SelectorError(`found '${first.lit}', expected: !, identifier, or 'end of string'`);
    }
    for (;;) {
      reqs.push(this.requirement());
      const t = this.next();
      if (t.kind === 'end') return reqs;
      if (t.lit !== ',') throw new SelectorError(`found '${t.lit}', expected: ',' or 'end of string'`);
      const after = this.peek();
      if (after.kind !== 'id' && after.lit !== '!') {
        throw new SelectorError(`found '${after.lit}', expected: identifier after ','`);
      }
    }
  }

  private requirement(): LabelRequirement {
    let operator: LabelOperator | undefined;
    let t = this.next();
    if (t.lit === '!') {
      operator = 'DoesNotExist';
      t = this.next();
    }
    if (t.kind !== 'id') throw requirementError(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length > 0)
      throw requirementError(aggregate(keyErrs.map((e) => `key: Invalid value: ${goQuote(key)}: ${e}`)));
    const la = this.peek();
    if (operator === 'DoesNotExist' || la.kind === 'end' || la.lit === ',') {
      return { key, operator: operator ?? 'Exists', values: [] };
    }
    const opTok = this.next();
    operator = operatorOf(opTok);
    if (operator === undefined) {
      throw requirementError(`found '${opTok.lit}', expected: in, notin, =, ==, !=, gt, lt`);
    }
    const values = operator === 'In' || operator === 'NotIn' ? this.valueSet() : [this.exactValue()];
    return checkRequirement(key, operator, values);
  }

  /** One value after =, ==, !=, >, <. A missing value (end or ',') is the empty string. */
  private exactValue(): string {
    const t = this.peek();
    if (t.kind === 'end' || t.lit === ',') return '';
    this.next();
    if (t.kind !== 'id') throw requirementError(`found '${t.lit}', expected: identifier`);
    return t.lit;
  }

  /** "(" values ")" after in/notin; an empty slot between commas is the empty string. */
  private valueSet(): string[] {
    const open = this.next();
    if (open.lit !== '(') throw requirementError(`found '${open.lit}', expected: '('`);
    const values: string[] = [];
    const first = this.peek();
    if (first.lit === ')') {
      this.next();
      return values;
    }
    if (first.kind !== 'id' && first.lit !== ',') {
      throw requirementError(`found '${first.lit}', expected: ',', ')' or identifier`);
    }
    for (;;) {
      const t = this.peek();
      if (t.kind === 'id') {
        this.next();
        values.push(t.lit);
      } else {
        values.push('');
      }
      const sep = this.next();
      if (sep.lit === ')') return values;
      if (sep.lit !== ',') throw requirementError(`found '${sep.lit}', expected: ',' or ')'`);
    }
  }
}

function operatorOf(t: Tok): LabelOperator | undefined {
  if (t.kind === 'id') return t.lit === 'in' ? 'In' : t.lit === 'notin' ? 'NotIn' : undefined;
  switch (t.lit) {
    case '=':
      return 'Equals';
    case '==':
      return 'DoubleEquals';
    case '!=':
      return 'NotEquals';
    case '>':
      return 'GreaterThan';
    case '<':
      return 'LessThan';
    default:
      return undefined;
  }
}

const aggregate = (errs: string[]): string => (errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`);

/** Validates a requirement's values for its operator (kube-apiserver's NewRequirement rules). */
function checkRequirement(key: string, operator: LabelOperator, raw: string[]): LabelRequirement {
  const errs: string[] = [];
  if ((operator === 'In' || operator === 'NotIn') && raw.length === 0) {
    errs.push(`values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty`);
  }
  if (operator === 'GreaterThan' || operator === 'LessThan') {
    if (int64(raw[0]!) === undefined) {
      errs.push(
        `values[0]: Invalid value: ${goQuote(raw[0]!)}: for 'Gt', 'Lt' operators, the value must be an integer`,
      );
    }
  } else {
    raw.forEach((v, i) => {
      for (const e of isValidLabelValue(v))
        errs.push(`values[${i}][${key}]: Invalid value: ${goQuote(v)}: ${e}`);
    });
  }
  if (errs.length > 0) throw requirementError(aggregate(errs));
  return { key, operator, values: [...new Set(raw)].sort() };
}

const byKey = (a: LabelRequirement, b: LabelRequirement): number =>
  a.key < b.key ? -1 : a.key > b.key ? 1 : 0;

/** Parses a label selector string; throws SelectorError with kube-apiserver's message. */
export function parseLabelSelector(input: string): LabelSelector {
  const reqs = new Parser(tokenize(input)).parse();
  return { requirements: [...reqs].sort(byKey) };
}

/** The selector matching exactly the given labels (a Service's spec.selector). */
export function selectorFromSet(set: Readonly<Record<string, string>>): LabelSelector {
  return {
    requirements: Object.keys(set)
      .sort()
      .map((key) => ({ key, operator: 'Equals' as const, values: [set[key]!] })),
  };
}

export const isEverything = (sel: LabelSelector): boolean => sel.requirements.length === 0;

/** The canonical string (requirements by key, values sorted), which parses back to the same selector. */
export function labelSelectorToString(sel: LabelSelector): string {
  // "(,)" is the set holding only the empty value: "()" would be the (invalid) empty set.
  const set = (values: readonly string[]): string =>
    values.length === 1 && values[0] === '' ? '(,)' : `(${values.join(',')})`;
  return sel.requirements
    .map((r) => {
      switch (r.operator) {
        case 'Exists':
          return r.key;
        case 'DoesNotExist':
          return `!${r.key}`;
        case 'Equals':
          return `${r.key}=${r.values[0]}`;
        case 'DoubleEquals':
          return `${r.key}==${r.values[0]}`;
        case 'NotEquals':
          return `${r.key}!=${r.values[0]}`;
        case 'In':
          return `${r.key} in ${set(r.values)}`;
        case 'NotIn':
          return `${r.key} notin ${set(r.values)}`;
        case 'GreaterThan':
          return `${r.key}>${r.values[0]}`;
        case 'LessThan':
          return `${r.key}<${r.values[0]}`;
      }
    })
    .join(',');
}
