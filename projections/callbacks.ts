import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

export interface CallbackAttemptDoc {
  attempt: number;
  /** ISO time of the attempt. */
  at: string;
  status: number;
  latencyMs: number;
  error?: string;
}

/** A task's completion callback: where it goes, every attempt, and what is left to do. */
export interface CallbackDoc {
  taskId: string;
  accountId: string;
  family: string;
  url: string;
  /** The final task event that scheduled it (see CallbackScheduled); absent on older records. */
  taskRevision?: number;
  state: 'pending' | 'delivered' | 'dead';
  /** Unix milliseconds of the next attempt while pending. */
  nextAttemptAt: number | null;
  attempts: CallbackAttemptDoc[];
}

export const callbacksProjection: Projection<CallbackDoc> = {
  name: 'callbacks',
  view: VIEWS.callbacks,
  handles: ['CallbackScheduled', 'CallbackAttempted', 'CallbackDelivered', 'CallbackDeadLettered'],
  documentId: (e) => e.streamName.slice('callback-'.length),
  evolve(doc, e) {
    switch (e.type) {
      case 'CallbackScheduled': {
        if (doc) return undefined;
        const { taskId, accountId, family, url, nextAttemptAt, taskRevision } = e.data;
        return { taskId, accountId, family, url, ...(taskRevision !== undefined ? { taskRevision } : {}), state: 'pending', nextAttemptAt, attempts: [] };
      }
      case 'CallbackAttempted': {
        if (!doc) return undefined;
        const { attempt, status, latencyMs, error } = e.data;
        return {
          ...doc,
          nextAttemptAt: e.data.nextAttemptAt ?? null,
          attempts: [...doc.attempts, { attempt, at: e.metadata.at, status, latencyMs, ...(error !== undefined ? { error } : {}) }],
        };
      }
      case 'CallbackDelivered':
        return doc ? { ...doc, state: 'delivered', nextAttemptAt: null } : undefined;
      case 'CallbackDeadLettered':
        return doc ? { ...doc, state: 'dead', nextAttemptAt: null } : undefined;
      default:
        return undefined;
    }
  },
};
