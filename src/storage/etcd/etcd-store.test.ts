import { runStoreConformance } from '../testing/conformance.js';
import { EtcdStore } from './etcd-store.js';
import { startEtcd, type EtcdServer } from './testing/etcd-server.js';

let etcd: EtcdServer | undefined;
let n = 0;
runStoreConformance('etcd (a real etcd server)', {
  setup: async () => {
    etcd = await startEtcd();
  },
  // Each store gets its own key prefix, so tests share the server but never each other's keys.
  open: async () => EtcdStore.open({ endpoints: [etcd!.endpoint], prefix: `/t${++n}/registry` }),
  teardown: async () => etcd?.stop(),
});
