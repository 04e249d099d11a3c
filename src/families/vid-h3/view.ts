/**
 * The `Vid-H3` video object (spec 2.4, 3.3), shaped like OpenAI's video object so its client
 * reads it: `queued` → `in_progress` → `completed` | `failed` (with `error {code, message}`),
 * `progress` an integer, `completed_at` an integer as the spec types it (0 until the task
 * completes or fails), `expires_at` null until known, `seconds` and `size`
 * the requested values until the delivered ones are known. The document also keeps the
 * asset key the content endpoint streams, and whether the assets expired.
 */
import type { EventDataOf } from '../../domain/events.js';
import type { VidH3VideoBody } from './schema.js';
import { taskView } from '../kit/view.js';

export const VID_H3_FAMILY = 'vid-h3';

export interface VidH3VideoDoc {
  accountId: string;
  /** The MP4 the content endpoint streams, once completed. */
  assetKey?: string;
  expired?: boolean;
  body: VidH3VideoBody;
}

/** The body right after submit: the same function answers the submit and seeds the view. */
export function submittedVidH3Body(task: EventDataOf<'TaskSubmitted'>): VidH3VideoBody {
  return {
    id: task.taskId,
    object: 'video',
    model: task.model,
    status: 'queued',
    progress: 0,
    created_at: task.createdAt,
    completed_at: 0,
    expires_at: null,
    seconds: String(task.basis.units),
    size: task.basis.tier ?? '',
    error: null,
  };
}

export const vidH3VideoProjection = taskView<VidH3VideoDoc>({
  name: 'vid-h3-videos',
  family: VID_H3_FAMILY,
  submitted: (e) => ({ accountId: e.data.accountId, body: submittedVidH3Body(e.data) }),
  evolve(doc, e) {
    const body = doc.body;
    switch (e.type) {
      case 'TaskProgressed':
        if (body.status === 'completed' || body.status === 'failed') return undefined;
        return { ...doc, body: { ...body, status: e.data.status, progress: e.data.progress } };
      case 'TaskSucceeded': {
        const video = e.data.results.find((r) => r.kind === 'video' && r.assetKey);
        return {
          ...doc,
          ...(video?.assetKey ? { assetKey: video.assetKey } : {}),
          body: {
            ...body,
            status: 'completed',
            progress: 100,
            completed_at: e.data.completedAt,
            expires_at: e.data.assetsExpireAt || null,
            seconds: String(e.data.usage.units),
            size: e.data.usage.tier ?? body.size,
          },
        };
      }
      case 'TaskFailed':
        return { ...doc, body: { ...body, status: 'failed', completed_at: e.data.completedAt, error: { code: e.data.code, message: e.data.reason } } };
      case 'AssetsExpired':
        return { ...doc, expired: true };
      default:
        return undefined;
    }
  },
});
