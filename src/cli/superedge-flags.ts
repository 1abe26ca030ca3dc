// SuperEdge's application-grid-wrapper flags, for a drop-in `svcplane wrapper` in SuperEdge's DaemonSet
// (whose command passes --notify-channel-size=10000): each is taken as SuperEdge spells it (Go's flag
// syntax: `--name=value`, `--name value`, and a bare `--name` for a boolean), then either applied,
// accepted with the reason it changes nothing here, or refused with what to use instead. The rest of
// the command line is left to the wrapper's own flags.
import { UsageError, goBool } from './flags.js';

export interface SuperEdgeFlags {
  /** SuperEdge's --wrapper-in-cluster (default true): rewrite default/kubernetes to the local endpoint. */
  readonly wrapperInCluster: boolean;
  /** One line for each flag accepted without effect, for the log. */
  readonly notes: readonly string[];
}

type Kind = 'bool' | 'int' | 'number' | 'string';

const FLAGS: Record<string, Kind> = {
  'wrapper-in-cluster': 'bool',
  'support-endpointslice': 'bool',
  insecure: 'bool',
  debug: 'bool',
  'notify-channel-size': 'int',
  'kube-qps': 'number',
  'kube-burst': 'int',
  'ca-file': 'string',
  'cert-file': 'string',
  'key-file': 'string',
};

const NO_EFFECT: Record<string, string> = {
  'notify-channel-size':
    "has no effect: svcplane bounds each watcher by the bytes it has queued and closes a watcher that falls behind (it relists), where SuperEdge's buffer of N events drops what overflows",
  'support-endpointslice': 'has no effect: EndpointSlices are always served (SuperEdge ignores the flag too)',
  'kube-qps': 'has no effect: the wrapper sends the upstream one list and one watch per resource',
  'kube-burst': 'has no effect: the wrapper sends the upstream one list and one watch per resource',
};

const REFUSED: Record<string, string> = {
  insecure:
    'svcplane serves HTTPS with authentication on --bind-address; for plain HTTP (kube-proxy pointed at http://127.0.0.1:51006) add --insecure-bind-address 127.0.0.1:51006 and give --bind-address another port',
  debug: 'svcplane has no pprof endpoints; its /metrics and structured logs cover what it does',
  'ca-file': 'svcplane generates its CA, serving certificate and client kubeconfig under --data-dir',
  'cert-file': 'svcplane generates its CA, serving certificate and client kubeconfig under --data-dir',
  'key-file': 'svcplane generates its CA, serving certificate and client kubeconfig under --data-dir',
};

/** What Go's flag package would accept (these flags change nothing here, so no more is asked). */
function check(name: string, kind: Kind, raw: string): void {
  if (kind === 'int' && !/^[+-]?\d+$/.test(raw))
    throw new UsageError(`invalid value ${JSON.stringify(raw)} for --${name}: want an integer`);
  if (kind === 'number' && !(raw.trim() !== '' && Number.isFinite(Number(raw))))
    throw new UsageError(`invalid value ${JSON.stringify(raw)} for --${name}: want a number`);
}

/** Takes SuperEdge's flags out of `args`; what is left goes to the wrapper's own flag parsing. */
export function superEdgeFlags(args: readonly string[]): { rest: string[]; flags: SuperEdgeFlags } {
  const rest: string[] = [];
  const notes: string[] = [];
  let wrapperInCluster = true;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      rest.push(...args.slice(i));
      break;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(a);
    const kind = m === null ? undefined : FLAGS[m[1]!];
    if (m === null || kind === undefined) {
      rest.push(a);
      continue;
    }
    const name = m[1]!;
    let raw = m[2];
    if (raw === undefined) {
      if (kind === 'bool') raw = 'true';
      else if (i + 1 < args.length) raw = args[++i]!;
      else throw new UsageError(`--${name} needs a value`);
    }
    if (kind === 'bool') {
      const on = goBool(name, raw);
      if (name === 'wrapper-in-cluster') wrapperInCluster = on;
      else if ((name === 'insecure' || name === 'debug') && on)
        throw new UsageError(`--${name} (SuperEdge's) is not supported: ${REFUSED[name]!}`);
      else if (name === 'support-endpointslice') notes.push(`--${name}=${raw} ${NO_EFFECT[name]!}`);
      continue;
    }
    check(name, kind, raw);
    if (REFUSED[name] !== undefined) {
      if (raw === '') continue; // an empty path is Go's default: the flag is not in use
      throw new UsageError(`--${name} (SuperEdge's) is not supported: ${REFUSED[name]}`);
    }
    notes.push(`--${name}=${raw} ${NO_EFFECT[name]!}`);
  }
  return { rest, flags: { wrapperInCluster, notes } };
}
