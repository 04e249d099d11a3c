/**
 * The `Vid-H3` video object (spec 2.4, 3.3), shaped like OpenAI's video object so its client
 * reads it: `queued` → `in_progress` → `completed` | `failed` (with `error {code, message}`),
 * `progress` an integer, `completed_at` an integer as the spec types it (0 until the task
 * completes or fails), `expires_at` null until known, `seconds` and `size`
 * the requested values until the delivered ones are known. The document also keeps the
 * asset key the content endpoint streams, and whether the assets expired.
 */
import type { EventDataOf } from '../../domain/events.js';
import type { VidH3ListQuery, VidH3VideoBody } from './schema.js';
import { taskView } from '../kit/view.js';
import type { ViewStore } from '../../ports/view-store.js';
import { GatewayError } from '../../http/errors.js';

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

/**
 * `GET /v1/videos`: a page of the account's videos from the view, as OpenAI lists them
 * (`{object: 'list', data, first_id, last_id, has_more}`, the next page `after` the last id).
 * Ordered by `created_at`, ties by id, in the same direction. The view only matches on equal
 * fields, so the account's documents are read and the page cut here. A video submitted a moment
 * ago shows once the view has folded its submit.
 */
export async function listVidH3Videos(views: ViewStore, accountId: string, query: VidH3ListQuery) {
  const desc = query.order === 'desc';
  const docs = await views.find<VidH3VideoDoc>(vidH3VideoProjection.view, { accountId }, { sortBy: 'body.created_at', desc });
  const sign = desc ? -1 : 1;
  const bodies = docs.map((d) => d.doc.body).sort((a, b) => sign * (a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  let start = 0;
  if (query.after !== undefined) {
    const at = bodies.findIndex((b) => b.id === query.after);
    if (at < 0) throw new GatewayError(400, 'invalid_request', `after: no video ${query.after}`, 'after');
    start = at + 1;
  }
  const data = bodies.slice(start, start + query.limit);
  return {
    object: 'list' as const,
    data,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
    has_more: start + query.limit < bodies.length,
  };
}
