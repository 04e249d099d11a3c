/**
 * The motion upstream protocol: the family's native asynchronous video synthesis API —
 * `POST …/services/aigc/{video-generation|image2video}/video-synthesis` with
 * `{model, input, parameters}` answering `{request_id, output: {task_id, task_status}}`, and
 * `GET …/tasks/{task_id}` with PENDING / RUNNING / SUCCEEDED / FAILED (UNKNOWN: the task is gone).
 * Settlement charges `usage.video_duration` at the `usage.SR` resolution the upstream reports.
 */
import { failureOf, upstreamJson } from '../../engine/channels/upstream-http.js';
import { UpstreamError, type UpstreamAdapter, type UpstreamStatus } from '../../engine/channels/upstream.js';
import { isPlainObject } from '../kit/fields.js';
import { knownTier, reportedNumber, VIDEO_MAX_AGE_SECONDS, VIDEO_POLL_INTERVAL_MS, videoSucceeded } from '../kit/video.js';
import { MOTION_TIERS } from './sizes.js';

export const MOTION_API = '/vendor/api/v1';
export const MOTION_SUBMIT_PATHS = {
  text: `${MOTION_API}/services/aigc/video-generation/video-synthesis`,
  image: `${MOTION_API}/services/aigc/image2video/video-synthesis`,
} as const;
export const MOTION_TASKS_PATH = `${MOTION_API}/tasks`;
const RUNNING_PROGRESS = 50;

function outputOf(body: unknown, what: string): Record<string, unknown> {
  const output = isPlainObject(body) ? body.output : undefined;
  if (!isPlainObject(output)) throw new UpstreamError(`${what}: upstream answered without output`, true);
  return output;
}

export const motionUpstream: UpstreamAdapter = {
  family: 'motion',
  delivery: () => 'url',
  pollIntervalMs: VIDEO_POLL_INTERVAL_MS,
  maxAgeSeconds: VIDEO_MAX_AGE_SECONDS,

  async submit({ baseUrl, channel, upstreamModel, task, signal, idempotencyKey }) {
    const path = task.action === 'text2video' ? MOTION_SUBMIT_PATHS.text : MOTION_SUBMIT_PATHS.image;
    const reply = await upstreamJson('POST', `${baseUrl}${path}`, {
      key: channel.key,
      body: { ...task.request, model: upstreamModel },
      signal,
      idempotencyKey,
    });
    if (reply.status !== 200) throw failureOf(reply, 'submit');
    const id = outputOf(reply.body, 'submit').task_id;
    if (typeof id !== 'string' || !id) throw new UpstreamError('submit: upstream answered without a task id', true);
    return { upstreamTaskId: id };
  },

  async poll({ baseUrl, channel, upstreamTaskId, task, signal }): Promise<UpstreamStatus> {
    const reply = await upstreamJson('GET', `${baseUrl}${MOTION_TASKS_PATH}/${encodeURIComponent(upstreamTaskId)}`, { key: channel.key, signal });
    if (reply.status === 404) return { state: 'lost', reason: 'the upstream no longer knows the task' };
    if (reply.status !== 200) throw failureOf(reply, 'poll');
    const output = outputOf(reply.body, 'poll');
    const usage = isPlainObject(reply.body) && isPlainObject(reply.body.usage) ? reply.body.usage : {};
    const snapshot = { task_status: output.task_status };
    switch (output.task_status) {
      case 'PENDING':
        return { state: 'queued', progress: 0, snapshot };
      case 'RUNNING':
        return { state: 'in_progress', progress: RUNNING_PROGRESS, snapshot };
      case 'SUCCEEDED': {
        if (typeof output.video_url !== 'string' || !output.video_url)
          return { state: 'failed', code: 'empty_result', reason: 'the upstream succeeded without a video URL' };
        const delivered = {
          seconds: reportedNumber(usage.video_duration),
          tier: knownTier(usage.SR === undefined ? undefined : `${String(usage.SR)}P`, MOTION_TIERS),
        };
        return videoSucceeded({ url: output.video_url }, delivered, task.basis.units, { ...snapshot, usage });
      }
      case 'FAILED':
        return { state: 'failed', code: String(output.code ?? 'upstream_failed'), reason: String(output.message ?? 'the upstream task failed'), snapshot };
      case 'UNKNOWN':
        return { state: 'lost', reason: 'the upstream reports the task as unknown' };
      default:
        throw new UpstreamError(`poll: unknown upstream status ${String(output.task_status)}`, true);
    }
  },
};
