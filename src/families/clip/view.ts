/**
 * The `clip` task (spec 2.5, 3.6): `{code: 0, message: 'SUCCEED', request_id, data}` with
 * `data.task_status` submitted → processing → succeed | failed (the values of this family's
 * common clients), times in Unix milliseconds as those clients expect, `task_result.videos`
 * the gateway's signed URL (emptied when the assets expire; in the view an asset reference,
 * signed by the instance that answers) and `final_unit_deduction` the
 * seconds billed. `request_id` is the submit's request id; the query route answers its own.
 */
import { resultUrlRef } from '../../domain/asset-ref.js';
import type { EventDataOf, PriceBasis } from '../../domain/events.js';
import { settlementOf } from '../../domain/pricing.js';
import type { ClipSubmitBody, ClipTaskBody } from './schema.js';
import { taskView } from '../kit/view.js';

export const CLIP_FAMILY = 'clip';

export type ClipTaskData = ClipTaskBody['data'];

export interface ClipTaskDoc {
  accountId: string;
  /** text2video or image2video: the path the task was submitted on. */
  action: string;
  /** What the reservation was quoted on: `final_unit_deduction` is what settlement charges from it. */
  basis?: PriceBasis;
  body: ClipTaskBody;
}

/** The submit response (spec 2.5) with the task's first state. */
export function clipSubmitResponse(task: EventDataOf<'TaskSubmitted'>, requestId: string): ClipSubmitBody {
  const at = task.createdAt * 1000;
  return {
    code: 0,
    message: 'SUCCEED',
    request_id: requestId,
    data: { task_id: task.taskId, task_status: 'submitted', created_at: at, updated_at: at },
  };
}

function submittedClipBody(task: EventDataOf<'TaskSubmitted'>, requestId: string): ClipTaskBody {
  const at = task.createdAt * 1000;
  return {
    code: 0,
    message: 'SUCCEED',
    request_id: requestId,
    data: {
      task_id: task.taskId,
      task_status: 'submitted',
      task_status_msg: '',
      created_at: at,
      updated_at: at,
      task_result: { videos: [] },
      final_unit_deduction: 0,
    },
  };
}

export const clipTaskProjection = taskView<ClipTaskDoc>({
  name: 'clip-tasks',
  family: CLIP_FAMILY,
  submitted: (e) => ({ accountId: e.data.accountId, action: e.data.action, basis: e.data.basis, body: submittedClipBody(e.data, e.metadata.requestId ?? '') }),
  evolve(doc, e) {
    const data = doc.body.data;
    const next = (changes: Partial<ClipTaskData>): ClipTaskDoc => ({
      ...doc,
      body: { ...doc.body, data: { ...data, ...changes, updated_at: Date.parse(e.metadata.at) } },
    });
    switch (e.type) {
      case 'TaskProgressed':
        if (data.task_status === 'succeed' || data.task_status === 'failed') return undefined;
        return next({ task_status: e.data.status === 'in_progress' ? 'processing' : 'submitted' });
      case 'TaskSucceeded': {
        const videos = e.data.results
          .flatMap((r) => {
            const url = r.kind === 'video' ? resultUrlRef(r, e.data.assetsExpireAt) : undefined;
            return url ? [{ url, duration: r.durationSeconds ?? e.data.usage.units }] : [];
          })
          .map((v, i) => ({ id: `${data.task_id}-${i}`, ...v }));
        // The seconds charged (never more than asked; the asked seconds for an implausible 0 s).
        const charged = doc.basis ? settlementOf(doc.basis, e.data.usage).basis.units : e.data.usage.units;
        return next({ task_status: 'succeed', task_result: { videos }, final_unit_deduction: charged });
      }
      case 'TaskFailed':
        return next({ task_status: 'failed', task_status_msg: `${e.data.code}: ${e.data.reason}` });
      case 'AssetsExpired':
        return next({ task_result: { videos: [] } });
      default:
        return undefined;
    }
  },
});
