// `svcplane store`: look into a svcplane store (embedded SQLite or etcd) the way etcdctl looks into
// etcd: status, get, list, compact. Values are printed as stored (Kubernetes objects are JSON). `check`
// names every stored object a typed client could not decode (api/undecodable.ts).
import {
  checkStoredObject,
  resourceForKey,
  undecodableLine,
  type UndecodableObject,
} from '../api/undecodable.js';
import { resourceId } from '../api/resources.js';
import { SqliteStore } from '../storage/sqlite/sqlite-store.js';
import type { KeyValue, Store } from '../storage/store.js';
import { durationFlag, intFlag, oneOf, parseFlags, UsageError } from './flags.js';

export const STORE_HELP = `Usage: svcplane store <status|get|list|compact|check> [flags]

Inspect a svcplane store. The embedded store is opened exclusively, so stop the server that uses it first.

Commands:
  status                 print the backend, current revision and compacted revision
  get KEY                print one key (--revision N reads it as it was at revision N)
  list PREFIX            print the keys under PREFIX (--limit N, --keys-only)
  compact REVISION       discard history before REVISION
  check                  name every object a typed client could not decode (exit 1 when any)

Flags:
  --storage-backend sqlite|etcd3   default sqlite
  --data-dir DIR                   embedded store directory (default ./.svcplane)
  --etcd-servers URL[,URL]         etcd client URLs, with --storage-backend etcd3
  --etcd-prefix PREFIX             key prefix in etcd (default /registry)
  --revision N, --limit N, --keys-only, -o json
`;

const FLAGS = {
  'storage-backend': { type: 'string' },
  'data-dir': { type: 'string' },
  'etcd-servers': { type: 'string' },
  'etcd-prefix': { type: 'string' },
  revision: { type: 'string' },
  limit: { type: 'string' },
  'keys-only': { type: 'boolean' },
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function openStoreFromFlags(
  values: Record<string, string | boolean | undefined>,
): Promise<Store> {
  const backend = oneOf('storage-backend', values['storage-backend'], ['sqlite', 'etcd3'] as const, 'sqlite');
  if (backend === 'etcd3') {
    const servers = values['etcd-servers'];
    if (typeof servers !== 'string' || servers === '') {
      throw new UsageError('--etcd-servers is required with --storage-backend etcd3');
    }
    const prefix = values['etcd-prefix'];
    // Loaded only for etcd: the etcd3 client (gRPC and its protocol files) costs ~0.2 CPU-s at startup.
    const { EtcdStore } = await import('../storage/etcd/etcd-store.js');
    const retryBudgetMs = durationFlag('storage-retry-budget', values['storage-retry-budget'], 0);
    return EtcdStore.open({
      endpoints: servers.split(','),
      ...(typeof prefix === 'string' ? { prefix } : {}),
      ...(retryBudgetMs === undefined ? {} : { retryBudgetMs }),
    });
  }
  const dataDir = typeof values['data-dir'] === 'string' ? values['data-dir'] : '.svcplane';
  return SqliteStore.open({ dataDir });
}

export async function storeCommand(args: string[], out: (s: string) => void): Promise<number> {
  const { values, positionals } = parseFlags(args, FLAGS);
  const [verb, arg, ...extra] = positionals;
  if (values.help || verb === undefined) {
    out(STORE_HELP);
    return verb === undefined && !values.help ? 2 : 0;
  }
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
  const json = oneOf('output', values.output, ['text', 'json'] as const, 'text') === 'json';
  const needArg = (what: string): string => {
    if (arg === undefined) throw new UsageError(`store ${verb} needs ${what}`);
    return arg;
  };
  if (!['status', 'get', 'list', 'compact', 'check'].includes(verb))
    throw new UsageError(`unknown store command "${verb}"`);
  const whole = verb === 'status' || verb === 'check';
  if (whole && arg !== undefined) throw new UsageError(`unexpected arguments: ${arg}`);
  const key = whole ? '' : needArg(verb === 'compact' ? 'a REVISION' : verb === 'get' ? 'a KEY' : 'a PREFIX');
  const revision = intFlag('revision', values.revision, 1);
  const limit = intFlag('limit', values.limit, 1);
  const compactTo = verb === 'compact' ? intFlag('REVISION', key, 1)! : 0;
  const store = await openStoreFromFlags(values);
  try {
    if (verb === 'check') return await check(store, json, out);
    if (verb === 'status') {
      const status = {
        backend: store.backend,
        revision: await store.currentRevision(),
        compactRevision: await store.compactRevision(),
        ...(store instanceof SqliteStore ? { file: store.file } : {}),
      };
      out(
        json
          ? JSON.stringify(status)
          : Object.entries(status)
              .map(([k, v]) => `${k}: ${v}`)
              .join('\n'),
      );
    } else if (verb === 'get') {
      const kv = await store.get(key, revision === undefined ? {} : { revision });
      if (kv === undefined) {
        process.stderr.write(`svcplane: key ${key} not found\n`);
        return 1;
      }
      out(format(kv, json, false));
    } else if (verb === 'list') {
      const res = await store.list(key, { ...(limit ? { limit } : {}), ...(revision ? { revision } : {}) });
      if (json)
        out(
          JSON.stringify({
            revision: res.revision,
            items: res.items.map((kv) => JSON.parse(format(kv, true, !!values['keys-only']))),
          }),
        );
      else if (res.items.length === 0) process.stderr.write(`No keys found under ${key}\n`);
      else out(res.items.map((kv) => format(kv, false, !!values['keys-only'])).join('\n'));
    } else {
      await store.compact(compactTo);
      out(`compacted to revision ${compactTo}`);
    }
    return 0;
  } finally {
    await store.close();
  }
}

function format(kv: KeyValue, json: boolean, keysOnly: boolean): string {
  const value = Buffer.from(kv.value).toString('utf8');
  if (json) {
    return JSON.stringify({
      key: kv.key,
      createRevision: kv.createRevision,
      modRevision: kv.modRevision,
      ...(keysOnly ? {} : { value }),
    });
  }
  return keysOnly ? kv.key : `${kv.key}\n${value}`;
}

/** Reads every object of every served resource, page by page at one revision, and names the broken ones. */
async function check(store: Store, json: boolean, out: (s: string) => void): Promise<number> {
  const broken: UndecodableObject[] = [];
  let checked = 0;
  let cont: string | undefined;
  let revision: number;
  do {
    const page = await store.list('/', { limit: 1_000, ...(cont === undefined ? {} : { continue: cont }) });
    revision = page.revision;
    for (const kv of page.items) {
      const r = resourceForKey(kv.key);
      if (r === undefined) continue;
      checked++;
      const bad = checkStoredObject(r, kv.key, Buffer.from(kv.value).toString('utf8'));
      if (bad !== undefined) broken.push(bad);
    }
    cont = page.continue;
  } while (cont !== undefined);
  if (json) {
    const items = broken.map(({ resource, ...o }) => ({ resource: resourceId(resource), ...o }));
    out(JSON.stringify({ revision, checked, undecodable: items }));
  } else {
    const summary =
      broken.length === 0
        ? `${checked} objects checked at revision ${revision}: every one decodes`
        : `${broken.length} of ${checked} objects at revision ${revision} cannot be decoded by typed clients; fix or delete them`;
    out([...broken.map(undecodableLine), summary].join('\n'));
  }
  return broken.length === 0 ? 0 : 1;
}
