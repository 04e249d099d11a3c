/** Loading data into a component: the value, the error, and a reload. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api';

export interface Loaded<T> {
  value: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/** Runs `load` on mount and whenever `deps` change or `reload` is called; the newest answer wins. */
export function useLoad<T>(load: () => Promise<T>, deps: readonly unknown[] = []): Loaded<T> {
  const [value, setValue] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const latest = useRef(load);
  latest.current = load;

  const reload = useCallback(() => {
    const mine = ++generation.current;
    setLoading(true);
    latest.current().then(
      (v) => {
        if (mine !== generation.current) return;
        setValue(v);
        setError(undefined);
        setLoading(false);
      },
      (err: unknown) => {
        if (mine !== generation.current) return;
        setError(messageOf(err));
        setLoading(false);
      },
    );
  }, []);

  // The caller names what the load depends on.
  useEffect(reload, deps);
  return { value, error, loading, reload };
}
