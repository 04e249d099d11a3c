/**
 * The `art` upstream protocol: the family's own interface (docs/decisions/0030-art-submits-fetch-and-request-rules.md), which the
 * built-in simulator speaks too. Submit `POST /art/submit/{imagine|describe|blend|change}`
 * answers `{code: 1, result: <job id>}`; `GET /art/task/{id}/fetch` answers the 2.7 record.
 * A CHANGE goes to the channel that ran the task it changes (only that upstream knows the job).
 */
import { upstreamMessage } from '../../engine/channels/upstream-http.js';
import { getStatus, postSubmit, recordStatus, submittedAs, text } from '../kit/upstream.js';
import { UpstreamError, type SubmittedTaskData, type UpstreamAdapter, type UpstreamResult, type UpstreamStatus } from '../../engine/channels/upstream.js';

/** Answer codes of this family: 1 accepted, 22 queued (accepted), 4 refused, 9/23 failure/busy. */
const ACCEPTED = [1, 22];
const RETRYABLE = [9, 23];

interface UpstreamArtRecord {
  status?: unknown;
  progress?: unknown;
  failReason?: unknown;
  prompt?: unknown;
  imageUrl?: unknown;
  images?: unknown;
  width?: unknown;
  height?: unknown;
  seed?: unknown;
}

function submitPathOf(action: string): string {
  if (action === 'IMAGINE' || action === 'DESCRIBE' || action === 'BLEND') return action.toLowerCase();
  return 'change';
}

/** What goes upstream: the recorded request, except that CHANGE names the upstream job. */
function submitBody(task: SubmittedTaskData, channelId: string): Record<string, unknown> {
  const r = task.request;
  if (submitPathOf(task.action) !== 'change') return r;
  if (r.parentChannelId !== channelId)
    throw new UpstreamError(`submit: the task ${text(r.taskId)} was made on channel ${text(r.parentChannelId)}; only it can change it`, true);
  return {
    taskId: r.parentUpstreamTaskId,
    action: r.action,
    ...(r.index !== undefined ? { index: r.index } : {}),
    ...(r.state !== undefined ? { state: r.state } : {}),
  };
}

function succeeded(task: SubmittedTaskData, record: UpstreamArtRecord): UpstreamStatus {
  const snapshot = { status: 'SUCCESS', width: record.width, height: record.height, seed: record.seed };
  if (task.action === 'DESCRIBE') {
    const prompts = text(record.prompt);
    if (!prompts) return { state: 'failed', code: 'empty_result', reason: 'the upstream described nothing' };
    return { state: 'succeeded', results: [{ kind: 'text', text: prompts }], usage: { units: 1 }, snapshot };
  }
  const main = text(record.imageUrl);
  const images = Array.isArray(record.images) ? record.images.map(text).filter(Boolean) : [];
  const urls = main && !(images.length === 1 && images[0] === main) ? [main, ...images] : images.length ? images : [main].filter(Boolean);
  if (urls.length === 0) return { state: 'failed', code: 'empty_result', reason: 'the upstream finished without images' };
  const results: UpstreamResult[] = urls.map((url) => ({ kind: 'image', url }));
  return { state: 'succeeded', results, usage: { units: 1 }, snapshot };
}

const recordOf = (body: unknown): UpstreamArtRecord & { code?: unknown } => body ?? {};

/** What a poll answered. */
function statusOf(record: UpstreamArtRecord, task: SubmittedTaskData): UpstreamStatus {
  return recordStatus({ status: record.status, progress: record.progress, failReason: record.failReason }, ['NOT_START', 'SUBMITTED'], () =>
    succeeded(task, record),
  );
}

export const artUpstream: UpstreamAdapter = {
  family: 'art',
  delivery: () => 'url',
  pollIntervalMs: 2000,
  maxAgeSeconds: 30 * 60,

  async submit(ctx) {
    const { task } = ctx;
    const body = await postSubmit(ctx, `${ctx.baseUrl}/art/submit/${submitPathOf(task.action)}`, submitBody(task, ctx.channel.channelId));
    const answer = (body ?? {}) as { code?: unknown; result?: unknown };
    const code = typeof answer.code === 'number' ? answer.code : -1;
    if (!ACCEPTED.includes(code)) throw new UpstreamError(`submit: upstream answered code ${code}: ${upstreamMessage(body)}`, RETRYABLE.includes(code));
    return submittedAs(answer.result, 'job id');
  },

  async poll(ctx) {
    const url = `${ctx.baseUrl}/art/task/${encodeURIComponent(ctx.upstreamTaskId)}/fetch`;
    return getStatus(ctx, url, (body) => statusOf(recordOf(body), ctx.task), { lost: (reply) => reply.status === 404 || recordOf(reply.body).code === 4 });
  },
};
