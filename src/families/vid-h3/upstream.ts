/**
 * The Vid-H3 upstream protocol: the spec's own 4.13 interface (OpenAI-style video objects). The
 * upstream serves the finished video only from its authenticated content endpoint, so the
 * result is that URL marked `withChannelKey`: the engine streams it into the asset store with
 * the channel key (never holding the video whole).
 */
import { failureOf, upstreamJson } from '../../engine/channels/upstream-http.js';
import { UpstreamError, type UpstreamAdapter, type UpstreamStatus } from '../../engine/channels/upstream.js';
import { isPlainObject } from '../kit/fields.js';
import { knownTier, reportedNumber, VIDEO_MAX_AGE_SECONDS, VIDEO_POLL_INTERVAL_MS, videoSucceeded } from '../kit/video.js';
import { VID_H3_RESOLUTIONS } from './request.js';

const PATH = '/v1/videos';

export const vidH3Upstream: UpstreamAdapter = {
  family: 'vid-h3',
  delivery: () => 'url',
  pollIntervalMs: VIDEO_POLL_INTERVAL_MS,
  maxAgeSeconds: VIDEO_MAX_AGE_SECONDS,

  async submit({ baseUrl, channel, upstreamModel, task, signal, idempotencyKey }) {
    const reply = await upstreamJson('POST', `${baseUrl}${PATH}`, {
      key: channel.key,
      body: { ...task.request, model: upstreamModel },
      signal,
      idempotencyKey,
    });
    if (reply.status !== 200) throw failureOf(reply, 'submit');
    const id = isPlainObject(reply.body) ? reply.body.id : undefined;
    if (typeof id !== 'string' || !id) throw new UpstreamError('submit: upstream answered without a video id', true);
    return { upstreamTaskId: id };
  },

  async poll({ baseUrl, channel, upstreamTaskId, task, signal }): Promise<UpstreamStatus> {
    const url = `${baseUrl}${PATH}/${encodeURIComponent(upstreamTaskId)}`;
    const reply = await upstreamJson('GET', url, { key: channel.key, signal });
    if (reply.status === 404) return { state: 'lost', reason: 'the upstream no longer knows the video' };
    if (reply.status !== 200) throw failureOf(reply, 'poll');
    const video = isPlainObject(reply.body) ? reply.body : {};
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
        throw new UpstreamError(`poll: unknown upstream status ${String(video.status)}`, true);
    }
  },
};
