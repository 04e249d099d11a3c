/**
 * Expirer: after the retention, deletes a task's re-hosted bytes and appends AssetsExpired
 * (the views then empty `data` / `images`). Bytes go first: a crash between the two leaves
 * the view entry, so the next pass finishes the job; deleting twice is harmless.
 */
import type { Logger } from 'pino';
import type { AssetStore } from '../../ports/asset-store.js';
import type { EventStore } from '../../ports/event-store.js';
import type { ViewStore } from '../../ports/view-store.js';
import type { AssetExpiryDoc } from '../../../projections/asset-expiry.js';
import { dueDocuments } from './due-documents.js';
import { periodic, type Periodic } from './periodic.js';
import { executeTask } from '../commands/task-commands.js';

export type Expirer = Periodic;

export function createExpirer(deps: {
  events: EventStore;
  views: ViewStore;
  assets: AssetStore;
  log: Logger;
  clock: () => Date;
  /** Tasks this instance expires (its partitions' where instances split the work); default: all. */
  owns?: (taskId: string) => boolean;
}): Expirer {
  return periodic('expiry', deps.log, async function pass(): Promise<number> {
    const now = Math.floor(deps.clock().getTime() / 1000);
    const due = await dueDocuments<AssetExpiryDoc>(deps.views, 'asset-expiry', {}, { sortBy: 'expireAt', limit: 500 }, (doc) => doc.expireAt <= now);
    let expired = 0;
    for (const { doc } of due) {
      if (deps.owns && !deps.owns(doc.taskId)) continue;
      for (const key of doc.assetKeys) await deps.assets.delete(key);
      await executeTask(
        deps.events,
        doc.taskId,
        { type: 'ExpireAssets', data: { assetKeys: doc.assetKeys } },
        { at: deps.clock().toISOString(), correlationId: doc.taskId, ...(doc.accountId ? { accountId: doc.accountId } : {}) },
      );
      expired++;
    }
    return expired;
  });
}
