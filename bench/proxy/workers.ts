// This file, forked with SVCPLANE_PROXY_BENCH_ROLE=echo|load|userspace|client, is one of the benchmark's
// helper processes.
import { fileURLToPath } from 'node:url';
import { echoMain } from './echo-backends.js';
import { userspaceMain } from './userspace-worker.js';
import { loadMain } from './load-generator.js';
import { clientMain } from './p4-client.js';

export const WORKER_MODULE = fileURLToPath(import.meta.url);
export const ROLE_ENV = 'SVCPLANE_PROXY_BENCH_ROLE';

const ROLES: Record<string, () => void> = {
  echo: echoMain,
  load: loadMain,
  userspace: userspaceMain,
  client: clientMain,
};
const role = process.env[ROLE_ENV];
if (role !== undefined) ROLES[role]?.();
