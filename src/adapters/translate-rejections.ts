/**
 * Adapters wrap their stores' methods in one place instead of around every call: each method
 * through `around` (aroundEachMethod), and every rejection through `translate`
 * (translateRejections), so a client's dropped connection becomes the port's
 * StoreUnavailableError whatever the call.
 */
import { StoreUnavailableError } from '../ports/store-unavailable.js';

/** The same object with each method called through `around`: its name, and a call of it with the arguments given. */
export function aroundEachMethod<T extends object>(target: T, around: (name: string, call: () => unknown) => unknown): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(target) as Array<[string, unknown]>) {
    wrapped[name] = typeof value === 'function' ? (...args: unknown[]): unknown => around(name, () => Reflect.apply(value, target, args)) : value;
  }
  return wrapped as T;
}

/** The same object with every method's rejection passed through `translate`; throws and other results pass unchanged. */
export function translateRejections<T extends object>(target: T, translate: (error: unknown) => unknown): T {
  return aroundEachMethod(target, (_name, call) => {
    const result = call();
    return result instanceof Promise
      ? result.catch((error: unknown) => {
          throw translate(error);
        })
      : result;
  });
}

/** The translation of a networked store: the errors `isConnectionFailure` picks become StoreUnavailableError naming `store`. */
export function unavailableWhen(store: string, isConnectionFailure: (error: unknown) => boolean): (error: unknown) => unknown {
  return (error) => (isConnectionFailure(error) ? new StoreUnavailableError(store, error) : error);
}
