// External programs a benchmark runs (haproxy, iptables, ...): found, or installed from their Debian
// package, by scripts/ensure-deps.sh, as the test suites find theirs (src/storage/etcd/testing/etcd-server.ts).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The path of `program` (a name in scripts/ensure-deps.sh's table): $variable when it names an existing
 * file, else what `SVCPLANE_DEPS_ONLY=program scripts/ensure-deps.sh` prints as `variable=...` (it installs
 * the package when missing and it can). Throws when the script fails; its reason is on stderr.
 */
export function ensureDep(program: string, variable: string): string {
  const fromEnv = process.env[variable];
  if (fromEnv !== undefined && fromEnv !== '' && existsSync(fromEnv)) return fromEnv;
  const r = spawnSync('bash', [path.join(ROOT, 'scripts/ensure-deps.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, SVCPLANE_DEPS_ONLY: program },
  });
  const found = new RegExp(`^${variable}=(.+)$`, 'm').exec(r.stdout ?? '')?.[1];
  if (r.status !== 0 || found === undefined)
    throw new Error(`${program} is required (scripts/ensure-deps.sh failed; see above)`);
  process.env[variable] = found;
  return found;
}
