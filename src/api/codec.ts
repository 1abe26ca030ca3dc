// How objects are stored: JSON bytes without metadata.resourceVersion (the store's modRevision is the
// resourceVersion, as in kube-apiserver's etcd3 storage), decoded with the revision put back.
import type { KObject } from './object.js';
import type { ResourceInfo } from './resources.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeObject(obj: KObject): Uint8Array {
  const { resourceVersion: _rv, ...meta } = obj.metadata;
  return encoder.encode(JSON.stringify({ ...obj, metadata: meta }));
}

export function decodeObject(value: Uint8Array, revision: number): KObject {
  const obj = JSON.parse(decoder.decode(value)) as KObject;
  obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: String(revision) };
  return obj;
}

/** The store key of one object: `/services/specs/default/web`, `/minions/node-1`. */
export const objectKey = (r: ResourceInfo, namespace: string, name: string): string =>
  r.namespaced ? `/${r.storagePath}/${namespace}/${name}` : `/${r.storagePath}/${name}`;

/** The key prefix of every object of a resource, or of one namespace of it. */
export const resourcePrefix = (r: ResourceInfo, namespace?: string): string =>
  r.namespaced && namespace !== undefined && namespace !== ''
    ? `/${r.storagePath}/${namespace}/`
    : `/${r.storagePath}/`;
