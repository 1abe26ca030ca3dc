// A panel's data: fetched when its arguments change (and again on each `refresh` tick), the older
// request aborted so a slow answer never replaces a newer one.
import { useEffect, useState } from 'preact/hooks';

export type Fetched<T> = { readonly data: T | null; readonly error: string | null };

export function useFetch<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]): Fetched<T> {
  const [state, setState] = useState<Fetched<T>>({ data: null, error: null });
  useEffect(() => {
    const ac = new AbortController();
    load(ac.signal).then(
      (data) => setState({ data, error: null }),
      (err: unknown) => {
        if (!ac.signal.aborted) setState((s) => ({ data: s.data, error: String(err) }));
      },
    );
    return () => ac.abort();
  }, deps);
  return state;
}
