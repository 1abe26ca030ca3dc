// v1 Pod and PodSpec defaulting (SetDefaults_Pod, _PodSpec, _Container, probes, volumes) and the
// status a new Pod starts with (phase Pending, its QoS class).
import { type Obj, absent, child, ensureChild, items, setDefault, setDefaultString } from './util.js';

export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;
export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
const DEFAULT_MODE = 0o644;

/** The image's tag and digest as the docker reference grammar splits them. */
function tagAndDigest(image: string): { tag: string; digest: string } {
  const at = image.indexOf('@');
  const digest = at === -1 ? '' : image.slice(at + 1);
  const name = at === -1 ? image : image.slice(0, at);
  const colon = name.lastIndexOf(':');
  const tag = colon > name.lastIndexOf('/') ? name.slice(colon + 1) : '';
  return { tag, digest };
}

/** Always for `:latest` or an untagged, undigested image; IfNotPresent otherwise. */
export function defaultPullPolicy(image: string): 'Always' | 'IfNotPresent' {
  if (image.trim() === '' || /\s/.test(image)) return 'IfNotPresent';
  const { tag, digest } = tagAndDigest(image);
  if (tag === 'latest') return 'Always';
  return tag === '' && digest === '' ? 'Always' : 'IfNotPresent';
}

function defaultProbe(probe: Obj | undefined): void {
  if (probe === undefined) return;
  setDefault(probe, 'timeoutSeconds', 1);
  setDefault(probe, 'periodSeconds', 10);
  setDefault(probe, 'successThreshold', 1);
  setDefault(probe, 'failureThreshold', 3);
  const httpGet = child(probe, 'httpGet');
  if (httpGet !== undefined) {
    setDefaultString(httpGet, 'path', '/');
    setDefaultString(httpGet, 'scheme', 'HTTP');
  }
}

function defaultContainer(ctr: Obj, hostNetwork: boolean): void {
  setDefaultString(ctr, 'terminationMessagePath', '/dev/termination-log');
  setDefaultString(ctr, 'terminationMessagePolicy', 'File');
  if (absent(ctr, 'imagePullPolicy') || ctr['imagePullPolicy'] === '') {
    ctr['imagePullPolicy'] = defaultPullPolicy(typeof ctr['image'] === 'string' ? ctr['image'] : '');
  }
  for (const port of items(ctr, 'ports')) {
    setDefaultString(port, 'protocol', 'TCP');
    if (
      hostNetwork &&
      (absent(port, 'hostPort') || port['hostPort'] === 0) &&
      typeof port['containerPort'] === 'number'
    ) {
      port['hostPort'] = port['containerPort'];
    }
  }
  const resources = ensureChild(ctr, 'resources');
  const limits = resources === undefined ? undefined : child(resources, 'limits');
  if (resources !== undefined && limits !== undefined && Object.keys(limits).length > 0) {
    // Requests default to limits, resource by resource.
    const requests = ensureChild(resources, 'requests');
    if (requests !== undefined)
      for (const [k, v] of Object.entries(limits)) if (absent(requests, k)) requests[k] = v;
  }
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) defaultProbe(child(ctr, probe));
  for (const env of items(ctr, 'env')) {
    const fieldRef = child(child(env, 'valueFrom') ?? {}, 'fieldRef');
    if (fieldRef !== undefined) setDefaultString(fieldRef, 'apiVersion', 'v1');
  }
}

function defaultVolume(vol: Obj): void {
  const sources = Object.keys(vol).filter((k) => k !== 'name' && !absent(vol, k));
  if (sources.length === 0) vol['emptyDir'] = {};
  for (const key of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const src = child(vol, key);
    if (src !== undefined) setDefault(src, 'defaultMode', DEFAULT_MODE);
  }
  const hostPath = child(vol, 'hostPath');
  if (hostPath !== undefined) setDefault(hostPath, 'type', '');
}

/** Default a PodSpec in place; `isPod` adds what only a Pod's own spec gets (enableServiceLinks). */
export function defaultPodSpec(spec: Obj, isPod: boolean): void {
  setDefaultString(spec, 'dnsPolicy', 'ClusterFirst');
  setDefaultString(spec, 'restartPolicy', 'Always');
  setDefault(spec, 'securityContext', {});
  setDefault(spec, 'terminationGracePeriodSeconds', DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
  setDefaultString(spec, 'schedulerName', DEFAULT_SCHEDULER_NAME);
  if (isPod) setDefault(spec, 'enableServiceLinks', true);
  const hostNetwork = spec['hostNetwork'] === true;
  for (const list of ['containers', 'initContainers'])
    for (const c of items(spec, list)) defaultContainer(c, hostNetwork);
  for (const vol of items(spec, 'volumes')) defaultVolume(vol);
}

/** A PodTemplateSpec's spec (Deployments, DeploymentGrid templates). */
export function defaultPodTemplate(template: Obj | undefined): void {
  if (template === undefined) return;
  const spec = ensureChild(template, 'spec');
  if (spec !== undefined) defaultPodSpec(spec, false);
}

/** BestEffort, Burstable or Guaranteed, from the containers' cpu and memory requests and limits. */
export function podQOSClass(spec: Obj): 'BestEffort' | 'Burstable' | 'Guaranteed' {
  const containers = [...items(spec, 'containers'), ...items(spec, 'initContainers')];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const res = child(c, 'resources') ?? {};
    const req = child(res, 'requests') ?? {};
    const lim = child(res, 'limits') ?? {};
    for (const r of ['cpu', 'memory']) {
      if (!absent(req, r) || !absent(lim, r)) any = true;
      if (absent(lim, r) || (!absent(req, r) && String(req[r]) !== String(lim[r]))) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/**
 * Pod defaults, and the status a new Pod starts with: phase Pending and its QoS class when the client
 * sent no status or one without a phase (`kubectl run` sends `status: {}`).
 */
export function defaultPod(obj: Obj): void {
  const spec = ensureChild(obj, 'spec');
  if (spec !== undefined) defaultPodSpec(spec, true);
  const status = ensureChild(obj, 'status');
  if (status !== undefined && absent(status, 'phase')) status['phase'] = 'Pending';
  // podStrategy.PrepareForCreate sets it with the phase; a status that names a phase (the registry sets
  // Pending on create) still gets it.
  if (status !== undefined && status['phase'] === 'Pending')
    setDefault(status, 'qosClass', podQOSClass(spec ?? {}));
}
