import { useCallback, useEffect, useState } from "react";
import { api } from "./api.ts";

/** A GET of the platform's API, re-read when `path` changes or `reload()` is called. */
export function useApi<T = any>(path: string | undefined, deps: unknown[] = []) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: !!path });
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  // biome-ignore lint/correctness/useExhaustiveDependencies: path, tick and the caller's deps decide a read
  useEffect(() => {
    if (!path) return;
    const ctl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    api<T>("GET", path, undefined, { signal: ctl.signal })
      // A read whose path changed meanwhile is stale: only the current one's answer is shown.
      .then((data) => {
        if (!ctl.signal.aborted) setState({ data, loading: false });
      })
      .catch((e) => {
        if (!ctl.signal.aborted) setState({ error: e.message, loading: false });
      });
    return () => ctl.abort();
  }, [path, tick, ...deps]);
  return { ...state, reload };
}

/** Calls `fn` every `ms` while mounted (live views). */
export function useInterval(fn: () => void, ms: number | undefined) {
  useEffect(() => {
    if (!ms) return;
    const t = setInterval(fn, ms);
    return () => clearInterval(t);
  }, [fn, ms]);
}

/**
 * A view's actions and their failure: `act(p)` clears the error, awaits `p`, then `after()` (a re-read); a throw
 * from either becomes the error shown.
 */
export function useAction(after: () => unknown = () => {}) {
  const [error, setError] = useState<string>();
  const act = async (p: Promise<unknown>) => {
    setError(undefined);
    try {
      await p;
      await after();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return { error, setError, act };
}
