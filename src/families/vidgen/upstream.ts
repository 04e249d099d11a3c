/**
 * The vidgen upstream protocol: the spec's own 4.3/4.4 interface (a gateway of this kind, or
 * the built-in simulator). The query envelope's `data.data` is the native task result; its
 * `duration` and `resolution` are what settlement charges.
 */
import { failureOf, upstreamJson } from '../../engine/channels/upstream-http.js';
import { UpstreamError, type UpstreamAdapter, type UpstreamStatus } from '../../engine/channels/upstream.js';
import { isPlainObject } from '../kit/fields.js';
import { knownTier, reportedNumber, VIDEO_MAX_AGE_SECONDS, VIDEO_POLL_INTERVAL_MS, videoSucceeded } from '../kit/video.js';
import { VIDGEN_TIERS } from './models.js';

export const VIDGEN_PATH = '/v1/video/generations';

function envelopeData(body: unknown): Record<string, unknown> {
  const data = isPlainObject(body) ? body.data : undefined;
  if (!isPlainObject(data)) throw new UpstreamError('poll: upstream answered without a data object', true);
  return data;
}

export const vidgenUpstream: UpstreamAdapter = {
  family: 'vidgen',
  delivery: () => 'url',
  pollIntervalMs: VIDEO_POLL_INTERVAL_MS,
  maxAgeSeconds: VIDEO_MAX_AGE_SECONDS,

  async submit({ baseUrl, channel, upstreamModel, task, signal, idempotencyKey }) {
    const reply = await upstreamJson('POST', `${baseUrl}${VIDGEN_PATH}`, {
      key: channel.key,
      body: { ...task.request, model: upstreamModel },
      signal,
      idempotencyKey,
    });
    if (reply.status !== 200) throw failureOf(reply, 'submit');
    const id = isPlainObject(reply.body) ? (reply.body.id ?? reply.body.task_id) : undefined;
    if (typeof id !== 'string' || !id) throw new UpstreamError('submit: upstream answered without a task id', true);
    return { upstreamTaskId: id };
  },

  async poll({ baseUrl, channel, upstreamTaskId, task, signal }): Promise<UpstreamStatus> {
    const reply = await upstreamJson('GET', `${baseUrl}${VIDGEN_PATH}/${encodeURIComponent(upstreamTaskId)}`, { key: channel.key, signal });
    if (reply.status === 404) return { state: 'lost', reason: 'the upstream no longer knows the task' };
    if (reply.status !== 200) throw failureOf(reply, 'poll');
    const data = envelopeData(reply.body);
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
        throw new UpstreamError(`poll: unknown upstream status ${String(data.status)}`, true);
    }
  },
};
