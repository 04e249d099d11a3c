import { toDomainEvent } from '../src/domain/recorded.js';
import type { RecordedEvent } from '../src/ports/event-store.js';
import type { Projection } from './projection.js';

/**
 * Folds one stream's events through a projection: the query fallback for a document the
 * view does not hold yet (a client polling right after submit never gets "not found").
 */
export function foldDocument<D>(projection: Projection<D>, events: readonly RecordedEvent[]): D | undefined {
  let doc: D | undefined;
  for (const raw of events) {
    const event = toDomainEvent(raw);
    if (!event || !projection.handles.includes(event.type)) continue;
    const next = projection.evolve(doc, event);
    if (next === null) doc = undefined;
    else if (next !== undefined) doc = next;
  }
  return doc;
}
