/**
 * The vidgen upstream protocol: the spec's own 4.3/4.4 interface (a gateway of this kind, or
 * the built-in simulator). The query envelope's `data.data` is the native task result; its
 * `duration` and `resolution` are what settlement charges.
 */
import { UpstreamError, type SubmittedTaskData, type UpstreamAdapter, type UpstreamStatus } from '../../engine/channels/upstream.js';
import { isPlainObject } from '../kit/fields.js';
import { getStatus, postSubmit, submittedAs, unknownStatus } from '../kit/upstream.js';
import { knownTier, reportedNumber, VIDEO_UPSTREAM, videoSucceeded } from '../kit/video.js';
import { VIDGEN_TIERS } from './models.js';

export const VIDGEN_PATH = '/v1/video/generations';

function envelopeData(body: unknown): Record<string, unknown> {
  const data = isPlainObject(body) ? body.data : undefined;
  if (!isPlainObject(data)) throw new UpstreamError('poll: upstream answered without a data object', true);
  return data;
}

/** What a poll answered. */
function statusOf(body: unknown, task: SubmittedTaskData): UpstreamStatus {
  const data = envelopeData(body);
  const native = isPlainObject(data.data) ? data.data : {};
  const progress = reportedNumber(String(data.progress ?? '0').replace('%', '')) ?? 0;
  switch (data.status) {
    case 'NOT_START':
      return { state: 'queued', progress, snapshot: native };
    case 'IN_PROGRESS':
      return { state: 'in_progress', progress, snapshot: native };
    case 'SUCCESS': {
      if (typeof data.result_url !== 'string' || !data.result_url)
        return { state: 'failed', code: 'empty_result', reason: 'the upstream succeeded without a video URL' };
      const delivered = { seconds: reportedNumber(native.duration), tier: knownTier(native.resolution, VIDGEN_TIERS) };
      return videoSucceeded({ url: data.result_url }, delivered, task.basis.units, native);
    }
    case 'FAILURE':
      return {
        state: 'failed',
        code: 'upstream_failed',
        reason: typeof data.fail_reason === 'string' && data.fail_reason ? data.fail_reason : 'the upstream task failed',
        snapshot: native,
      };
    default:
      throw unknownStatus(data.status);
  }
}

export const vidgenUpstream: UpstreamAdapter = {
  family: 'vidgen',
  ...VIDEO_UPSTREAM,

  async submit(ctx) {
    const body = await postSubmit(ctx, `${ctx.baseUrl}${VIDGEN_PATH}`, { ...ctx.task.request, model: ctx.upstreamModel });
    return submittedAs(isPlainObject(body) ? (body.id ?? body.task_id) : undefined);
  },

  async poll(ctx) {
    return getStatus(ctx, `${ctx.baseUrl}${VIDGEN_PATH}/${encodeURIComponent(ctx.upstreamTaskId)}`, (body) => statusOf(body, ctx.task));
  },
};
