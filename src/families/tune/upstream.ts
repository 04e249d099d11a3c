/**
 * The `tune` upstream protocol: the spec's own 4.11 interface (a gateway may front another
 * gateway of this kind; the built-in simulator speaks it too). Submit answers
 * `{code: "success", data: <id>}`; `GET /tune/fetch/{id}` answers `{code, message, data: record}`.
 * A channel that maps `tune_music` to a version sends that version as `mv`.
 */
import { upstreamMessage } from '../../engine/channels/upstream-http.js';
import { UpstreamError, type SubmittedTaskData, type UpstreamAdapter, type UpstreamResult, type UpstreamStatus } from '../../engine/channels/upstream.js';
import { getStatus, postSubmit, recordStatus, submittedAs, taskNotExist, text } from '../kit/upstream.js';

interface UpstreamRecord {
  status?: unknown;
  progress?: unknown;
  fail_reason?: unknown;
  result_url?: unknown;
  data?: unknown;
}

const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

function recordOf(body: unknown): UpstreamRecord {
  if (!body || typeof body !== 'object') return {};
  const data = (body as { data?: unknown }).data;
  return data && typeof data === 'object' && !Array.isArray(data) ? data : {};
}

/** Audio results, in order, with the song details kept for the view (URLs left out). */
function musicOutcome(record: UpstreamRecord): UpstreamStatus {
  const songs = Array.isArray(record.data) ? record.data.filter((s): s is Record<string, unknown> => !!s && typeof s === 'object') : [];
  const withAudio = songs.filter((s) => text(s.audio_url) !== '');
  if (withAudio.length === 0 && text(record.result_url)) withAudio.push({ audio_url: record.result_url });
  if (withAudio.length === 0) return { state: 'failed', code: 'empty_result', reason: 'the upstream finished without audio' };
  const results: UpstreamResult[] = withAudio.map((s) => ({
    kind: 'audio',
    url: text(s.audio_url),
    ...(num(s.duration) ? { durationSeconds: num(s.duration) } : {}),
  }));
  const details = withAudio.map((s) => ({
    id: text(s.id),
    title: text(s.title),
    tags: text(s.tags),
    lyrics: text(s.lyrics),
    mv: text(s.mv),
    duration: num(s.duration),
  }));
  return { state: 'succeeded', results, usage: { units: 1 }, snapshot: { status: 'SUCCESS', songs: details } };
}

function lyricsOutcome(record: UpstreamRecord): UpstreamStatus {
  const data = record.data;
  const lyrics = typeof data === 'string' ? data : data && typeof data === 'object' ? text((data as { text?: unknown }).text) : '';
  if (!lyrics) return { state: 'failed', code: 'empty_result', reason: 'the upstream finished without lyrics' };
  return { state: 'succeeded', results: [{ kind: 'text', text: lyrics }], usage: { units: 1 }, snapshot: { status: 'SUCCESS' } };
}

/** What a poll answered. */
function statusOf(body: unknown, task: SubmittedTaskData): UpstreamStatus {
  const record = recordOf(body);
  const succeeded = () => (task.action === 'LYRICS' ? lyricsOutcome(record) : musicOutcome(record));
  return recordStatus({ status: record.status, progress: record.progress, failReason: record.fail_reason }, ['NOT_START', 'SUBMITTED', 'QUEUED'], succeeded);
}

export const tuneUpstream: UpstreamAdapter = {
  family: 'tune',
  delivery: () => 'url',
  pollIntervalMs: 2000,
  maxAgeSeconds: 30 * 60,

  async submit(ctx) {
    const { upstreamModel, task } = ctx;
    const request = task.action === 'MUSIC' && upstreamModel !== task.model ? { ...task.request, mv: upstreamModel } : task.request;
    const body = await postSubmit(ctx, `${ctx.baseUrl}/tune/submit/${task.action}`, request);
    const answer = (body ?? {}) as { code?: unknown; data?: unknown };
    if (answer.code !== 'success') throw new UpstreamError(`submit: upstream refused: ${upstreamMessage(body)}`, false);
    return submittedAs(answer.data);
  },

  async poll(ctx) {
    return getStatus(ctx, `${ctx.baseUrl}/tune/fetch/${encodeURIComponent(ctx.upstreamTaskId)}`, (body) => statusOf(body, ctx.task), { lost: taskNotExist });
  },
};
