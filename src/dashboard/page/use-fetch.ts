// A panel's data: fetched when its arguments change (and again on each `refresh` tick), the older
// request aborted so a slow answer never replaces a newer one. What was fetched for other arguments is
// never shown for these: a click on another cell shows nothing (loading) until its own answer arrives,
// while a refresh of the same pair keeps the last answer on screen until the new one replaces it.
import { useEffect, useState } from 'preact/hooks';

export type Fetched<T> = { readonly data: T | null; readonly error: string | null };

export function useFetch<T>(
  load: (signal: AbortSignal) => Promise<T>,
  args: readonly unknown[],
  refresh: number,
): Fetched<T> {
  const key = JSON.stringify(args);
  const [state, setState] = useState<Fetched<T> & { readonly key: string }>({ key, data: null, error: null });
  useEffect(() => {
    const ac = new AbortController();
    load(ac.signal).then(
      (data) => setState({ key, data, error: null }),
      (err: unknown) => {
        if (!ac.signal.aborted)
          setState((s) => ({ key, data: s.key === key ? s.data : null, error: String(err) }));
      },
    );
    return () => ac.abort();
  }, [key, refresh]);
  return state.key === key ? state : { data: null, error: null };
}
