// Taints and tolerations, as component-helpers' scheduling/corev1 helpers match them.
import type { Taint, Toleration } from './types.js';

/**
 * A toleration tolerates a taint when its effect is empty or the same, its key is empty or the same,
 * and either its operator is Exists or its operator is Equal (or empty) with the same value.
 */
export function tolerates(t: Toleration, taint: Taint): boolean {
  if (t.effect !== undefined && t.effect !== '' && t.effect !== taint.effect) return false;
  if (t.key !== undefined && t.key !== '' && t.key !== taint.key) return false;
  const op = t.operator ?? '';
  if (op === 'Exists') return true;
  if (op === 'Equal' || op === '') return (t.value ?? '') === (taint.value ?? '');
  return false;
}

export const toleratedBy = (tolerations: readonly Toleration[], taint: Taint): boolean =>
  tolerations.some((t) => tolerates(t, taint));

/** The first taint (in node order) that no toleration tolerates, or undefined. */
export function firstUntolerated(
  taints: readonly Taint[],
  tolerations: readonly Toleration[],
): Taint | undefined {
  for (const taint of taints) if (!toleratedBy(tolerations, taint)) return taint;
  return undefined;
}

/** `{key: value}`, as TaintToleration prints an untolerated taint (`{key: }` for an empty value). */
export const formatTaint = (t: { readonly key: string; readonly value?: string | undefined }): string =>
  `{${t.key}: ${t.value ?? ''}}`;
