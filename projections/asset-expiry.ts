import type { Projection } from './projection.js';
import { taskIdOfStream } from '../src/domain/events.js';
import { VIEWS } from './views.js';

/** Tasks holding re-hosted assets, with when they expire; the expirer works from here. */
export interface AssetExpiryDoc {
  taskId: string;
  accountId: string | null;
  /** Unix seconds. */
  expireAt: number;
  assetKeys: string[];
}

export const assetExpiryProjection: Projection<AssetExpiryDoc> = {
  name: 'asset-expiry',
  view: VIEWS.assetExpiry,
  handles: ['TaskSucceeded', 'AssetsExpired'],
  documentId: (e) => taskIdOfStream(e.streamName),
  evolve(doc, e) {
    if (e.type === 'TaskSucceeded') {
      const assetKeys = e.data.results.flatMap((r) => (r.assetKey ? [r.assetKey] : []));
      if (doc || assetKeys.length === 0) return undefined;
      return { taskId: taskIdOfStream(e.streamName), accountId: e.metadata.accountId ?? null, expireAt: e.data.assetsExpireAt, assetKeys };
    }
    if (e.type === 'AssetsExpired') return doc ? null : undefined;
    return undefined;
  },
};
