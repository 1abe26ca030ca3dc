import { runStoreConformance } from '../testing/conformance.js';
import { EtcdStore } from './etcd-store.js';
import { startEtcd, type EtcdServer } from './testing/etcd-server.js';

import { after } from 'node:test';

let etcd: EtcdServer | undefined;
after(async () => etcd?.stop());
let n = 0;
runStoreConformance('etcd (a real etcd server)', {
  setup: async () => {
    etcd = await startEtcd();
  },
  // Each store gets its own key prefix, so tests share the server but never each other's keys.
  open: async () => EtcdStore.open({ endpoints: [etcd!.endpoint], prefix: `/t${++n}/registry` }),
});

// Again with a shared-watch ring of 4 events, so watchers keep falling behind it and continue on private
// etcd watches: the delivered history must be the same.
runStoreConformance('etcd, shared-watch ring of 4 events', {
  setup: async () => {
    etcd ??= await startEtcd();
  },
  open: async () =>
    EtcdStore.open({ endpoints: [etcd!.endpoint], prefix: `/s${++n}/registry`, watchCacheSize: 4 }),
});
