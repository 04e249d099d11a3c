/**
 * The motion upstream protocol: the family's native asynchronous video synthesis API —
 * `POST …/services/aigc/{video-generation|image2video}/video-synthesis` with
 * `{model, input, parameters}` answering `{request_id, output: {task_id, task_status}}`, and
 * `GET …/tasks/{task_id}` with PENDING / RUNNING / SUCCEEDED / FAILED (UNKNOWN: the task is gone).
 * Settlement charges `usage.video_duration` at the `usage.SR` resolution the upstream reports.
 */
import { UpstreamError, type SubmittedTaskData, type UpstreamAdapter, type UpstreamStatus } from '../../engine/channels/upstream.js';
import { isPlainObject } from '../kit/fields.js';
import { getStatus, postSubmit, submittedAs, unknownStatus } from '../kit/upstream.js';
import { knownTier, reportedNumber, VIDEO_UPSTREAM, videoSucceeded } from '../kit/video.js';
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

/** What a poll answered. */
function statusOf(body: unknown, task: SubmittedTaskData): UpstreamStatus {
  const output = outputOf(body, 'poll');
  const usage = isPlainObject(body) && isPlainObject(body.usage) ? body.usage : {};
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
      throw unknownStatus(output.task_status);
  }
}

export const motionUpstream: UpstreamAdapter = {
  family: 'motion',
  ...VIDEO_UPSTREAM,

  async submit(ctx) {
    const path = ctx.task.action === 'text2video' ? MOTION_SUBMIT_PATHS.text : MOTION_SUBMIT_PATHS.image;
    const body = await postSubmit(ctx, `${ctx.baseUrl}${path}`, { ...ctx.task.request, model: ctx.upstreamModel });
    return submittedAs(outputOf(body, 'submit').task_id);
  },

  async poll(ctx) {
    return getStatus(ctx, `${ctx.baseUrl}${MOTION_TASKS_PATH}/${encodeURIComponent(ctx.upstreamTaskId)}`, (body) => statusOf(body, ctx.task));
  },
};
