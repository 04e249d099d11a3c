/**
 * The `sync-results` view: what a synchronous call (std-image / pro-image, picgen) ended with,
 * so its owner can read the answer again by id and an idempotent retry can answer it without
 * calling the upstream twice. The document keeps the recorded results (asset keys; a result
 * delivered as a URL has an asset reference in `url`, signed by the instance that answers) and
 * the upstream snapshot the answer bodies are rendered from (src/engine/tasks/sync-record.ts).
 */
import { resultUrlRef } from '../src/domain/asset-ref.js';
import { taskIdOfStream, type TaskResultItem } from '../src/domain/events.js';
import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

export interface SyncResultDoc {
  taskId: string;
  accountId: string;
  /** TaskSubmitted family and action: which route's answer this is. */
  family: string;
  action: string;
  model: string;
  createdAt: number;
  /** `expired`: it succeeded, and its result files are deleted since. */
  status: 'running' | 'succeeded' | 'failed' | 'expired';
  results: TaskResultItem[];
  upstream?: Record<string, unknown>;
  assetsExpireAt?: number;
  completedAt?: number;
  failure?: { code: string; reason: string };
}

export const syncResultProjection: Projection<SyncResultDoc> = {
  name: 'sync-results',
  view: VIEWS.syncResults,
  handles: ['TaskSubmitted', 'TaskSucceeded', 'TaskFailed', 'AssetsExpired'],
  documentId: (e) => taskIdOfStream(e.streamName),
  evolve(doc, e) {
    if (e.type === 'TaskSubmitted') {
      if (doc || e.data.sync !== true) return undefined;
      const { taskId, accountId, family, action, model, createdAt } = e.data;
      return { taskId, accountId, family, action, model, createdAt, status: 'running', results: [] };
    }
    if (!doc) return undefined;
    switch (e.type) {
      case 'TaskSucceeded': {
        if (doc.status !== 'running') return undefined;
        const { upstream, assetsExpireAt, completedAt } = e.data;
        const results = e.data.results.map((r) => {
          const url = resultUrlRef(r, assetsExpireAt);
          return url ? { ...r, url } : r;
        });
        return { ...doc, status: 'succeeded', results, ...(upstream ? { upstream } : {}), assetsExpireAt, completedAt };
      }
      case 'TaskFailed':
        if (doc.status !== 'running') return undefined;
        return { ...doc, status: 'failed', failure: { code: e.data.code, reason: e.data.reason }, completedAt: e.data.completedAt };
      case 'AssetsExpired':
        if (doc.status !== 'succeeded') return undefined;
        return { ...doc, status: 'expired', results: [] };
      default:
        return undefined;
    }
  },
};
