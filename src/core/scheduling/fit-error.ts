// The FailedScheduling message, built as kube-scheduler's FitError.Error() builds it (framework/types.go)
// with the default preemption plugin's PostFilter message appended (framework/preemption):
//
//   0/<N> nodes are available: <count> <reason>, ... . preemption: 0/<N> nodes are available: <count> <why>..
//
// Reason histograms are sorted as strings ("10 x" before "2 y"); the nested preemption message ends in
// its own "." and the outer format adds another, so real messages end in "..".
import type { NodeFailure } from './filters.js';

export const NO_NODES_AVAILABLE = 'no nodes available to schedule pods';
export const PREEMPTION_NOT_HELPFUL = 'Preemption is not helpful for scheduling';
export const PREEMPTION_NO_VICTIMS = 'No preemption victims found for incoming pod';
export const PREEMPTION_NEVER = 'preemption: not eligible due to preemptionPolicy=Never.';
/** Events carry at most this many bytes of message (kube's events API limit). */
export const EVENT_MESSAGE_LIMIT = 1024;

function histogram(reasons: Iterable<string>): string {
  const counts = new Map<string, number>();
  for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  const parts = [...counts].map(([r, n]) => `${n} ${r}`);
  parts.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return parts.join(', ');
}

/** `0/N nodes are available: <histogram>.` over the given per-node failures. */
export function fitErrorBody(numAllNodes: number, failures: Iterable<NodeFailure>): string {
  const reasons: string[] = [];
  for (const f of failures) reasons.push(...f.reasons);
  return `0/${numAllNodes} nodes are available: ${histogram(reasons)}.`;
}

/**
 * What the default preemption plugin says when it finds nothing to do. svcplane does not preempt: nodes
 * whose failure preemption cannot fix are "not helpful", and every other node reports that no victims
 * were found (as upstream does when no lower-priority pod would make room).
 */
export function preemptionMessage(
  numAllNodes: number,
  failures: Iterable<NodeFailure>,
  preemptionNever: boolean,
): string {
  if (preemptionNever) return PREEMPTION_NEVER;
  const why: string[] = [];
  for (const f of failures) why.push(f.resolvable ? PREEMPTION_NO_VICTIMS : PREEMPTION_NOT_HELPFUL);
  return `preemption: 0/${numAllNodes} nodes are available: ${histogram(why)}.`;
}

/** The full FailedScheduling message (also the PodScheduled condition's message). */
export function failedSchedulingMessage(
  numAllNodes: number,
  failures: readonly NodeFailure[],
  preemptionNever = false,
): string {
  if (numAllNodes === 0) return NO_NODES_AVAILABLE;
  return `${fitErrorBody(numAllNodes, failures)} ${preemptionMessage(numAllNodes, failures, preemptionNever)}.`;
}

/** An event message cut to the API's limit, ending in " ..." when cut (on a UTF-8 boundary). */
export function truncateEventMessage(message: string, limit = EVENT_MESSAGE_LIMIT): string {
  const bytes = new TextEncoder().encode(message);
  if (bytes.length <= limit) return message;
  let end = limit - 4;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--; // do not split a character
  return `${new TextDecoder().decode(bytes.subarray(0, end))} ...`;
}
