// `svcplane crds`: print the apiextensions.k8s.io/v1 CustomResourceDefinitions of the superedge.io/v1
// kinds (api/schema/crds.ts), so that a real cluster serves ServiceGrid and DeploymentGrid the way
// svcplane does and `svcplane controller-manager` can run the grid controllers against it.
import { stringify } from 'yaml';
import { gridCRDs, type CustomResourceDefinition } from '../api/schema/crds.js';
import { UsageError, oneOf, commandFlags } from './flags.js';

export const CRDS_HELP = `Usage: svcplane crds [-o yaml|json]

Prints the CustomResourceDefinitions (apiextensions.k8s.io/v1) of the superedge.io/v1 kinds svcplane
serves, ServiceGrid (sg) and DeploymentGrid (dg): the same schemas, status subresource and printer
columns, so that any Kubernetes cluster serves them as svcplane does. For example:

  svcplane crds | kubectl apply --server-side -f -

Flags:
  -o, --output yaml|json   yaml (the default): one YAML document per CRD; json: a v1 List of both
`;

const FLAGS = {
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type CrdsFormat = 'yaml' | 'json';

/** The CRDs as text: a multi-document YAML stream, or a JSON `v1 List` as `kubectl get -o json` writes it. */
export function formatCRDs(crds: readonly CustomResourceDefinition[], format: CrdsFormat): string {
  if (format === 'json') {
    return `${JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items: crds }, null, 2)}\n`;
  }
  // lineWidth 0: descriptions stay on one line each instead of being folded.
  return crds.map((c) => `---\n${stringify(c, { aliasDuplicateObjects: false, lineWidth: 0 })}`).join('');
}

let quietOnClosedPipe = false;

/**
 * `svcplane crds | head` closes the pipe before the output is written: end quietly, as the other
 * programs of a shell pipeline do, rather than with an unhandled EPIPE error.
 */
function ignoreClosedStdout(): void {
  if (quietOnClosedPipe) return;
  quietOnClosedPipe = true;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });
}

export function crdsCommand(args: string[], out: (s: string) => void): number {
  const flags = commandFlags(args, FLAGS, CRDS_HELP, out);
  if (flags === undefined) return 0;
  const { values, positionals } = flags;
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument "${positionals[0]}" (svcplane crds takes no arguments)`);
  const format = oneOf('output', values['output'], ['yaml', 'json'] as const, 'yaml');
  ignoreClosedStdout();
  out(formatCRDs(gridCRDs(), format));
  return 0;
}
