#!/usr/bin/env node
// `npm test`: makes sure the external test dependencies exist (etcd, kubectl, the python client), then runs every
// *.test.ts under src/ and test/ with Node's test runner (TypeScript loaded through tsx).
// Arguments narrow the run: `npm test -- src/storage` runs only the files under that path.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);

const etcd = spawnSync('bash', ['scripts/ensure-deps.sh'], {
  stdio: ['ignore', 'pipe', 'inherit'],
  encoding: 'utf8',
});
if (etcd.status !== 0) {
  console.error(
    'npm test: etcd, kubectl and python3-kubernetes are required by the end-to-end suites (see above)',
  );
  process.exit(1);
}
process.env.ETCD_BIN = etcd.stdout.trim();

// The end-to-end tests run the compiled `svcplane` bin, so compile first (as `npm ci` does).
const build = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
  stdio: 'inherit',
});
if (build.status !== 0) {
  console.error('npm test: the build failed');
  process.exit(1);
}

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const filters = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const passthrough = process.argv.slice(2).filter((a) => a.startsWith('-'));
let files = [...walk('src', []), ...walk('test', [])].sort();
if (filters.length > 0) files = files.filter((f) => filters.some((x) => f.startsWith(path.normalize(x))));
if (files.length === 0) {
  console.error(`npm test: no test files match ${filters.join(' ')}`);
  process.exit(1);
}

// No test may hang CI: each gets at most 3 minutes unless it sets its own timeout, and a file whose
// tests finished exits even if a handle leaked (the leak tests check for leaks in their own child).
const args = [
  '--import',
  'tsx',
  '--test',
  '--test-concurrency=2',
  '--test-timeout=180000',
  ...passthrough,
  ...files,
];
const r = spawnSync(process.execPath, args, { stdio: 'inherit', env: process.env });
process.exit(r.status ?? 1);
