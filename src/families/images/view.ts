/**
 * The `image.task` view (spec 2.1) of async image tasks: the document's `body` is the query
 * response, except that Base64-delivered items (pro-image) hold the asset key that the query
 * route inlines as `b64_json`, and `url`s are asset references (src/domain/asset-ref.ts) that the
 * instance answering signs on its own base.
 */
import { resultUrlRef } from '../../domain/asset-ref.js';
import type { EventDataOf } from '../../domain/events.js';
import type { StoredImageTask } from './schema.js';
import type { z } from 'zod';
import { taskView } from '../kit/view.js';

export const IMAGE_FAMILY = 'image';

/** The answer as stored: `url` holds an asset reference (a signed URL in the answer), `b64_asset` the asset key of bytes delivered as `b64_json`. */
export type ImageTaskBody = z.infer<typeof StoredImageTask>;
export type ImageItemDoc = ImageTaskBody['data'][number];

export interface ImageTaskDoc {
  accountId: string;
  /** pro-image, anime, vis or picgen. */
  subfamily: string;
  body: ImageTaskBody;
}

export const subfamilyOf = (action: string): string => action.split('/')[0] ?? action;

/** The body right after submit: the same function answers the submit and seeds the view. */
export function submittedImageBody(data: EventDataOf<'TaskSubmitted'>): ImageTaskBody {
  return {
    id: data.taskId,
    task_id: data.taskId,
    object: 'image.task',
    model: data.model,
    status: 'queued',
    progress: '0%',
    created_at: data.createdAt,
    data: [],
  };
}

export const imageTaskProjection = taskView<ImageTaskDoc>({
  name: 'image-tasks',
  family: IMAGE_FAMILY,
  submitted: (e) => ({ accountId: e.data.accountId, subfamily: subfamilyOf(e.data.action), body: submittedImageBody(e.data) }),
  evolve(doc, e) {
    const body = doc.body;
    switch (e.type) {
      case 'TaskProgressed':
        if (body.status === 'completed' || body.status === 'failed') return undefined;
        return { ...doc, body: { ...body, status: e.data.status, progress: `${e.data.progress}%` } };
      case 'TaskSucceeded': {
        const data = e.data.results.map((r): ImageItemDoc => {
          const url = resultUrlRef(r, e.data.assetsExpireAt);
          return {
            ...(url ? { url } : r.assetKey ? { b64_asset: r.assetKey } : {}),
            ...(r.revisedPrompt !== undefined ? { revised_prompt: r.revisedPrompt } : {}),
          };
        });
        const urls = data.some((d) => d.url);
        return {
          ...doc,
          body: {
            ...body,
            status: 'completed',
            progress: '100%',
            completed_at: e.data.completedAt,
            data,
            ...(urls ? { metadata: { assetsExpireAt: e.data.assetsExpireAt } } : {}),
          },
        };
      }
      case 'TaskFailed':
        return {
          ...doc,
          body: { ...body, status: 'failed', completed_at: e.data.completedAt, error: { code: 'task_failed', message: `${e.data.code}: ${e.data.reason}` } },
        };
      case 'AssetsExpired':
        return { ...doc, body: { ...body, data: [] } };
      default:
        return undefined;
    }
  },
});
