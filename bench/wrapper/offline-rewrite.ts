// The offline step: with every Service cached, the upstream API server stops, and the node's kubelet
// (a stand-in serving a PodList, test/support/fake-kubelet.ts) reports one of its pods at a new IP at a time. Each change is timed from the kubelet's
// first /pods answer carrying it to the arrival, on a raw HTTPS watch through the wrapper, of the
// rewritten EndpointSlice with the new address. The pods are real upstream pods on the wrapper's node,
// one per Service of their own (a selector each), whose slices the EndpointSlice controller made before
// the upstream stopped; the kubelet serves them as the API server had them, then with new IPs.
import type { KObject } from '../../src/api/object.js';
import { sleep } from '../lib/process.js';
import { Watch } from '../lib/watch.js';
import { median, percentile } from '../run.js';
import { getJson, sendAll, type List } from './api.js';
import type { FakeKubelet } from '../../test/support/fake-kubelet.js';
import { epochMs } from '../lib/http.js';
import { SERVICE_NAME_LABEL, SLICES_PATH, type ShapeNode } from './shape.js';
import type { Session } from './session.js';

const LABEL = 'bench.svcplane.io/offline';

export interface OfflineInputs extends Session {
  /** The wrapper's node. */
  readonly client: ShapeNode;
  readonly kubelet: FakeKubelet;
  /** Stops the upstream API server for good. */
  readonly stopUpstream: () => Promise<void>;
}

