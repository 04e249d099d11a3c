/**
 * Step 5 of docs/adding-a-family.md, `view.ts`: the toy task's query view, a pure `Projection`
 * (projections/projection.ts) built by the kit's `taskView`, whose document holds the query
 * answer in `body` (schema.ts's `ToyTaskAnswer`), except that a sketch's URL is kept as an
 * asset reference (`resultUrlRef`, src/domain/asset-ref.ts) that the answering instance signs.
 * The submit answers with `submittedToyBody`, the view's first document.
 */
import { resultUrlRef } from '../../../src/domain/asset-ref.js';
import type { EventDataOf, PriceBasis } from '../../../src/domain/events.js';
import { settlementOf } from '../../../src/domain/pricing.js';
import { taskView } from '../../../src/families/kit/view.js';
import type { ToyTaskBody } from './schema.js';

/** The TaskSubmitted family: what the view recognises among every family's tasks. */
export const TOY_FAMILY = 'toy';

export interface ToyTaskDoc {
  accountId: string;
  /** What the reservation was quoted on: `charged` is what settlement takes from it. */
  basis?: PriceBasis;
  body: ToyTaskBody;
}

/** The task right after submit: the submit's answer and the view's first document. */
export function submittedToyBody(task: EventDataOf<'TaskSubmitted'>): ToyTaskBody {
  return { id: task.taskId, object: 'toy.sketch', model: task.model, status: 'queued', progress: 0, created_at: task.createdAt, sketches: [], charged: 0 };
}

export const toyTaskProjection = taskView<ToyTaskDoc>({
  name: 'toy-tasks',
  family: TOY_FAMILY,
  submitted: (e) => ({ accountId: e.data.accountId, basis: e.data.basis, body: submittedToyBody(e.data) }),
  evolve(doc, e) {
    const body = doc.body;
    const next = (changes: Partial<ToyTaskBody>): ToyTaskDoc => ({ ...doc, body: { ...body, ...changes } });
    switch (e.type) {
      case 'TaskProgressed':
        if (body.status === 'done' || body.status === 'failed') return undefined;
        return next({ status: e.data.status === 'in_progress' ? 'drawing' : 'queued', progress: e.data.progress });
      case 'TaskSucceeded': {
        const sketches = e.data.results.flatMap((r) => {
          const url = resultUrlRef(r, e.data.assetsExpireAt);
          return url ? [{ url }] : [];
        });
        const charged = doc.basis ? settlementOf(doc.basis, e.data.usage).actual : 0;
        return next({ status: 'done', progress: 100, sketches, charged });
      }
      case 'TaskFailed':
        return next({ status: 'failed', failure: `${e.data.code}: ${e.data.reason}` });
      case 'AssetsExpired':
        return next({ sketches: [] });
      default:
        return undefined;
    }
  },
});
