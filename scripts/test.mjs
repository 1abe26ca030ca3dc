#!/usr/bin/env node
// `npm test`: makes sure the external programs the tests run exist (scripts/ensure-deps.sh), then runs every
// *.test.ts under src/ and test/ with Node's test runner (TypeScript loaded through tsx).
// Arguments narrow the run: `npm test -- src/storage` runs only the files under that path.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);

// Every external program the suites run (etcd, etcdctl, kubectl, the python client, ...) is found or
// installed by scripts/ensure-deps.sh, which prints KEY=VALUE lines for the suites to use.
const deps = spawnSync('bash', ['scripts/ensure-deps.sh'], {
  stdio: ['ignore', 'pipe', 'inherit'],
  encoding: 'utf8',
});
if (deps.status !== 0) {
  console.error('npm test: stopped: a program the suites need is missing (see the line above)');
  process.exit(1);
}
for (const line of deps.stdout.split('\n')) {
  const m = /^([A-Z_]+)=(.+)$/.exec(line.trim());
  if (m) process.env[m[1]] = m[2];
}

// The end-to-end tests run the compiled `svcplane` bin and load the bundled dashboard page, so build
// first (as `npm ci` does): tsc, then the page's bundle (scripts/build-page.mjs).
for (const step of [
  ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'],
  ['scripts/build-page.mjs'],
]) {
  if (spawnSync(process.execPath, step, { stdio: 'inherit' }).status !== 0) {
    console.error(`npm test: the build failed (${step[0]})`);
    process.exit(1);
  }
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
  // The runner's own output (spec on a terminal, TAP otherwise), then the slowest files and one closing
  // line `N passed, N failed, N skipped` (scripts/test-summary-reporter.mjs).
  `--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`,
  '--test-reporter-destination=stdout',
  '--test-reporter=./scripts/test-summary-reporter.mjs',
  '--test-reporter-destination=stdout',
  ...passthrough,
  ...files,
];
const r = spawnSync(process.execPath, args, { stdio: 'inherit', env: process.env });
process.exit(r.status ?? 1);
