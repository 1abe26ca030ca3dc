#!/usr/bin/env node
// Entry point for the `svcplane` command. The TypeScript sources are compiled to dist/ by `npm ci`
// (the `prepare` script); this shim only loads the compiled CLI.
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`svcplane: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
