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

/** A task's status and progress: the smallest task view, for the view caches' tests. */
export interface ProgressDoc {
  status: string;
  progress: number;
}

export const progressProjection: Projection<ProgressDoc> = {
  name: 'tasks',
  view: 'tasks',
  handles: ['TaskSubmitted', 'TaskProgressed'],
  documentId: (e) => e.streamName.slice('task-'.length),
  evolve: (doc, e) =>
    e.type === 'TaskProgressed' ? { status: e.data.status, progress: e.data.progress } : doc ? undefined : { status: 'queued', progress: 0 },
};

/** A task's TaskSubmitted with nothing but what its schema requires. */
export const submittedEvent = (taskId: string): DomainEvent => ({
  type: 'TaskSubmitted',
  data: {
    taskId,
    family: 'image',
    action: 'generate',
    model: 'm',
    accountId: 'a',
    tokenId: 'k',
    group: 'default',
    channelCandidates: [],
    request: {},
    reservationId: 'r',
    reserved: 1,
    basis: { model: 'm', group: 'default', unit: 'request', unitPrice: 1, groupRatioPermille: 1000, units: 1 },
    createdAt: 1,
  },
});

export const progressedEvent = (progress: number): DomainEvent => ({ type: 'TaskProgressed', data: { status: 'in_progress', progress } });