export interface OfflineResult {
  readonly services: number;
  readonly warmup: number;
  /** Per timed change: /pods answer carrying it → the rewritten slice on the watch (ms). */
  readonly samplesMs: number[];
  readonly medianMs: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** Upstream stop → the first rewritten slice on the watch (s): when the wrapper took the kubelet's word. */
  readonly firstRewriteS: number;
  /** Changes whose event never came. */
  readonly missing: number;
  /** GET /pods the kubelet answered while the changes ran, per second. */
  readonly podsPollsPerSecond: number;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/** The addresses of a slice's endpoints. */
const addressesOf = (slice: KObject): string[] =>
  ((slice['endpoints'] as Array<{ addresses?: string[] }> | undefined) ?? []).flatMap(
    (e) => e.addresses ?? [],
  );

export async function measureOfflineRewrite(inputs: OfflineInputs): Promise<OfflineResult> {
  const { ctx, z, shape, wAgent, wc, upAgent, up, client, kubelet, stopUpstream } = inputs;
  const ns = shape.namespaces[0]!;
  const count = z.offlineChanges + z.offlineWarmup;
  const names = Array.from({ length: count }, (_, k) => `offline-${pad(k)}`);
  const ipOf = (round: number, k: number): string => `10.${250 + round}.0.${k + 1}`;
  const writes = names.flatMap((name) => [
    {
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/services`,
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name, namespace: ns },
        spec: { selector: { [LABEL]: name }, ports: [{ port: 80, targetPort: 8080, protocol: 'TCP' }] },
      }),
    },
    {
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/pods`,
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: ns, labels: { [LABEL]: name } },
        spec: {
          nodeName: client.name,
          containers: [
            { name: 'echo', image: 'echoserver', ports: [{ containerPort: 8080, protocol: 'TCP' }] },
          ],
        },
      }),
    },
  ]);
  await sendAll(upAgent, up, writes, 8);
  // Running and Ready, as the node's kubelet would report them.
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  await sendAll(
    upAgent,
    up,
    names.map((name, k) => ({
      method: 'PATCH',
      path: `/api/v1/namespaces/${ns}/pods/${name}/status`,
      contentType: 'application/merge-patch+json',
      body: JSON.stringify({
        status: {
          phase: 'Running',
          hostIP: '10.249.0.1',
          podIP: ipOf(0, k),
          podIPs: [{ ip: ipOf(0, k) }],
          conditions: ['Initialized', 'ContainersReady', 'Ready', 'PodScheduled'].map((type) => ({
            type,
            status: 'True',
            lastTransitionTime: now,
          })),
        },
      }),
    })),
    8,
  );
  const pods = (
    await getJson<List>(
      upAgent,
      up,
      `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(LABEL)}`,
    )
  ).items;
  pods.sort((a, b) => names.indexOf(a.metadata.name ?? '') - names.indexOf(b.metadata.name ?? ''));
  kubelet.pods = pods;
  const served = async (): Promise<Map<string, string[]>> => {
    const list = await getJson<List>(wAgent, wc, `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`);
    const out = new Map<string, string[]>();
    for (const s of list.items) {
      const svc = s.metadata.labels?.[SERVICE_NAME_LABEL] ?? '';
      if (names.includes(svc)) out.set(svc, [...(out.get(svc) ?? []), ...addressesOf(s)]);
    }
    return out;
  };
  for (let t = 0; ; t++) {
    const m = await served();
    if (names.every((n, k) => m.get(n)?.includes(ipOf(0, k)) === true)) break;
    if (t * 250 > z.eventTimeoutMs * 4)
      throw new Error(`offline: the wrapper never served the pods' slices (${m.size} of ${count})`);
    await sleep(250);
  }
  ctx.log(`offline: ${count} Services with a pod on ${client.name} served; stopping the upstream`);

  // Every slice event of the step's Services through the wrapper, with its arrival time.
  const arrivals: Array<{ svc: string; addresses: string[]; t: number }> = [];
  const rv = (await getJson<List>(wAgent, wc, `${SLICES_PATH}?limit=1`)).metadata.resourceVersion;
  const watch = new Watch(
    wc,
    `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
    (ev, t) => {
      const obj = ev.object as unknown as KObject;
      const svc = obj.metadata.labels?.[SERVICE_NAME_LABEL] ?? '';
      if (names.includes(svc)) arrivals.push({ svc, addresses: addressesOf(obj), t });
    },
    {},
    () => {},
    rv,
  );
  try {
    await watch.connected();
    const tStop = Date.now();
    await stopUpstream();
    const samplesMs: number[] = [];
    let missing = 0;
    let firstRewriteS = NaN;
    const answers0 = kubelet.requests.length;
    const t0 = Date.now();
    for (let k = 0; k < count; k++) {
      const ip = ipOf(1, k);
      const pod = pods[k]!;
      const status = pod['status'] as Record<string, unknown>;
      pods[k] = { ...pod, status: { ...status, podIP: ip, podIPs: [{ ip }] } };
      const mark = arrivals.length;
      // Every request after this one is answered with the change (the stand-in reads its pods per request).
      const asked = kubelet.requests.length;
      kubelet.pods = pods;
      // The first change also waits for the wrapper to take the kubelet's word (the upstream found away).
      const timeout = k === 0 ? z.eventTimeoutMs * 8 : z.eventTimeoutMs;
      const deadline = Date.now() + timeout;
      let hit: (typeof arrivals)[number] | undefined;
      while (hit === undefined && Date.now() < deadline) {
        hit = arrivals.slice(mark).find((a) => a.svc === names[k] && a.addresses.includes(ip));
        if (hit === undefined) await sleep(5);
      }
      // The stand-in stamps requests with Date.now(); the watch, with epochMs(): put them on one clock.
      const next = kubelet.requests[asked];
      const sent = next === undefined ? undefined : next.at + (epochMs() - Date.now());
      if (hit === undefined || sent === undefined) {
        missing++;
        continue;
      }
      if (k === 0) firstRewriteS = (hit.t - tStop) / 1000;
      if (k >= z.offlineWarmup) samplesMs.push(hit.t - sent);
    }
    const elapsedS = (Date.now() - t0) / 1000;
    // As a kubelet would require: every read carried the wrapper's credentials (a token, without a certificate).
    const anonymous = kubelet.requests.filter((r) => r.authorization === undefined && !r.clientCert);
    if (anonymous.length > 0)
      throw new Error(`offline: ${anonymous.length} kubelet reads without credentials`);
    const result: OfflineResult = {
      services: count,
      warmup: z.offlineWarmup,
      samplesMs,
      medianMs: samplesMs.length === 0 ? NaN : median(samplesMs),
      p99Ms: samplesMs.length === 0 ? NaN : percentile(samplesMs, 99),
      maxMs: samplesMs.length === 0 ? NaN : Math.max(...samplesMs),
      firstRewriteS,
      missing,
      podsPollsPerSecond: (kubelet.requests.length - answers0) / elapsedS,
    };
    ctx.log(
      `offline: ${samplesMs.length} changes, /pods answer → rewritten slice median ${result.medianMs.toFixed(1)} ms, ` +
        `p99 ${result.p99Ms.toFixed(1)} ms; ${missing} missing`,
    );
    return result;
  } finally {
    watch.stop();
  }
}
