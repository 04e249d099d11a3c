/**
 * A crash for parts of a "process" that share the test's process (an engine beside another on
 * one store): once `die()` is called, nothing the dead part calls through a wrapped port reaches
 * it (no append, no view write, no upstream request), and nothing it was waiting for comes back
 * to it (an upstream answer in flight is lost, as it is to a process killed with SIGKILL). Its
 * calls are left pending, not failed: a dead process handles no error either. `bury()`, at
 * teardown once everything is asserted, fails them all and lets calls through again, so the
 * dead part can be stopped like any other and leaves no timer or subscription behind.
 */
export interface ProcessDeath {
  readonly dead: boolean;
  die(): void;
  bury(): void;
  /** `target` as the dying part sees it: every method call goes through the death. */
  wrap<T extends object>(target: T): T;
}

export function processDeath(): ProcessDeath {
  let dead = false;
  const pending = new Set<(err: Error) => void>();
  const grave = (): Promise<never> =>
    new Promise<never>((_, reject) => {
      pending.add(reject);
    });
  /** Fails at burial: what a call was still waiting for then (an answer that never came) ends too. */
  const burial = grave();
  burial.catch(() => undefined);

  function afterDeath(result: unknown): unknown {
    if (result !== null && typeof result === 'object') {
      const r = result as { then?: unknown; next?: unknown; [Symbol.asyncIterator]?: unknown };
      if (typeof r.then === 'function') {
        const answered = (result as Promise<unknown>).then(
          (value) => (dead ? grave() : value),
          (err: unknown) => {
            if (dead) return grave();
            throw err;
          },
        );
        return Promise.race([answered, burial]);
      }
      // Subscriptions and their iterators: what a subscription delivers after the death is lost too.
      if (typeof r.next === 'function' || typeof r[Symbol.asyncIterator] === 'function') return wrap(result);
    }
    return result;
  }

  function wrap<T extends object>(target: T): T {
    return new Proxy(target, {
      get(t, prop) {
        const value: unknown = Reflect.get(t, prop, t);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => (dead ? grave() : afterDeath((value as (...a: unknown[]) => unknown).apply(t, args)));
      },
    });
  }

  return {
    get dead() {
      return dead;
    },
    die: () => void (dead = true),
    bury() {
      dead = false;
      for (const reject of pending) reject(new Error('the process died'));
      pending.clear();
    },
    wrap,
  };
}
