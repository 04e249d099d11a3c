/**
 * A store's server could not be reached, or dropped the connection under an operation: the
 * operation failed for now and may be tried again. An append cut off at its commit may or may
 * not have landed; trying it again with the same expected revision meets
 * WrongExpectedRevisionError if it did. Adapters of networked stores throw it; the HTTP layer
 * answers it as 503 with Retry-After, never as the gateway's own fault.
 */
export class StoreUnavailableError extends Error {
  constructor(
    readonly store: string,
    cause: unknown,
  ) {
    super(`${store} is unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'StoreUnavailableError';
  }
}
