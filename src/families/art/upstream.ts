/**
 * The `art` upstream protocol: the family's own interface (docs/decisions/0030-art-submits-fetch-and-request-rules.md), which the
 * built-in simulator speaks too. Submit `POST /art/submit/{imagine|describe|blend|change}`
 * answers `{code: 1, result: <job id>}`; `GET /art/task/{id}/fetch` answers the 2.7 record.
 * A CHANGE goes to the channel that ran the task it changes (only that upstream knows the job).
 */
import { failureOf, upstreamJson, upstreamMessage } from '../../engine/channels/upstream-http.js';
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

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const percent = (p: unknown): number => {
  const n = typeof p === 'number' ? p : Number.parseFloat(String(p ?? '0'));
  return Number.isFinite(n) ? n : 0;
};

function submitPathOf(action: string): string {
  if (action === 'IMAGINE' || action === 'DESCRIBE' || action === 'BLEND') return action.toLowerCase();
  return 'change';
}

/** What goes upstream: the recorded request, except that CHANGE names the upstream job. */
function submitBody(task: SubmittedTaskData, channelId: string): Record<string, unknown> {
  const r = task.request;
  if (submitPathOf(task.action) !== 'change') return r;
  if (r.parentChannelId !== channelId)
    throw new UpstreamError(`submit: the task ${str(r.taskId)} was made on channel ${str(r.parentChannelId)}; only it can change it`, true);
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
    const prompts = str(record.prompt);
    if (!prompts) return { state: 'failed', code: 'empty_result', reason: 'the upstream described nothing' };
    return { state: 'succeeded', results: [{ kind: 'text', text: prompts }], usage: { units: 1 }, snapshot };
  }
  const main = str(record.imageUrl);
  const images = Array.isArray(record.images) ? record.images.map(str).filter(Boolean) : [];
  const urls = main && !(images.length === 1 && images[0] === main) ? [main, ...images] : images.length ? images : [main].filter(Boolean);
  if (urls.length === 0) return { state: 'failed', code: 'empty_result', reason: 'the upstream finished without images' };
  const results: UpstreamResult[] = urls.map((url) => ({ kind: 'image', url }));
  return { state: 'succeeded', results, usage: { units: 1 }, snapshot };
}

export const artUpstream: UpstreamAdapter = {
  family: 'art',
  delivery: () => 'url',
  pollIntervalMs: 2000,
  maxAgeSeconds: 30 * 60,

  async submit({ baseUrl, channel, task, signal, idempotencyKey }) {
    const body = submitBody(task, channel.channelId);
    const reply = await upstreamJson('POST', `${baseUrl}/art/submit/${submitPathOf(task.action)}`, { key: channel.key, body, signal, idempotencyKey });
    if (reply.status !== 200) throw failureOf(reply, 'submit');
    const answer = (reply.body ?? {}) as { code?: unknown; result?: unknown };
    const code = typeof answer.code === 'number' ? answer.code : -1;
    if (!ACCEPTED.includes(code)) throw new UpstreamError(`submit: upstream answered code ${code}: ${upstreamMessage(reply.body)}`, RETRYABLE.includes(code));
    if (typeof answer.result !== 'string' || !answer.result) throw new UpstreamError('submit: upstream answered without a job id', true);
    return { upstreamTaskId: answer.result };
  },

  async poll({ baseUrl, channel, upstreamTaskId, task, signal }): Promise<UpstreamStatus> {
    const reply = await upstreamJson('GET', `${baseUrl}/art/task/${encodeURIComponent(upstreamTaskId)}/fetch`, { key: channel.key, signal });
    const body = (reply.body ?? {}) as UpstreamArtRecord & { code?: unknown };
    if (reply.status === 404 || body.code === 4) return { state: 'lost', reason: 'the upstream no longer knows the task' };
    if (reply.status !== 200) throw failureOf(reply, 'poll');
    const snapshot = { status: body.status, progress: body.progress };
    switch (body.status) {
      case 'NOT_START':
      case 'SUBMITTED':
        return { state: 'queued', progress: percent(body.progress), snapshot };
      case 'IN_PROGRESS':
        return { state: 'in_progress', progress: percent(body.progress), snapshot };
      case 'SUCCESS':
        return succeeded(task, body);
      case 'FAILURE':
        return { state: 'failed', code: 'upstream_failed', reason: str(body.failReason) || 'the upstream task failed', snapshot };
      default:
        throw new UpstreamError(`poll: unknown upstream status ${String(body.status)}`, true);
    }
  },
};
