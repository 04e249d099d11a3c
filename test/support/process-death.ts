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
  /** Each pending call's rejection, with the method it was (named in the error at burial). */
  const pending = new Map<(err: Error) => void, string>();
  const grave = (call = 'an answer'): Promise<never> =>
    new Promise<never>((_, reject) => {
      pending.set(reject, call);
    });
  /** Fails at burial: what a call was still waiting for then (an answer that never came) ends too. */
  const burial = grave();
  burial.catch(() => undefined);

  /** Methods whose live answers were not promises (subscribe, an iterator's own): their callers do not await them. */
  const synchronous = new Set<string>();
  /**
   * What a dead part's call gets: a promise that never settles before burial, or for a method
   * that answers at once (a subscription) a subscription that never delivers. A promise there
   * would be used as a subscription, fail, and be left rejected at burial with nobody to handle it.
   */
  function deadAnswer(call: string): unknown {
    if (!synchronous.has(call)) return grave(call);
    const never = {
      [Symbol.asyncIterator]: () => never,
      next: () => grave(`${call}().next`),
      return: () => grave(`${call}().return`),
      close: () => grave(`${call}().close`),
    };
    return never;
  }

  function afterDeath(result: unknown, call: string): unknown {
    if (result !== null && typeof result === 'object') {
      const r = result as { then?: unknown; next?: unknown; [Symbol.asyncIterator]?: unknown };
      if (typeof r.then === 'function') {
        const answered = (result as Promise<unknown>).then(
          (value) => (dead ? grave(call) : value),
          (err: unknown) => {
            if (dead) return grave(call);
            throw err;
          },
        );
        return Promise.race([answered, burial]);
      }
      synchronous.add(call);
      // Subscriptions and their iterators: what a subscription delivers after the death is lost too.
      if (typeof r.next === 'function' || typeof r[Symbol.asyncIterator] === 'function') return wrap(result);
    }
    synchronous.add(call);
    return result;
  }

  function wrap<T extends object>(target: T): T {
    return new Proxy(target, {
      get(t, prop) {
        const value: unknown = Reflect.get(t, prop, t);
        if (typeof value !== 'function') return value;
        const call = String(prop);
        return (...args: unknown[]) => (dead ? deadAnswer(call) : afterDeath((value as (...a: unknown[]) => unknown).apply(t, args), call));
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
      for (const [reject, call] of pending) reject(new Error(`the process died (in ${call})`));
      pending.clear();
    },
    wrap,
  };
}
