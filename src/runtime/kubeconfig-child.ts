// The child process kubeconfig.ts runs first (`node kubeconfig-child.js '{"path":...,"context":...}'`): it
// loads the kubeconfig with @kubernetes/client-node (kubeconfig-load.ts) and prints its answer, then
// exits. Static credentials come with the answer, and the ~70 MiB client-node costs leave with the
// process; a worker thread that ended left about 28 MiB behind in the caller (the allocator keeps what
// it freed). For credentials that change the answer only says so, and kubeconfig.ts starts the worker.
// Buffers (CA, certificate, key) travel as {"$base64": ...}.
import { ANSWER_PREFIX, loadAnswer } from './kubeconfig-load.js';

const opts = JSON.parse(process.argv[2] ?? '{}') as { path?: string; context?: string };
const { answer } = await loadAnswer(opts.path, opts.context, true);
const json = JSON.stringify(answer, (_k, v: unknown) =>
  v !== null &&
  typeof v === 'object' &&
  (v as { type?: unknown }).type === 'Buffer' &&
  Array.isArray((v as { data?: unknown }).data)
    ? { $base64: Buffer.from((v as { data: number[] }).data).toString('base64') }
    : v,
);
// Exits once the answer is out: a handle a dependency left open must not keep the caller waiting.
process.stdout.write(`\n${ANSWER_PREFIX}${json}\n`, () => process.exit(0));
