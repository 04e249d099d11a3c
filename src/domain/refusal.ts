/**
 * How a request is refused, by a decider or by the engine around it: a kind (what went wrong),
 * a stable code clients see, a message that names the field at fault, and that field. Deciders
 * throw these as they are; nothing translates them on the way out. The HTTP edge
 * (src/http/errors.ts) gives each kind its status and renders it in the family's error shape;
 * neither the domain nor the engine speaks HTTP.
 *
 * A refusal of kind `internal` is the gateway's own fault, not the client's (an id that should
 * be new is taken, a reservation that should be open is not): the client is told only
 * `internal_error`, and the code and message are for the log.
 */
export type RefusalKind =
  | 'invalid'
  | 'insufficient_quota'
  | 'forbidden'
  | 'not_found'
  | 'client_gone'
  | 'conflict'
  | 'gone'
  | 'too_large'
  | 'internal'
  | 'upstream_failed'
  | 'upstream_timeout';

export class Refusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    readonly code: string,
    message: string,
    /** The request field at fault, when there is one. */
    readonly param?: string,
  ) {
    super(message);
    this.name = 'Refusal';
  }
}

/** Whether `err` is a refusal with this code: how the engine recognises the refusals it handles itself. */
export function isRefusal(err: unknown, code: string): err is Refusal {
  return err instanceof Refusal && err.code === code;
}

/**
 * A refusal that passes with time: a limit on work in flight is reached, and the same request
 * may well succeed later. The HTTP edge answers it 429 with `Retry-After` in the family's error
 * shape. It is not one of the refusal kinds: those map to a status each and carry nothing about
 * when to try again.
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
