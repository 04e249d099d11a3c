/**
 * A refusal that passes with time: a limit on work in flight is reached, and the same request
 * may well succeed later. The HTTP edge answers it 429 with `Retry-After` in the family's error
 * shape (src/http/errors.ts). It is not one of the refusal kinds (refusal.ts): those map to a
 * status each and carry nothing about when to try again.
 */
export class Throttled extends Error {
  constructor(
    /** The stable code clients see. */
    readonly code: string,
    /** Names what was limited. */
    message: string,
    /** When a retry may succeed: the client's `Retry-After`. */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
    this.name = 'Throttled';
  }
}
