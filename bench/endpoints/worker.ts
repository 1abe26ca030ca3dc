// This file, forked with SVCPLANE_ENDPOINTS_BENCH_ROLE=watcher|flipper, is the watcher or the flipper, so
// neither shares an event loop with the other or with the orchestrator.
import { fileURLToPath } from 'node:url';
import { watcherMain } from './watcher.js';
import { flipperMain } from './flipper.js';

export const WORKER_MODULE = fileURLToPath(import.meta.url);
export const ROLE_ENV = 'SVCPLANE_ENDPOINTS_BENCH_ROLE';

const role = process.env[ROLE_ENV];
if (role === 'watcher') watcherMain();
else if (role === 'flipper') flipperMain();
