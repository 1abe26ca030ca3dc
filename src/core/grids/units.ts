// DeploymentGrid planning, the pure parts: which units exist, what each unit's Deployment is called,
// and which template it uses. SuperEdge's contract where users depend on it (its
// application-grid-controller), without its defects: names are always valid (SuperEdge
// used `<dg>-<value>` unchecked, which upper-case or `_` values break), and the unit value is never
// parsed back out of a name (it travels in a label).
import { DNS1123_SUBDOMAIN_MAX_LENGTH, isDNS1123Subdomain } from '../../api/validation/names.js';
import { fnv1aHex } from './objects.js';

/** The distinct non-empty values of `key` among the nodes' labels, sorted: one unit each. */
export function unitsOf(
  nodeLabels: ReadonlyArray<Readonly<Record<string, string>> | undefined>,
  key: string,
): string[] {
  const values = new Set<string>();
  for (const labels of nodeLabels) {
    const v = labels?.[key];
    if (v !== undefined && v !== '') values.add(v);
  }
  return [...values].sort();
}

/** Characters of the hash suffix a rewritten name ends with (fnv1aHex). */
const HASH_CHARS = 8;

/**
 * The name of a grid's object for one unit: `<grid>-<value>` when that is a valid object name (a
 * DNS-1123 subdomain), as SuperEdge names it. Otherwise a lower-cased form with every run of other
 * characters (dots too) turned into one `-`, cut to fit, and ended with `-` and a hash of the value, so two values that read the
 * same after the rewrite (`Zone_A`, `zone-a`) still get different names, and a value always gets the
 * same one.
 */
export function unitObjectName(grid: string, value: string): string {
  const plain = `${grid}-${value}`;
  if (isDNS1123Subdomain(plain).length === 0) return plain;
  const hash = fnv1aHex(value);
  const room = DNS1123_SUBDOMAIN_MAX_LENGTH - HASH_CHARS - 1;
  const body = plain
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, room)
    .replace(/^-+|-+$/g, '');
  return body === '' ? `u-${hash}` : `${body}-${hash}`;
}

export interface TemplateChoice<T> {
  /** The template's name: `default` for spec.template, else the templatePool key. */
  readonly name: string;
  readonly template: T;
}

export interface GridTemplates<T> {
  readonly template?: T;
  readonly templatePool?: Readonly<Record<string, T>>;
  readonly templates?: Readonly<Record<string, string>>;
  readonly defaultTemplateName?: string;
}

/**
 * The template a unit uses, as SuperEdge chooses it: `templates[value]` names a templatePool entry;
 * without one, `defaultTemplateName`; `""` or `default` means spec.template. A name missing from the
 * pool is an error for this unit only.
 */
export function chooseTemplate<T>(
  spec: GridTemplates<T>,
  value: string,
): TemplateChoice<T> | { readonly error: string } {
  const named =
    spec.templates !== undefined && Object.hasOwn(spec.templates, value) ? spec.templates[value] : undefined;
  const name = named ?? spec.defaultTemplateName ?? '';
  if (name === '' || name === 'default') {
    if (spec.template === undefined) return { error: 'spec.template is not set' };
    return { name: 'default', template: spec.template };
  }
  const pool = spec.templatePool ?? {};
  if (!Object.hasOwn(pool, name)) return { error: `template "${name}" is not in spec.templatePool` };
  return { name, template: pool[name]! };
}
