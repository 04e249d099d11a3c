/**
 * The same object with every method's rejection passed through `translate` first: an adapter
 * turns its client's errors into the port's (a dropped connection into StoreUnavailableError)
 * in one place instead of around every call. Synchronous throws and what methods return other
 * than promises pass unchanged.
 */
export function translateRejections<T extends object>(target: T, translate: (error: unknown) => unknown): T {
  const wrapped: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(target) as Array<[string, unknown]>) {
    wrapped[name] =
      typeof value === 'function'
        ? (...args: unknown[]): unknown => {
            const result: unknown = Reflect.apply(value, target, args);
            return result instanceof Promise
              ? result.catch((error: unknown) => {
                  throw translate(error);
                })
              : result;
          }
        : value;
  }
  return wrapped as T;
}
