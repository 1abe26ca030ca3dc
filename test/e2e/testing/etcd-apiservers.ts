// Two `svcplane apiserver` processes on one etcd (127.0.0.2 and 127.0.0.3, one port), as an admin token.
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../../src/storage/etcd/testing/etcd-server.js';
import { startUp, type TestServer } from './server.js';

export const ETCD_ADMIN_TOKEN = 'etcd-apiservers-admin-token';

/** Starts both in directories under `work`, with `args` added to each command line. */
export async function startApiServersOnEtcd(opts: {
  work: string;
  etcdServers: readonly string[];
  args?: readonly string[];
  env?: NodeJS.ProcessEnv;
}): Promise<[TestServer, TestServer]> {
  const tokenFile = path.join(opts.work, 'tokens.csv');
  writeFileSync(tokenFile, `${ETCD_ADMIN_TOKEN},admin,admin-uid,"system:masters"\n`);
  const port = await freePort();
  const start = async (address: string): Promise<TestServer> => {
    const srv = await startUp({
      command: 'apiserver',
      dataDir: mkdtempSync(path.join(opts.work, 'dir-')),
      args: [
        '--storage-backend',
        'etcd3',
        '--etcd-servers',
        opts.etcdServers.join(','),
        '--token-auth-file',
        tokenFile,
        '--bind-address',
        address,
        '--secure-port',
        String(port),
        ...(opts.args ?? []),
      ],
      ...(opts.env === undefined ? {} : { env: opts.env }),
    });
    return { ...srv, token: ETCD_ADMIN_TOKEN };
  };
  return Promise.all([start('127.0.0.2'), start('127.0.0.3')]);
}
