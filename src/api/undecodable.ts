// Stored objects a typed client could not decode: JSON that does not parse, or a value of the wrong
// type for its kind's schema (schema/type-check.ts). A store written by an older svcplane may hold
// such an object; `svcplane store check` and the API server's start-up scan name each one.
import { RESOURCES, resourceId, type ResourceInfo } from './resources.js';
import { schemaFor } from './schema/index.js';
import { typeErrorText, typeErrors } from './schema/type-check.js';

export interface UndecodableObject {
  readonly resource: ResourceInfo;
  readonly key: string;
  /** From the key: the object's metadata may be what is broken. */
  readonly namespace: string;
  readonly name: string;
  /** One line each: `status: string where an object is expected`. */
  readonly problems: readonly string[];
}

// Longest prefix first, so `/services/specs/` never swallows a longer sibling.
const BY_PREFIX = RESOURCES.map((r) => ({ prefix: `/${r.storagePath}/`, r })).sort(
  (a, b) => b.prefix.length - a.prefix.length,
);

/** The served resource a store key belongs to; undefined for keys that hold no object (allocations). */
export const resourceForKey = (key: string): ResourceInfo | undefined =>
  BY_PREFIX.find((p) => key.startsWith(p.prefix))?.r;

/** What is wrong with the stored JSON of one object of `r`, or undefined when a typed client decodes it. */
export function checkStoredObject(r: ResourceInfo, key: string, json: string): UndecodableObject | undefined {
  let problems: string[];
  try {
    const value: unknown = JSON.parse(json);
    problems = typeErrors(schemaFor(r.group, r.kind) ?? {}, value).map(typeErrorText);
  } catch (err) {
    problems = [`not JSON: ${(err as Error).message}`];
  }
  if (problems.length === 0) return undefined;
  const rest = key.slice(`/${r.storagePath}/`.length);
  const slash = r.namespaced ? rest.indexOf('/') : -1;
  return {
    resource: r,
    key,
    namespace: slash < 0 ? '' : rest.slice(0, slash),
    name: slash < 0 ? rest : rest.slice(slash + 1),
    problems,
  };
}

/** `nodes n1` or `pods default/web`: the object as kubectl would name it. */
export const undecodableName = (o: UndecodableObject): string =>
  `${resourceId(o.resource)} ${o.namespace === '' ? o.name : `${o.namespace}/${o.name}`}`;

/** One line: `nodes n1: status: string where an object is expected; …`. */
export const undecodableLine = (o: UndecodableObject): string =>
  `${undecodableName(o)}: ${o.problems.join('; ')}`;
