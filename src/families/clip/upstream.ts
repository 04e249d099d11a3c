/**
 * The clip upstream protocol: the spec's own 4.12 interface, on the path the task was submitted
 * on. The upstream reports no progress, so `processing` is recorded as 50 %; the delivered
 * duration is what settlement charges, at the reserved mode (the upstream does not echo it).
 */
import { UpstreamError, type SubmittedTaskData, type UpstreamAdapter, type UpstreamStatus } from '../../engine/channels/upstream.js';
import { isPlainObject } from '../kit/fields.js';
import { getStatus, postSubmit, submittedAs, unknownStatus } from '../kit/upstream.js';
import { reportedNumber, VIDEO_UPSTREAM, videoSucceeded } from '../kit/video.js';
export const CLIP_PATH = '/clip/v1/videos';
const PROCESSING_PROGRESS = 50;

function dataOf(body: unknown, what: string): Record<string, unknown> {
  if (!isPlainObject(body)) throw new UpstreamError(`${what}: upstream answered without a body`, true);
  // The family answers HTTP 200 with a non-zero `code` for refusals.
  if (body.code !== undefined && body.code !== 0) throw new UpstreamError(`${what}: upstream refused: ${String(body.message ?? body.code)}`, false);
  if (!isPlainObject(body.data)) throw new UpstreamError(`${what}: upstream answered without data`, true);
  return body.data;
}

function firstVideo(data: Record<string, unknown>): { url: string; duration: unknown } | undefined {
  const result = isPlainObject(data.task_result) ? data.task_result : {};
  const video: unknown = Array.isArray(result.videos) ? result.videos[0] : undefined;
  return isPlainObject(video) && typeof video.url === 'string' && video.url ? { url: video.url, duration: video.duration } : undefined;
}

/** What a poll answered, from its `data`. */
function statusOf(data: Record<string, unknown>, task: SubmittedTaskData): UpstreamStatus {
  const snapshot = { task_status: data.task_status, task_status_msg: data.task_status_msg };
  switch (data.task_status) {
    case 'submitted':
      return { state: 'queued', progress: 0, snapshot };
    case 'processing':
      return { state: 'in_progress', progress: PROCESSING_PROGRESS, snapshot };
    case 'succeed': {
      const video = firstVideo(data);
      if (!video) return { state: 'failed', code: 'empty_result', reason: 'the upstream succeeded without a video' };
      return videoSucceeded({ url: video.url }, { seconds: reportedNumber(video.duration), tier: undefined }, task.basis.units, snapshot);
    }
    case 'failed':
      return { state: 'failed', code: 'upstream_failed', reason: String(data.task_status_msg || 'the upstream task failed'), snapshot };
    default:
      throw unknownStatus(data.task_status);
  }
}

export const clipUpstream: UpstreamAdapter = {
  family: 'clip',
  ...VIDEO_UPSTREAM,

  async submit(ctx) {
    const body = await postSubmit(ctx, `${ctx.baseUrl}${CLIP_PATH}/${ctx.task.action}`, { ...ctx.task.request, model_name: ctx.upstreamModel });
    return submittedAs(dataOf(body, 'submit').task_id);
  },

  async poll(ctx) {
    const url = `${ctx.baseUrl}${CLIP_PATH}/${ctx.task.action}/${encodeURIComponent(ctx.upstreamTaskId)}`;
    return getStatus(ctx, url, (body) => statusOf(dataOf(body, 'poll'), ctx.task));
  },
};
