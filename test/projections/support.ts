import type { DomainEvent } from '../../src/domain/events.js';
import type { RecordedDomainEvent } from '../../src/domain/recorded.js';
import type { Projection } from '../../projections/projection.js';

/** "Given these events (in order, on these streams), then this document." */
export function given<D>(projection: Projection<D>, events: readonly (readonly [string, DomainEvent])[]): Map<string, D> {
  const docs = new Map<string, D>();
  events.forEach(([streamName, event], i) => {
    const recorded = {
      ...event,
      id: `e${i}`,
      streamName,
      revision: i,
      position: BigInt(i + 1),
      metadata: { at: `2026-01-01T00:00:${String(i).padStart(2, '0')}Z` },
    } as RecordedDomainEvent;
    if (!projection.handles.includes(recorded.type)) return;
    const id = projection.documentId(recorded);
    if (id === undefined) return;
    const next = projection.evolve(docs.get(id), recorded);
    if (next === null) docs.delete(id);
    else if (next !== undefined) docs.set(id, next);
  });
  return docs;
}
