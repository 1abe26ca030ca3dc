// One object version as the watch cache holds and serves it: its JSON (with the fields kube-apiserver
// always writes, and its resourceVersion), and what selectors read (labels, fields).
import type { KObject } from '../../api/object.js';
import { objectFields, type ResourceInfo } from '../../api/resources.js';
import { schemaFor } from '../../api/schema/index.js';
import { withZeroValues } from '../../api/schema/zero-values.js';
import type { JsonPacker } from '../../api/json-packer.js';

export interface CachedObject {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  readonly rv: number;
  /** The object as JSON, with metadata.resourceVersion = rv. */
  readonly json: string;
  /** json.length, known without unpacking it. */
  readonly size: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly fields: Readonly<Record<string, string>>;
  /**
   * Encodings of this object version shared by the watchers it is handed to (watch lines), while the
   * cache hands out one batch or one replay; the cache drops them afterwards, so an object that was once
   * an event does not keep a second copy of itself.
   */
  memo?: Map<string, Buffer> | undefined;
}

/**
 * The string, flat. V8 builds a large JSON.stringify result as a rope of parts; each LIST or watch line
 * that encodes it then copies it first (a 10,000-Service LIST allocated its whole size). Converting it to
 * a number flattens it in place, once, at 0.6 µs for a 1 KiB object (an engine behaviour, not a
 * language guarantee: if it stopped holding, only speed would change).
 */
function flat(s: string): string {
  void Number(s);
  return s;
}

/** A cached object version whose JSON may be kept packed (JsonPacker) once it has been handed out. */
export class Cached implements CachedObject {
  memo?: Map<string, Buffer> | undefined;
  readonly size: number;
  private text: string | undefined;
  private packed: string | undefined;
  private packer: JsonPacker | undefined;

  constructor(
    readonly key: string,
    readonly namespace: string,
    readonly name: string,
    readonly rv: number,
    json: string,
    readonly labels: Readonly<Record<string, string>>,
    readonly fields: Readonly<Record<string, string>>,
  ) {
    this.text = json;
    this.size = json.length;
  }

  /** The JSON; unpacked on every read once packed (each LIST, GET or replay pays for it). */
  get json(): string {
    return this.text ?? this.packer!.unpack(this.packed!);
  }

  get isPacked(): boolean {
    return this.text === undefined;
  }

  /** Keeps the JSON packed from now on. */
  pack(packer: JsonPacker): void {
    if (this.text === undefined) return;
    this.packed = packer.pack(this.text);
    this.packer = packer;
    this.text = undefined;
  }
}

export function toCached(r: ResourceInfo, key: string, obj: KObject): Cached {
  return new Cached(
    key,
    obj.metadata.namespace ?? '',
    obj.metadata.name ?? '',
    Number(obj.metadata.resourceVersion ?? 0),
    // What every LIST, watch event and cached GET serves: with the fields kube-apiserver always writes.
    flat(JSON.stringify(withZeroValues(obj, schemaFor(r.group, r.kind)))),
    obj.metadata.labels ?? {},
    objectFields(r, obj),
  );
}

export function restamp(r: ResourceInfo, o: CachedObject, rev: number): Cached {
  const obj = JSON.parse(o.json) as KObject;
  obj.metadata.resourceVersion = String(rev);
  return toCached(r, o.key, obj);
}
