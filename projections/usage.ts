/**
 * Usage by the hour: what settlements charged, per account, UTC hour, model and API key — what
 * `GET /api/usage` and `GET /api/admin/usage` sum into series by model or by key, by the hour or
 * by the day (src/http/api/usage.ts). One document per (account, hour, model, key); a settlement
 * adds to the one of its hour. Days are sums of their hours, made when read: a projection writes
 * one document per event (projection.ts), so a day document would be a second projection.
 *
 * Idempotent per event as every view: the runner folds an event into a document only when its
 * position is past the document's (runner.ts), so a replayed settlement is not counted twice.
 */
import type { RecordedDomainEvent } from '../src/domain/recorded.js';
import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

/** The key of settlements without an API key (and the model of those without a price basis). */
export const NO_KEY = '-';

export interface UsageDoc {
  accountId: string;
  /** The UTC hour, `YYYY-MM-DDTHH`. */
  hour: string;
  /** Its day, `YYYY-MM-DD`: what a range of hours is read by. */
  day: string;
  /** Its month, `YYYY-MM`: what a range of days is read by. */
  month: string;
  /** The settlement's model (its price basis's); NO_KEY when it carries no basis. */
  model: string;
  /** The API key the task was submitted with; NO_KEY for none. */
  tokenId: string;
  /** Sum of what the settlements charged. */
  charged: number;
  /** How many settlements: every task that completed and was billed, a free one (charged 0) included. Failed tasks are released, never settled. */
  tasks: number;
  /** Sum of the units charged for (images, seconds, 1K tokens, requests: the model's unit). */
  units: number;
}

type Settled = Extract<RecordedDomainEvent, { type: 'QuotaSettled' }>;

/** The UTC hour of an event's decision, `YYYY-MM-DDTHH`. */
const hourOf = (e: RecordedDomainEvent): string => new Date(Date.parse(e.metadata.at)).toISOString().slice(0, 13);

const keyOf = (e: Settled) => ({
  accountId: e.streamName.slice('account-'.length),
  hour: hourOf(e),
  model: e.data.basis?.model ?? NO_KEY,
  tokenId: e.data.tokenId ?? NO_KEY,
});

/** The document id of (account, hour, model, key): JSON, so no model or key name can make two tuples one id. */
export const usageDocId = (k: { accountId: string; hour: string; model: string; tokenId: string }): string =>
  JSON.stringify([k.accountId, k.hour, k.model, k.tokenId]);

export const usageProjection: Projection<UsageDoc> = {
  name: 'usage',
  view: VIEWS.usage,
  handles: ['QuotaSettled'],
  documentId: (e) => (e.type === 'QuotaSettled' ? usageDocId(keyOf(e)) : undefined),
  evolve(doc, e) {
    if (e.type !== 'QuotaSettled') return undefined;
    const k = keyOf(e);
    const base: UsageDoc = doc ?? { ...k, day: k.hour.slice(0, 10), month: k.hour.slice(0, 7), charged: 0, tasks: 0, units: 0 };
    return { ...base, charged: base.charged + e.data.charged, tasks: base.tasks + 1, units: base.units + (e.data.basis?.units ?? 0) };
  },
};
