/**
 * The Vid-H3 upstream protocol: the spec's own 4.13 interface (OpenAI-style video objects). The
 * upstream serves the finished video only from its authenticated content endpoint, so the
 * result is that URL marked `withChannelKey`: the engine streams it into the asset store with
 * the channel key (never holding the video whole).
 */
import type { SubmittedTaskData, UpstreamAdapter, UpstreamStatus } from '../../engine/channels/upstream.js';
import { isPlainObject } from '../kit/fields.js';
import { getStatus, postSubmit, submittedAs, unknownStatus } from '../kit/upstream.js';
import { knownTier, reportedNumber, VIDEO_UPSTREAM, videoSucceeded } from '../kit/video.js';
import { VID_H3_RESOLUTIONS } from './schema.js';

const PATH = '/v1/videos';

/** What a poll of the video at `url` answered. */
function statusOf(body: unknown, url: string, task: SubmittedTaskData): UpstreamStatus {
  const video = isPlainObject(body) ? body : {};
  const snapshot = { status: video.status, progress: video.progress, seconds: video.seconds, size: video.size };
  const progress = reportedNumber(video.progress) ?? 0;
  switch (video.status) {
    case 'queued':
    case 'in_progress':
      return { state: video.status, progress, snapshot };
    case 'completed': {
      const delivered = { seconds: reportedNumber(video.seconds), tier: knownTier(video.size, VID_H3_RESOLUTIONS) };
      return videoSucceeded({ url: `${url}/content`, withChannelKey: true }, delivered, task.basis.units, snapshot);
    }
    case 'failed': {
      const error = isPlainObject(video.error) ? video.error : {};
      return { state: 'failed', code: String(error.code ?? 'upstream_failed'), reason: String(error.message ?? 'the upstream video failed'), snapshot };
    }
    default:
      throw unknownStatus(video.status);
  }
}

export const vidH3Upstream: UpstreamAdapter = {
  family: 'vid-h3',
  ...VIDEO_UPSTREAM,

  async submit(ctx) {
    const body = await postSubmit(ctx, `${ctx.baseUrl}${PATH}`, { ...ctx.task.request, model: ctx.upstreamModel });
    return submittedAs(isPlainObject(body) ? body.id : undefined, 'video id');
  },

  async poll(ctx) {
    const url = `${ctx.baseUrl}${PATH}/${encodeURIComponent(ctx.upstreamTaskId)}`;
    return getStatus(ctx, url, (body) => statusOf(body, url, ctx.task), { what: 'video' });
  },
};
