// `svcplane up`: the all-in-one server. Today it prepares the embedded store in --data-dir and reports
// what is available; the API server that serves it arrives with the next release (issue: API server).
import { SqliteStore } from '../storage/sqlite/sqlite-store.js';
import { parseFlags, UsageError } from './flags.js';

export const UP_HELP = `Usage: svcplane up [--data-dir DIR]

All-in-one svcplane on the embedded store. In this release it creates (or checks) the embedded store in
DIR, prints its state and what is available, and exits 0; the Kubernetes API server that serves the
store arrives with the next release.

Flags:
  --data-dir DIR   default ./.svcplane
`;

export async function upCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    'data-dir': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    out(UP_HELP);
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError(`unexpected arguments: ${positionals.join(' ')}`);
  }
  const dataDir = typeof values['data-dir'] === 'string' ? values['data-dir'] : '.svcplane';
  const store = SqliteStore.open({ dataDir });
  try {
    const revision = await store.currentRevision();
    out(`svcplane: embedded store ready at ${store.file} (revision ${revision})`);
    out('available now: the storage layer (embedded SQLite and etcd) and `svcplane store` to inspect it;');
    out('the Kubernetes API server (`svcplane up` serving kubectl) arrives with the next release.');
  } finally {
    await store.close();
  }
  return 0;
}
