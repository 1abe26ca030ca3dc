// meta.k8s.io Table and PartialObjectMetadata renderings of objects (kubectl get asks for Tables).
import type { KObject } from '../../api/object.js';
import { columnsFor, rowCells } from '../../api/printers/index.js';
import type { ResourceInfo } from '../../api/resources.js';

export type IncludeObject = 'None' | 'Metadata' | 'Object';

export function partialMetadata(obj: KObject, version: string): Record<string, unknown> {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${version}`, metadata: obj.metadata };
}

export function tableRow(
  r: ResourceInfo,
  obj: KObject,
  include: IncludeObject,
  version: string,
  nowMs: number,
): Record<string, unknown> {
  return {
    cells: rowCells(r, obj, nowMs),
    ...(include === 'None' ? {} : { object: include === 'Object' ? obj : partialMetadata(obj, version) }),
  };
}

export function table(
  r: ResourceInfo,
  objects: readonly KObject[],
  opts: {
    version: string;
    include: IncludeObject;
    resourceVersion?: string;
    continueToken?: string;
    nowMs: number;
  },
): Record<string, unknown> {
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${opts.version}`,
    metadata: {
      ...(opts.resourceVersion === undefined ? {} : { resourceVersion: opts.resourceVersion }),
      ...(opts.continueToken === undefined ? {} : { continue: opts.continueToken }),
    },
    columnDefinitions: columnsFor(r),
    rows: objects.map((o) => tableRow(r, o, opts.include, opts.version, opts.nowMs)),
  };
}

export function parseIncludeObject(raw: string | null): IncludeObject {
  return raw === 'None' || raw === 'Object' ? raw : 'Metadata';
}
