import type { EventType } from '../src/domain/events.js';
import type { RecordedDomainEvent } from '../src/domain/recorded.js';

/**
 * One query view: a pure fold `(doc | undefined, event) → doc`. Returning `undefined` means
 * "no change", `null` deletes the document. A projection never throws on a recorded event:
 * one that does not apply is answered with `undefined`.
 */
export interface Projection<Doc = unknown> {
  /** Checkpoint name; also the default view name. */
  readonly name: string;
  readonly view: string;
  readonly handles: readonly EventType[];
  /** Which document an event belongs to (undefined: none). */
  documentId(event: RecordedDomainEvent): string | undefined;
  evolve(doc: Doc | undefined, event: RecordedDomainEvent): Doc | null | undefined;
}
