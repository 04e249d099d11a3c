/**
 * The `vidgen` query envelope (spec 2.3, 3.2): `{code, message, data}` where `data.id` is the
 * global position of the task's TaskSubmitted event (an integer, unique and increasing),
 * `data.status` NOT_START → IN_PROGRESS → SUCCESS | FAILURE, `data.result_url` the gateway's
 * signed URL (emptied when the assets expire; in the view an asset reference, signed by the
 * instance that answers) and `data.data` the upstream's own task result.
 */
import { resultUrlRef } from '../../domain/asset-ref.js';
import type { EventDataOf } from '../../domain/events.js';
import type { VidgenEnvelope, VidgenSubmitBody } from './schema.js';
import { taskView } from '../kit/view.js';

export const VIDGEN_FAMILY = 'vidgen';

export type VidgenTaskData = VidgenEnvelope['data'];

export interface VidgenTaskDoc {
  accountId: string;
  body: VidgenEnvelope;
}

/** The submit response (spec 2.3): a different shape from the query envelope. */
export function vidgenSubmitResponse(task: EventDataOf<'TaskSubmitted'>): VidgenSubmitBody {
  return {
    id: task.taskId,
    task_id: task.taskId,
    object: 'video',
    model: task.model,
    status: 'queued',
    progress: 0,
    created_at: task.createdAt,
  };
}

const secondsOf = (at: string): number => Math.floor(Date.parse(at) / 1000);

export function submittedVidgenEnvelope(task: EventDataOf<'TaskSubmitted'>, position: bigint): VidgenEnvelope {
  return {
    code: 'success',
    message: '',
    data: {
      id: Number(position),
      task_id: task.taskId,
      platform: VIDGEN_FAMILY,
      status: 'NOT_START',
      progress: '0%',
      fail_reason: '',
      result_url: '',
      created_at: task.createdAt,
      updated_at: task.createdAt,
      submit_time: task.createdAt,
      start_time: 0,
      finish_time: 0,
      properties: {
        origin_model_name: task.model,
        resolution: task.basis.tier ?? '',
        seconds: task.basis.units,
        reserved_resolution: task.basis.tier ?? '',
        reserved_seconds: task.basis.units,
      },
      data: {},
    },
  };
}

export const vidgenTaskProjection = taskView<VidgenTaskDoc>({
  name: 'vidgen-tasks',
  family: VIDGEN_FAMILY,
  submitted: (e) => ({ accountId: e.data.accountId, body: submittedVidgenEnvelope(e.data, e.position) }),
  evolve(doc, e) {
    const data = doc.body.data;
    const at = secondsOf(e.metadata.at);
    const next = (changes: Partial<VidgenTaskData>): VidgenTaskDoc => ({ ...doc, body: { ...doc.body, data: { ...data, ...changes, updated_at: at } } });
    switch (e.type) {
      case 'TaskProgressed': {
        if (data.status === 'SUCCESS' || data.status === 'FAILURE') return undefined;
        const running = e.data.status === 'in_progress';
        return next({
          status: running ? 'IN_PROGRESS' : 'NOT_START',
          progress: `${e.data.progress}%`,
          start_time: running && data.start_time === 0 ? at : data.start_time,
          ...(e.data.upstream ? { data: e.data.upstream } : {}),
        });
      }
      case 'TaskSucceeded':
        return next({
          status: 'SUCCESS',
          progress: '100%',
          result_url: e.data.results.map((r) => resultUrlRef(r, e.data.assetsExpireAt)).find((url) => url !== undefined) ?? '',
          start_time: data.start_time || at,
          finish_time: e.data.completedAt,
          properties: { ...data.properties, resolution: e.data.usage.tier ?? data.properties.resolution, seconds: e.data.usage.units },
          ...(e.data.upstream ? { data: e.data.upstream } : {}),
        });
      case 'TaskFailed':
        return next({ status: 'FAILURE', fail_reason: `${e.data.code}: ${e.data.reason}`, finish_time: e.data.completedAt });
      case 'AssetsExpired':
        return next({ result_url: '' });
      default:
        return undefined;
    }
  },
});
