/**
 * Every task of an account in one family-neutral shape, for `GET /api/tasks` (the web console's
 * task list): what was asked, where it stands, what it produced and what it cost. Each family's
 * own view stays the answer of its query route; this one only summarises across families.
 * Result URLs are asset references (src/domain/asset-ref.ts), signed by the instance that
 * answers, as in every task view.
 */
import { deliveredAsUrl, resultUrlRef } from '../src/domain/asset-ref.js';
import { taskIdOfStream, type TaskResultItem } from '../src/domain/events.js';
import type { RecordedDomainEvent } from '../src/domain/recorded.js';
import type { Projection } from './projection.js';
import { VIEWS } from './views.js';

/** The longest prompt and result text the summary keeps: the family's query route has the whole. */
export const SUMMARY_TEXT_LIMIT = 500;

export interface AccountTaskResult {
  kind: TaskResultItem['kind'];
  /** An asset reference for results delivered as URLs; null for inline (Base64) or text results. */
  url: string | null;
  contentType: string | null;
  text: string | null;
}

export interface AccountTaskDoc {
  taskId: string;
  accountId: string;
  /** The key it was submitted with; absent on documents projected before it was kept. */
  tokenId?: string;
  /** The channel whose upstream took it (the last one, after a fail-over); null before. */
  channelId?: string | null;
  family: string;
  action: string;
  model: string;
  /** The request's prompt when it has one, cut to SUMMARY_TEXT_LIMIT characters. */
  prompt: string | null;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  /** 0 to 100. */
  progress: number;
  /** Unix seconds. */
  createdAt: number;
  completedAt: number | null;
  /** Global position of the submit, as a number: the list's order (newest first). */
  seq: number;
  reserved: number;
  /** What settlement charged; 0 once the reservation was released; null while open. */
  charged: number | null;
  error: { code: string; reason: string } | null;
  results: AccountTaskResult[];
  /** Unix seconds when the result files expire; null when there are none. */
  assetsExpireAt: number | null;
  callbackUrl: string | null;
  sync: boolean;
}

const cut = (text: string): string => (text.length > SUMMARY_TEXT_LIMIT ? `${text.slice(0, SUMMARY_TEXT_LIMIT)}…` : text);

function resultOf(item: TaskResultItem, assetsExpireAt: number): AccountTaskResult {
  return {
    kind: item.kind,
    url: deliveredAsUrl(item) ? (resultUrlRef(item, assetsExpireAt) ?? null) : null,
    contentType: item.contentType ?? null,
    text: item.text !== undefined ? cut(item.text) : null,
  };
}

/**
 * The text the task was asked with, from the recorded (upstream) request: `prompt` in most
 * families, a song's description in tune's description mode, motion's `input.prompt`.
 */
function promptOf(request: Record<string, unknown>): string | null {
  const input = request.input;
  const candidates = [
    request.prompt,
    request.ai_description_prompt,
    typeof input === 'object' && input !== null ? (input as Record<string, unknown>).prompt : undefined,
  ];
  const text = candidates.find((c): c is string => typeof c === 'string' && c.trim() !== '');
  return text === undefined ? null : cut(text);
}

/** Task events belong to the task's stream; settlements and releases (account stream) name the task. */
function taskIdOf(e: RecordedDomainEvent): string | undefined {
  if (e.type === 'QuotaSettled' || e.type === 'QuotaReleased') return e.data.taskId;
  return e.streamName.startsWith('task-') ? taskIdOfStream(e.streamName) : undefined;
}

export const accountTasksProjection: Projection<AccountTaskDoc> = {
  name: 'account-tasks',
  view: VIEWS.accountTasks,
  handles: ['TaskSubmitted', 'UpstreamSubmitted', 'TaskProgressed', 'TaskSucceeded', 'TaskFailed', 'AssetsExpired', 'QuotaSettled', 'QuotaReleased'],
  documentId: taskIdOf,
  evolve(doc, e) {
    if (e.type === 'TaskSubmitted') {
      if (doc) return undefined;
      const d = e.data;
      const prompt = promptOf(d.request);
      return {
        taskId: d.taskId,
        accountId: d.accountId,
        tokenId: d.tokenId,
        channelId: null,
        family: d.family,
        action: d.action,
        model: d.model,
        prompt,
        status: 'queued',
        progress: 0,
        createdAt: d.createdAt,
        completedAt: null,
        seq: Number(e.position),
        reserved: d.reserved,
        charged: null,
        error: null,
        results: [],
        assetsExpireAt: null,
        callbackUrl: d.callbackUrl ?? null,
        sync: d.sync ?? false,
      };
    }
    if (!doc) return undefined;
    const final = doc.status === 'completed' || doc.status === 'failed';
    switch (e.type) {
      case 'UpstreamSubmitted':
        return { ...doc, channelId: e.data.channelId };
      case 'TaskProgressed':
        return final ? undefined : { ...doc, status: e.data.status, progress: e.data.progress };
      case 'TaskSucceeded': {
        const expires = e.data.assetsExpireAt;
        return {
          ...doc,
          status: 'completed',
          progress: 100,
          completedAt: e.data.completedAt,
          results: e.data.results.map((r) => resultOf(r, expires)),
          assetsExpireAt: expires > 0 ? expires : null,
        };
      }
      case 'TaskFailed':
        return { ...doc, status: 'failed', completedAt: e.data.completedAt, error: { code: e.data.code, reason: e.data.reason } };
      case 'AssetsExpired':
        return { ...doc, results: doc.results.map((r) => (r.url ? { ...r, url: null } : r)) };
      case 'QuotaSettled':
        return { ...doc, charged: e.data.charged };
      case 'QuotaReleased':
        return doc.charged === null ? { ...doc, charged: 0 } : undefined;
      default:
        return undefined;
    }
  },
};
