/**
 * Why the engine refuses or ends a request, in its own terms: a kind (what went wrong), a
 * stable code clients see, a message that names the field at fault, and that field. The HTTP
 * edge (src/http/errors.ts) gives each kind its status and renders it in the family's error
 * shape; the engine never speaks HTTP.
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
