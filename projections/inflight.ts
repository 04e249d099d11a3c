import type { Projection } from './projection.js';
import { taskIdOfStream } from '../src/domain/events.js';
import { VIEWS } from './views.js';

/** Tasks not yet final: the poller and dispatcher rebuild their work from here on start. */
export interface InflightDoc {
  taskId: string;
  family: string;
  model: string;
  accountId: string;
  stage: 'submitted' | 'dispatched';
  sync: boolean;
  createdAt: number;
}

export const inflightProjection: Projection<InflightDoc> = {
  name: 'inflight',
  view: VIEWS.inflight,
  handles: ['TaskSubmitted', 'UpstreamSubmitted', 'TaskSucceeded', 'TaskFailed'],
  documentId: (e) => taskIdOfStream(e.streamName),
  evolve(doc, e) {
    switch (e.type) {
      case 'TaskSubmitted': {
        if (doc) return undefined;
        const { taskId, family, model, accountId, createdAt } = e.data;
        return { taskId, family, model, accountId, stage: 'submitted', sync: e.data.sync ?? false, createdAt };
      }
      case 'UpstreamSubmitted':
        return doc ? { ...doc, stage: 'dispatched' } : undefined;
      case 'TaskSucceeded':
      case 'TaskFailed':
        return doc ? null : undefined;
      default:
        return undefined;
    }
  },
};
