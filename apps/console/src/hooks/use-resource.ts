import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

export interface Resource<T> {
  readonly data: T | undefined;
  readonly error: Error | undefined;
  readonly loading: boolean;
  /** When the last successful load arrived (ms since the epoch), for an "updated at" note. */
  readonly updatedAt: number | undefined;
  /** Loads again now (after an action, or by the user). */
  readonly reload: () => void;
}

/**
 * Loads `load()` when `deps` change and, with `refreshMs`, again on that period while the tab is
 * visible (live refresh; a hidden tab asks nothing). An answer that arrives after newer deps is
 * dropped, so a slow page never overwrites a fresh one (nor updates a page that has gone).
 */
export function useResource<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
  refreshMs?: number,
): Resource<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<Error>();
  const [loading, setLoading] = useState(true);
  const [updatedAt, setUpdatedAt] = useState<number>();
  const generation = useRef(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  const run = useCallback(() => {
    const mine = ++generation.current;
    setLoading(true);
    loadRef.current().then(
      (d) => {
        if (mine !== generation.current) return;
        setData(d);
        setUpdatedAt(Date.now());
        setError(undefined);
        setLoading(false);
      },
      (e: unknown) => {
        if (mine !== generation.current) return;
        setError(e instanceof Error ? e : new Error(String(e)));
        setLoading(false);
      },
    );
  }, []);

  useEffect(run, deps);
  // An answer that arrives after the page has gone is dropped like a stale one.
  useEffect(
    () => () => {
      generation.current++;
    },
    [],
  );

  useEffect(() => {
    if (!refreshMs) return undefined;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') run();
    }, refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs, run]);

  return { data, error, loading, updatedAt, reload: run };
}
