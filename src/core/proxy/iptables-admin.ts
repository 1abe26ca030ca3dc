// What surrounds a restore: the jump rules from the built-in chains (kube-proxy ensures them one by one
// with `iptables -C` / `-I`, not through iptables-restore), reading iptables-save's chain list, finding the
// failing line in iptables-restore's error, and the restore text that removes everything (--cleanup).
import { isServiceChain } from './chain-names.js';

export interface JumpRule {
  readonly table: 'nat' | 'filter';
  /** The built-in chain the rule is inserted into. */
  readonly chain: string;
  /** The rule after the chain name, one argument each (for execFile: the comment is not quoted). */
  readonly args: string[];
}

const NEW = ['-m', 'conntrack', '--ctstate', 'NEW'];

const jump = (
  table: 'nat' | 'filter',
  chain: string,
  target: string,
  comment: string,
  extra: readonly string[] = [],
): JumpRule => ({ table, chain, args: [...extra, '-m', 'comment', '--comment', comment, '-j', target] });

/**
 * The jumps into kube-proxy's chains from the built-in ones, in kube-proxy's order (its iptablesJumpChains;
 * each is inserted at the top of its chain when missing).
 */
export function jumpRules(): JumpRule[] {
  const external = 'kubernetes externally-visible service portals';
  const portals = 'kubernetes service portals';
  const firewall = 'kube-proxy firewall rules';
  return [
    jump('filter', 'INPUT', 'KUBE-EXTERNAL-SERVICES', external, NEW),
    jump('filter', 'FORWARD', 'KUBE-EXTERNAL-SERVICES', external, NEW),
    jump('filter', 'INPUT', 'KUBE-NODEPORTS', 'kubernetes health check service ports'),
    jump('filter', 'FORWARD', 'KUBE-SERVICES', portals, NEW),
    jump('filter', 'OUTPUT', 'KUBE-SERVICES', portals, NEW),
    jump('filter', 'FORWARD', 'KUBE-FORWARD', 'kubernetes forwarding rules'),
    jump('filter', 'INPUT', 'KUBE-PROXY-FIREWALL', firewall, NEW),
    jump('filter', 'OUTPUT', 'KUBE-PROXY-FIREWALL', firewall, NEW),
    jump('filter', 'FORWARD', 'KUBE-PROXY-FIREWALL', firewall, NEW),
    jump('nat', 'OUTPUT', 'KUBE-SERVICES', portals),
    jump('nat', 'PREROUTING', 'KUBE-SERVICES', portals),
    jump('nat', 'POSTROUTING', 'KUBE-POSTROUTING', 'kubernetes postrouting rules'),
  ];
}

/** The chains this proxy owns in each table, besides the per-service ones (what --cleanup removes). */
const OWNED: Readonly<Record<'nat' | 'filter', ReadonlySet<string>>> = {
  nat: new Set(['KUBE-SERVICES', 'KUBE-NODEPORTS', 'KUBE-POSTROUTING', 'KUBE-MARK-MASQ']),
  filter: new Set([
    'KUBE-SERVICES',
    'KUBE-EXTERNAL-SERVICES',
    'KUBE-FORWARD',
    'KUBE-NODEPORTS',
    'KUBE-PROXY-FIREWALL',
  ]),
};

/**
 * --cleanup: restore text that flushes, then deletes, every chain this proxy owns among `existing` (its
 * fixed chains and every per-service chain). Chains of others that happen to start with KUBE- (kubelet's
 * KUBE-FIREWALL, KUBE-KUBELET-CANARY) are left alone, as kube-proxy's CleanupLeftovers does. The jumps from
 * the built-in chains (jumpRules) must be deleted first. Empty when there is nothing to remove.
 */
export function renderCleanup(existing: { nat: readonly string[]; filter: readonly string[] }): string {
  const lines: string[] = [];
  for (const table of ['nat', 'filter'] as const) {
    const chains = [...new Set(existing[table])].filter((c) => OWNED[table].has(c) || isServiceChain(c));
    if (chains.length === 0) continue;
    lines.push(`*${table}`, ...chains.map((c) => `:${c} - [0:0]`), ...chains.map((c) => `-X ${c}`), 'COMMIT');
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/**
 * The chain names per table in iptables-save output (`:NAME POLICY [packets:bytes]` lines under `*nat` and
 * `*filter`; built-in chains included, other tables and comments ignored).
 */
export function parseSaveChains(save: string): { nat: string[]; filter: string[] } {
  const out = { nat: [] as string[], filter: [] as string[] };
  let table: string[] | undefined;
  for (const raw of save.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('*')) {
      const name = line.slice(1);
      table = name === 'nat' ? out.nat : name === 'filter' ? out.filter : undefined;
    } else if (line === 'COMMIT') table = undefined;
    else if (table !== undefined && line.startsWith(':')) {
      const name = line.slice(1).split(/\s+/)[0] ?? '';
      if (name !== '') table.push(name);
    }
  }
  return out;
}

/**
 * The input line iptables-restore (or ip6tables-restore) failed on, from its stderr, or undefined. It prints
 * "iptables-restore: line 5 failed" (legacy and nf_tables), "iptables-restore v1.8.9 (nf_tables): line 5:
 * RULE_APPEND failed (...)", or a parse error ending in "Error occurred at line: 5".
 */
export function failedLine(stderr: string): number | undefined {
  const m =
    /Error occurred at line:\s*(\d+)/i.exec(stderr) ??
    /\bline (\d+) failed/i.exec(stderr) ??
    /\bline (\d+):/i.exec(stderr) ??
    /\bat line:? (\d+)/i.exec(stderr);
  if (m === null) return undefined;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}
