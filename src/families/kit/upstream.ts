/**
 * What the asynchronous families' upstream adapters share: the submit's POST and the task id it
 * answers with, the poll's GET (an answer that says the upstream no longer knows the task makes
 * it lost) and readers of the values a status reports.
 */
import { failureOf, upstreamJson, type UpstreamReply } from '../../engine/channels/upstream-http.js';
import { UpstreamError, type UpstreamContext, type UpstreamStatus } from '../../engine/channels/upstream.js';

export interface PostSubmitOptions {
  /** What the call is, in a failure's message (default: submit). */
  what?: string;
  /** Deadline for the call (default DEFAULT_UPSTREAM_TIMEOUT_MS; a synchronous call's is longer). */
  timeoutMs?: number;
}

/** POSTs a submit with the task's client reference; an answer other than 200 is the upstream's failure. Resolves with its body. */
export async function postSubmit(ctx: UpstreamContext, url: string, body: unknown, options: PostSubmitOptions = {}): Promise<unknown> {
  const reply = await upstreamJson('POST', url, {
    key: ctx.channel.key,
    body,
    timeoutMs: options.timeoutMs,
    signal: ctx.signal,
    idempotencyKey: ctx.idempotencyKey,
  });
  if (reply.status !== 200) throw failureOf(reply, options.what ?? 'submit');
  return reply.body;
}

/** The id the upstream gave the submitted task (`what` names it); an answer without one is worth another channel. */
export function submittedAs(id: unknown, what = 'task id'): { upstreamTaskId: string } {
  if (typeof id !== 'string' || !id) throw new UpstreamError(`submit: upstream answered without a ${what}`, true);
  return { upstreamTaskId: id };
}

/** The upstream no longer knows the task: it answers 404, or 400 naming `task_not_exist` (the spec's gateway protocols). */
export const taskNotExist = (reply: UpstreamReply): boolean =>
  reply.status === 404 || (reply.status === 400 && JSON.stringify(reply.body).includes('task_not_exist'));

export interface GetStatusOptions {
  /** Whether the answer says the upstream no longer knows the task (default: a 404). */
  lost?: (reply: UpstreamReply) => boolean;
  /** What the task is called in the lost reason (default: task). */
  what?: string;
}

/**
 * GETs a task's status and reads the answer's body with `statusOf`: a task the upstream no longer
 * knows is lost, an answer other than 200 the upstream's failure.
 */
export async function getStatus(
  ctx: UpstreamContext,
  url: string,
  statusOf: (body: unknown) => UpstreamStatus,
  options: GetStatusOptions = {},
): Promise<UpstreamStatus> {
  const reply = await upstreamJson('GET', url, { key: ctx.channel.key, signal: ctx.signal });
  if (options.lost ? options.lost(reply) : reply.status === 404) return { state: 'lost', reason: `the upstream no longer knows the ${options.what ?? 'task'}` };
  if (reply.status !== 200) throw failureOf(reply, 'poll');
  return statusOf(reply.body);
}

/** A status the adapter does not know: worth polling again. */
export function unknownStatus(status: unknown): UpstreamError {
  return new UpstreamError(`poll: unknown upstream status ${String(status)}`, true);
}

/** A task record of the spec's own interfaces (art, tune): its status, progress and failure reason as reported. */
export interface TaskRecordStatus {
  status: unknown;
  progress: unknown;
  failReason: unknown;
}

/**
 * What a task record says: the `waiting` statuses are queued, IN_PROGRESS in progress, SUCCESS
 * what `succeeded` reads, FAILURE failed with the record's reason; any other status unknown.
 */
export function recordStatus(record: TaskRecordStatus, waiting: readonly string[], succeeded: () => UpstreamStatus): UpstreamStatus {
  const snapshot = { status: record.status, progress: record.progress };
  if (typeof record.status === 'string' && waiting.includes(record.status)) return { state: 'queued', progress: percent(record.progress), snapshot };
  switch (record.status) {
    case 'IN_PROGRESS':
      return { state: 'in_progress', progress: percent(record.progress), snapshot };
    case 'SUCCESS':
      return succeeded();
    case 'FAILURE':
      return { state: 'failed', code: 'upstream_failed', reason: text(record.failReason) || 'the upstream task failed', snapshot };
    default:
      throw unknownStatus(record.status);
  }
}

/** A progress as reported, a number or a numeric string ('42', '42%'); 0 for anything else. */
export function percent(p: unknown): number {
  const n = typeof p === 'number' ? p : Number.parseFloat(String(p ?? '0'));
  return Number.isFinite(n) ? n : 0;
}

/** A string the upstream reported; '' for anything else. */
export const text = (value: unknown): string => (typeof value === 'string' ? value : '');
