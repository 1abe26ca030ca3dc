// The flipper process: pod readiness flips at a steady rate, each a kubelet's strategic-merge PATCH of
// pods/NAME/status, timed from the PATCH response.
import type https from 'node:https';
import { performance } from 'node:perf_hooks';
import { agentFor, epochMs, request, type Conn } from '../lib/http.js';
import { namespaceOf, podKey, podName, type ClusterShape } from '../lib/preload.js';
import { serveWorker, sleep } from '../lib/process.js';
import { prng } from '../../src/storage/testing/helpers.js';
import { type Flip } from './watcher.js';
import { statusPatch } from '../lib/pod-status.js';

export interface FlipRequest {
  op: 'flips';
  conn: Conn;
  shape: ClusterShape;
  rate: number;
  durationMs: number;
  restoreAfterMs: number;
  seed: number;
}

async function flipsMain(msg: FlipRequest): Promise<Flip[]> {
  const { conn, shape } = msg;
  const agent: https.Agent = agentFor(conn, 16);
  try {
    // Opens the connections (TLS handshakes) before the first timed request.
    await Promise.all(Array.from({ length: 4 }, () => request(agent, conn, 'GET', '/version')));
    const random = prng(msg.seed);
    const pods = shape.services * shape.podsPerService;
    const used = new Set<number>();
    /** Pods flipped to not-ready whose PATCH was accepted, oldest first. */
    const down: Array<{ j: number; at: number }> = [];
    const flips: Flip[] = [];
    const inflight: Array<Promise<void>> = [];
    const send = (j: number, ready: boolean): void => {
      const s = Math.floor(j / shape.podsPerService);
      const r = j % shape.podsPerService;
      const ns = namespaceOf(shape, s);
      const flip: Flip = { pod: podKey(shape, s, r), ready, sentAt: epochMs(), acceptedAt: 0, status: 0 };
      flips.push(flip);
      inflight.push(
        request(agent, conn, 'PATCH', `/api/v1/namespaces/${ns}/pods/${podName(s, r)}/status`, {
          body: statusPatch(ready),
          contentType: 'application/strategic-merge-patch+json',
          keepText: true,
        }).then(
          (res) => {
            flip.acceptedAt = epochMs();
            flip.status = res.status;
            if (res.status !== 200) flip.error = (res.text ?? '').slice(0, 300);
            else if (!ready) down.push({ j, at: flip.acceptedAt });
          },
          (err: unknown) => {
            flip.acceptedAt = epochMs();
            flip.error = String(err);
          },
        ),
      );
    };
    const interval = 1000 / msg.rate;
    const total = Math.round((msg.durationMs / 1000) * msg.rate);
    const t0 = performance.now();
    for (let i = 0; i < total; i++) {
      const wait = t0 + i * interval - performance.now();
      if (wait > 0) await sleep(wait);
      const oldest = down[0];
      if (i % 2 === 1 && oldest !== undefined && epochMs() - oldest.at >= msg.restoreAfterMs) {
        down.shift();
        send(oldest.j, true);
        continue;
      }
      if (used.size >= pods) break;
      let j = Math.floor(random() * pods);
      while (used.has(j)) j = (j + 1) % pods;
      used.add(j);
      send(j, false);
    }
    await Promise.all(inflight);
    return flips;
  } finally {
    agent.destroy();
  }
}

export function flipperMain(): void {
  serveWorker<FlipRequest>((msg) => flipsMain(msg));
}
