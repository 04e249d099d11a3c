/**
 * The `motion` task (spec 2.8, 3.7; query endpoint decided in docs/decisions/0036-motion.md), in the shape of
 * this family's native task query: `{request_id, output: {task_id, task_status, ...}, usage?}`
 * with `task_status` PENDING → RUNNING → SUCCEEDED | FAILED, times as the family's
 * `YYYY-MM-DD HH:mm:ss.SSS` (UTC) text, `output.video_url` the gateway's signed URL (removed
 * when the assets expire), `output.code` / `output.message` on failure, and `usage` (seconds and
 * resolution delivered) on success. `request_id` is the submit's; the query route answers its own.
 */
import { resultUrlRef } from '../../domain/asset-ref.js';
import type { EventDataOf } from '../../domain/events.js';
import type { MotionSubmitBody, MotionTaskBody } from './schema.js';
import { taskView } from '../kit/view.js';

export const MOTION_FAMILY = 'motion';

export type MotionTaskOutput = MotionTaskBody['output'];

export interface MotionTaskDoc {
  accountId: string;
  body: MotionTaskBody;
}

/** `2026-01-01 12:00:00.000`: the family's time text, in UTC. */
const motionTime = (ms: number): string => new Date(ms).toISOString().replace('T', ' ').replace('Z', '');

/** The submit response (spec 2.8); `code` and `message` stay empty on success, as the family's clients expect. */
export function motionSubmitResponse(task: EventDataOf<'TaskSubmitted'>, requestId: string): MotionSubmitBody {
  return { request_id: requestId, output: { task_id: task.taskId, task_status: 'PENDING' }, code: '', message: '' };
}

/** The first document; `submittedAt` (epoch ms) is when the submit was recorded. */
function submittedMotionBody(task: EventDataOf<'TaskSubmitted'>, requestId: string, submittedAt: number): MotionTaskBody {
  return { request_id: requestId, output: { task_id: task.taskId, task_status: 'PENDING', submit_time: motionTime(submittedAt) } };
}

/** `720P` → 720, the family's `SR` number. */
const srOf = (tier: string | undefined): number | undefined => {
  const n = Number.parseInt(tier ?? '', 10);
  return Number.isFinite(n) ? n : undefined;
};

export const motionTaskProjection = taskView<MotionTaskDoc>({
  name: 'motion-tasks',
  family: MOTION_FAMILY,
  submitted: (e) => ({ accountId: e.data.accountId, body: submittedMotionBody(e.data, e.metadata.requestId ?? '', Date.parse(e.metadata.at)) }),
  evolve(doc, e) {
    const output = doc.body.output;
    const at = motionTime(Date.parse(e.metadata.at));
    const next = (changes: Partial<MotionTaskOutput>, usage?: MotionTaskBody['usage']): MotionTaskDoc => ({
      ...doc,
      body: { ...doc.body, output: { ...output, ...changes }, ...(usage ? { usage } : {}) },
    });
    const finished = output.task_status === 'SUCCEEDED' || output.task_status === 'FAILED';
    switch (e.type) {
      case 'TaskProgressed': {
        if (finished) return undefined;
        const running = e.data.status === 'in_progress';
        return next({ task_status: running ? 'RUNNING' : 'PENDING', ...(running && !output.scheduled_time ? { scheduled_time: at } : {}) });
      }
      case 'TaskSucceeded': {
        // An asset reference: the instance that answers signs it.
        const url = e.data.results.map((r) => (r.kind === 'video' ? resultUrlRef(r, e.data.assetsExpireAt) : undefined)).find((u) => u !== undefined);
        const sr = srOf(e.data.usage.tier);
        return next(
          { task_status: 'SUCCEEDED', scheduled_time: output.scheduled_time ?? at, end_time: at, ...(url ? { video_url: url } : {}) },
          { video_duration: e.data.usage.units, video_count: 1, ...(sr !== undefined ? { SR: sr } : {}) },
        );
      }
      case 'TaskFailed':
        return next({ task_status: 'FAILED', end_time: at, code: e.data.code, message: e.data.reason });
      case 'AssetsExpired': {
        const { video_url: _expired, ...rest } = output;
        return { ...doc, body: { ...doc.body, output: rest } };
      }
      default:
        return undefined;
    }
  },
});
