// `--kubeconfig FILE --context NAME` as the client commands take them (`svcplane node`, `svcplane
// pod-status`): a named file must exist; without one, $KUBECONFIG and then ~/.kube/config, as kubectl.
import { existsSync } from 'node:fs';
import { kubeconfigTransport, type KubeconfigTransport } from '../runtime/kubeconfig.js';
import { UsageError } from './flags.js';
import { errText } from '../api/err-text.js';

/** The first line of an error's message: library errors can run to several lines. */
export const firstLine = (err: unknown): string => errText(err).split('\n')[0]!.trim();

/** The client commands' kubeconfig flags, to spread into their parse options. */
export const KUBECONFIG_FLAGS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
} as const;

/** Those flags' help lines, each description starting `width` characters after the indent. */
export function kubeconfigFlagsHelp(width: number): string {
  return [
    `  ${'--kubeconfig FILE'.padEnd(width)}default: $KUBECONFIG, then ~/.kube/config`,
    `  ${'--context NAME'.padEnd(width)}a kubeconfig context other than the current one`,
  ].join('\n');
}

/**
 * The transport the flags name. A bad --kubeconfig value is a UsageError; a kubeconfig that cannot be
 * loaded is reported through `loadError` (a usage error for some commands, a runtime one for others).
 */
export function transportFromFlags(
  values: Record<string, string | boolean | undefined>,
  loadError: (message: string, cause: unknown) => Error,
): KubeconfigTransport {
  const kubeconfig = values['kubeconfig'];
  if (kubeconfig !== undefined) {
    if (typeof kubeconfig !== 'string' || kubeconfig === '')
      throw new UsageError('--kubeconfig: must name a file');
    if (!existsSync(kubeconfig)) throw new UsageError(`--kubeconfig: ${kubeconfig} does not exist`);
  }
  const context = values['context'];
  try {
    return kubeconfigTransport({
      ...(typeof kubeconfig === 'string' ? { path: kubeconfig } : {}),
      ...(typeof context === 'string' && context !== '' ? { context } : {}),
    });
  } catch (err) {
    throw loadError(`cannot load the kubeconfig: ${firstLine(err)}`, err);
  }
}

/** `--kubeconfig FILE` as the controller commands require it (kube-controller-manager's): named and present. */
export function requiredKubeconfig(values: Record<string, string | boolean | undefined>): string {
  const kubeconfig = values['kubeconfig'];
  if (typeof kubeconfig !== 'string' || kubeconfig === '') throw new UsageError('--kubeconfig is required');
  if (!existsSync(kubeconfig)) throw new UsageError(`--kubeconfig: ${kubeconfig} does not exist`);
  return kubeconfig;
}

/** The transport of a required kubeconfig; one that cannot be loaded is a usage error. */
export function loadRequiredKubeconfig(path: string): KubeconfigTransport {
  try {
    return kubeconfigTransport({ path });
  } catch (err) {
    throw new UsageError(`--kubeconfig: ${(err as Error).message.split('\n')[0]}`);
  }
}
