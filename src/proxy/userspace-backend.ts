// The userspace data plane as a sync-loop backend: the whole desired state is handed to the forwarder,
// which diffs it against its listeners itself (opening, closing and re-pointing only what changed).
import type { ProxyState } from '../core/proxy/types.js';
import type { BackendResult, ProxyBackend } from './sync.js';
import type { UserspaceProxy } from './userspace.js';

export class UserspaceBackend implements ProxyBackend {
  readonly mode = 'userspace';

  constructor(readonly proxy: UserspaceProxy) {}

  async apply(state: ProxyState, changed: ReadonlySet<string> | 'full'): Promise<BackendResult> {
    const r = await this.proxy.apply(state);
    return {
      partial: changed !== 'full',
      detail: {
        listenersOpened: r.opened,
        listenersClosed: r.closed,
        listenersUpdated: r.updated,
        bindFailures: r.failed.length,
        conflicts: r.conflicts,
      },
    };
  }

  close(): Promise<void> {
    return this.proxy.close();
  }
}
