#!/usr/bin/env node
// The `svcplane` command. `npm ci` compiles src/ to dist/ (the `prepare` script); this only loads it.
import '../dist/cli/svcplane.js';
