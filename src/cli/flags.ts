// Flag parsing shared by every subcommand: node's parseArgs in strict mode, with usage errors that
// exit with status 2 and a one-line reason, as kube-* binaries do.
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { errText } from '../api/err-text.js';
import { parseAutonomyFlag } from '../core/topology/health-report.js';

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export type FlagSpec = NonNullable<ParseArgsConfig['options']>;

export function parseFlags<T extends FlagSpec>(
  args: string[],
  options: T,
): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args, options, strict: true, allowPositionals: true });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (err) {
    const msg = errText(err);
    // Keep node's first sentence ("Unknown option '--x'"), drop its advice about positionals.
    throw new UsageError(msg.split('\n')[0]!.replace(/\. To specify a positional argument.*$/, ''));
  }
}

/**
 * A subcommand's flags and arguments, or undefined when it was asked for --help: the help text is then
 * written to `out` and the command returns 0.
 */
export function commandFlags<T extends FlagSpec>(
  args: string[],
  options: T,
  help: string,
  out: (s: string) => void,
): { values: Record<string, string | boolean | undefined>; positionals: string[] } | undefined {
  const parsed = parseFlags(args, options);
  if (parsed.values['help'] === true) {
    out(help);
    return undefined;
  }
  return parsed;
}

/** More positional arguments than the command takes (`allowed`) is a usage error naming the extra ones. */
export function noExtraArgs(positionals: readonly string[], allowed = 0): void {
  if (positionals.length > allowed)
    throw new UsageError(`unexpected arguments: ${positionals.slice(allowed).join(' ')}`);
}

/** A boolean as Go's strconv.ParseBool reads it (kube-* and SuperEdge flags: `--name=false`). */
export function goBool(name: string, raw: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(raw)) return false;
  throw new UsageError(`invalid value ${JSON.stringify(raw)} for --${name}: want true or false`);
}

export function intFlag(name: string, raw: string | boolean | undefined, min = 0): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (typeof raw !== 'string' || raw.trim() === '' || !Number.isSafeInteger(n) || n < min) {
    throw new UsageError(`invalid value ${JSON.stringify(raw)} for --${name}: want an integer >= ${min}`);
  }
  return n;
}

export function oneOf<T extends string>(
  name: string,
  raw: string | boolean | undefined,
  allowed: readonly T[],
  def: T,
): T {
  if (raw === undefined) return def;
  if (typeof raw !== 'string' || !(allowed as readonly string[]).includes(raw)) {
    throw new UsageError(
      `invalid value ${JSON.stringify(raw)} for --${name}: want one of ${allowed.join(', ')}`,
    );
  }
  return raw as T;
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A Go duration ("3m", "30s", "1m30s", "500ms") in milliseconds, as kube-* flags take them. */
export function durationFlag(name: string, raw: string | boolean | undefined, minMs = 1): number | undefined {
  if (raw === undefined) return undefined;
  const bad = (): UsageError =>
    new UsageError(`invalid value ${JSON.stringify(raw)} for --${name}: want a duration such as 3m or 30s`);
  if (typeof raw !== 'string' || !/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(raw)) throw bad();
  let ms = 0;
  for (const m of raw.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) ms += Number(m[1]) * DURATION_UNITS[m[2]!]!;
  if (!Number.isFinite(ms) || ms < minMs) throw bad();
  return Math.round(ms);
}

/** HOST:PORT (IPv6 in brackets). */
export function hostPort(flag: string, raw: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(raw);
  const port = m === null ? NaN : Number(m[3]);
  if (m === null || !(port >= 0 && port <= 65535))
    throw new UsageError(`--${flag}: ${JSON.stringify(raw)} is not HOST:PORT (e.g. 127.0.0.1:8080)`);
  return { host: m[1] ?? m[2]!, port };
}

/** Parsed flag values, by name. */
export type Flags = Record<string, string | boolean | undefined>;

/** A file a flag names, read whole; unreadable is a usage error naming the flag. */
export function readFlagFile(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `--${flag}: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
}

/** `--edge-health URL` (explain's and the dashboard's): an http or https URL, or undefined when not given. */
export function edgeHealthFlag(raw: string | boolean | undefined): string | undefined {
  if (typeof raw !== 'string') return undefined;
  try {
    parseAutonomyFlag(`address=${raw}`);
  } catch {
    throw new UsageError(`--edge-health: ${JSON.stringify(raw)} is not an http or https URL`);
  }
  return raw;
}
