// What `svcplane explain` reports for one node and Service, in both of its forms: the JSON object `-o json`
// prints and the text it prints without. One home for both, so the explain command and the dashboard's
// `api/explain` answer the same bytes for the same objects. Pure: the caller reads the objects.
import type { KObject } from '../../api/object.js';
import { offlineCondition, type OfflineCondition } from '../offline/mark.js';
import { renderExplanation } from './explain.js';
import type { Labels, TopologyDecision } from './types.js';

/** Where the endpoints came from, as `explain` names it: the slices read, else the Endpoints, else neither. */
export type EndpointsRead =
  | { readonly kind: 'slices'; readonly objects: readonly KObject[] }
  | { readonly kind: 'endpoints'; readonly object: KObject }
  | { readonly kind: 'none' };

export interface ExplainReportInput {
  readonly decision: TopologyDecision;
  /** The client node's labels; undefined when it is not a known Node. */
  readonly nodeLabels: Labels | undefined;
  readonly read: EndpointsRead;
  /** edge-health's answer when one was asked (`--edge-health`): node → Normal. */
  readonly health?: ReadonlyMap<string, boolean>;
  /** How many Nodes were read. */
  readonly nodes: number;
}

export interface ExplainReport {
  /** The object `svcplane explain -o json` prints (JSON.stringify(json, null, 2)). */
  readonly json: TopologyDecision & {
    readonly nodeLabels: Labels | null;
    readonly source: string;
    readonly conditions: readonly OfflineCondition[];
  };
  /** What `svcplane explain` prints without `-o`. */
  readonly text: string;
}

/** The `source` text: how many slices, `Endpoints`, or neither, then edge-health's unhealthy nodes. */
function sourceText(read: EndpointsRead, health: ReadonlyMap<string, boolean> | undefined): string {
  const n = read.kind === 'slices' ? read.objects.length : 0;
  let source =
    read.kind === 'endpoints'
      ? 'Endpoints'
      : n > 0
        ? `${n} EndpointSlice${n === 1 ? '' : 's'}`
        : 'no EndpointSlices or Endpoints';
  if (health !== undefined) {
    const unhealthy = [...health].filter(([, ok]) => !ok).map(([node]) => node);
    source += `, edge-health (${unhealthy.length === 0 ? 'no node' : unhealthy.join(', ')} unhealthy)`;
  }
  return source;
}

/** Builds explain's report. */
export function explainReport(i: ExplainReportInput): ExplainReport {
  const source = sourceText(i.read, i.health);
  // Read through a wrapper that rewrote them from its node's kubelet (the upstream away): say so.
  const offline = offlineCondition(
    i.read.kind === 'slices' ? i.read.objects : i.read.kind === 'endpoints' ? [i.read.object] : [],
  );
  const conditions = offline === undefined ? [] : [offline];
  const text =
    renderExplanation(i.decision, { nodeLabels: i.nodeLabels }).trimEnd() +
    conditions.map((c) => `\n\nCondition ${c.type}=${c.status} (${c.reason}): ${c.message}`).join('') +
    `\n\nRead from: ${source}, ${i.nodes} Nodes.`;
  return { json: { ...i.decision, nodeLabels: i.nodeLabels ?? null, source, conditions }, text };
}
