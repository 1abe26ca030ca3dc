// An upstream the test (or a benchmark) can take away and bring back, for a WrapperSync in this process:
// while it is down every list and watch fails as a refused connection would, and the open watches end.
import type { Client } from '../../src/runtime/client.js';

/** `client` for the sync; down() takes the upstream away, up() brings it back. */
export function upstreamOutage(upstream: Client) {
  const state = { down: false, watches: new Set<AbortController>() };
  const refused = () => new Error('connect ECONNREFUSED 127.0.0.1:6443');
  const client = {
    list: (r: never, o: never, s: AbortSignal) =>
      state.down ? Promise.reject(refused()) : upstream.list(r, o, s),
    watch: (r: never, o: never, signal: AbortSignal) =>
      (async function* () {
        if (state.down) throw refused();
        const ac = new AbortController();
        state.watches.add(ac);
        signal.addEventListener('abort', () => ac.abort());
        try {
          for await (const ev of upstream.watch(r, o, ac.signal)) yield ev;
        } catch (e) {
          if (signal.aborted || !ac.signal.aborted) throw e;
        } finally {
          state.watches.delete(ac);
        }
        if (!signal.aborted) throw refused();
      })(),
  };
  return {
    client: client as unknown as Client,
    down() {
      state.down = true;
      for (const ac of state.watches) ac.abort();
    },
    up() {
      state.down = false;
    },
  };
}
