// `npm run bench -- <name> [--quick]`: runs bench/<name>/index.ts, prints its table and writes
// bench/results/<name>.json (or $BENCH_RESULTS_DIR/<name>.json). What each benchmark measures, and its
// latest figures: docs/benchmarks.md.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

export interface BenchContext {
  /** Fewer repetitions and smaller sizes: checks the benchmark works, numbers are not meaningful. */
  readonly quick: boolean;
  readonly log: (line: string) => void;
}

export interface BenchResult {
  /** Rows of the printed table: metric → value per subject. */
  readonly table: Array<Record<string, string | number>>;
  /** Everything measured, for the JSON file. */
  readonly data: Record<string, unknown>;
}

const here = path.dirname(fileURLToPath(import.meta.url));

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const names = args.filter((a) => !a.startsWith('-'));
  const available = readdirSync(here, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(path.join(here, d.name, 'index.ts')))
    .map((d) => d.name)
    .sort();
  if (names.length === 0) names.push(...available);
  for (const name of names) {
    if (!available.includes(name)) {
      console.error(`bench: no benchmark "${name}" (have: ${available.join(', ')})`);
      process.exit(2);
    }
    const mod = (await import(path.join(here, name, 'index.ts'))) as {
      run: (ctx: BenchContext) => Promise<BenchResult>;
    };
    const started = new Date();
    console.log(`bench ${name}${quick ? ' (quick)' : ''}: started ${started.toISOString()}`);
    const t0 = performance.now();
    const elapsed = (): string => `${((performance.now() - t0) / 1000).toFixed(1)}s`.padStart(7);
    const result = await mod.run({ quick, log: (l) => console.log(`${elapsed()}  ${l}`) });
    console.table(result.table);
    const dir = process.env.BENCH_RESULTS_DIR ?? path.join(here, 'results');
    mkdirSync(dir, { recursive: true });
    const file = path.join(dir, `${name}.json`);
    writeFileSync(
      file,
      `${JSON.stringify(
        {
          name,
          quick,
          started: started.toISOString(),
          finished: new Date().toISOString(),
          machine: {
            cpus: os.cpus().length,
            model: os.cpus()[0]?.model,
            memGiB: Math.round(os.totalmem() / 2 ** 30),
            node: process.version,
          },
          ...result.data,
        },
        null,
        2,
      )}\n`,
    );
    console.log(`bench ${name}: wrote ${path.relative(process.cwd(), file)}`);
  }
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** A figure for a table: whole above 100, two decimals above 1, three significant digits below. */
export const round = (x: number): number =>
  !Number.isFinite(x)
    ? x
    : Math.abs(x) >= 100
      ? Math.round(x)
      : Math.abs(x) >= 1
        ? Math.round(x * 100) / 100
        : Number(x.toPrecision(3));

/** One row of a benchmark's table: the metric, its value, and the goal with whether it was met. */
export const tableRow = (
  metric: string,
  value: string | number,
  goal = '',
  met = '',
): Record<string, string | number> => ({ metric, value, goal, met });

export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

/** The p-th percentile of a sorted typed array (same definition as percentile). */
export const pctSorted = (s: Float64Array, p: number): number =>
  s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
