/**
 * The `tune` task view (spec 2.6, 3.4, 4.11): the document's `body` is the answer of
 * `GET /tune/fetch/{task_id}`, `{code: "success", message: "", data: <record>}`. The record
 * (docs/decisions/0029-tune-answers-and-request-rules.md): `task_id`, `action` (`LYRICS`/`MUSIC`), `status`, `progress`,
 * `submit_time`, `start_time`, `finish_time` (Unix seconds, 0 until known), `fail_reason`,
 * `result_url` (first song's audio, "" otherwise) and `data` (songs, or the lyrics text).
 *
 * States: NOT_START (accepted, not yet upstream) → SUBMITTED (accepted upstream) → QUEUED →
 * IN_PROGRESS → SUCCESS | FAILURE. Audio is kept for the asset retention, after which the
 * audio URLs are emptied.
 */
import { z } from 'zod';
import { resultUrlRef } from '../../domain/asset-ref.js';
import type { EventDataOf, TaskResultItem } from '../../domain/events.js';
import type { TaskAnswer } from './schema.js';
import { taskView } from '../kit/view.js';

export const TUNE_FAMILY = 'tune';

/** The answer of `GET /tune/fetch/{task_id}` as stored (schema.ts); song `audio_url`s are asset references. */
export type TuneTaskBody = z.infer<typeof TaskAnswer>;
export type TuneTaskRecord = TuneTaskBody['data'];
export type TuneStatus = TuneTaskRecord['status'];
export type TuneSong = Extract<TuneTaskRecord['data'], unknown[]>[number];

export interface TuneTaskDoc {
  accountId: string;
  body: TuneTaskBody;
}

/** What the upstream adapter keeps of each song (TaskSucceeded.upstream.songs, in result order). */
export const TuneSongDetails = z.object({
  id: z.string().catch(''),
  title: z.string().catch(''),
  tags: z.string().catch(''),
  lyrics: z.string().catch(''),
  mv: z.string().catch(''),
  duration: z.number().catch(0),
});
const SongSnapshot = z.object({ songs: z.array(z.unknown()).catch([]) });

const secondsOf = (iso: string): number => Math.floor(Date.parse(iso) / 1000) || 0;

/** The body right after submit; the submit answer carries only the task id. */
export function submittedTuneBody(data: EventDataOf<'TaskSubmitted'>): TuneTaskBody {
  return {
    code: 'success',
    message: '',
    data: {
      task_id: data.taskId,
      action: data.action,
      status: 'NOT_START',
      progress: '0%',
      submit_time: data.createdAt,
      start_time: 0,
      finish_time: 0,
      fail_reason: '',
      result_url: '',
      data: null,
    },
  };
}

function songsOf(results: readonly TaskResultItem[], upstream: Record<string, unknown> | undefined, assetsExpireAt: number): TuneSong[] {
  const details = SongSnapshot.parse(upstream ?? {}).songs;
  return results
    .filter((r) => r.kind === 'audio')
    .map((r, i) => {
      const d = TuneSongDetails.safeParse(details[i] ?? {});
      const song = d.success ? d.data : { id: '', title: '', tags: '', lyrics: '', mv: '', duration: 0 };
      return { ...song, duration: song.duration || r.durationSeconds || 0, audio_url: resultUrlRef(r, assetsExpireAt) ?? '' };
    });
}

function succeeded(record: TuneTaskRecord, e: EventDataOf<'TaskSucceeded'>): TuneTaskRecord {
  const done = { ...record, status: 'SUCCESS' as const, progress: '100%', finish_time: e.completedAt };
  if (record.action === 'LYRICS') {
    return { ...done, data: e.results.find((r) => r.kind === 'text')?.text ?? '' };
  }
  const songs = songsOf(e.results, e.upstream, e.assetsExpireAt);
  return { ...done, data: songs, result_url: songs[0]?.audio_url ?? '' };
}

function expired(record: TuneTaskRecord): TuneTaskRecord {
  const data = Array.isArray(record.data) ? record.data.map((s) => ({ ...s, audio_url: '' })) : record.data;
  return { ...record, result_url: '', data };
}

const FINAL: readonly TuneStatus[] = ['SUCCESS', 'FAILURE'];

export const tuneTaskProjection = taskView<TuneTaskDoc>({
  name: 'tune-tasks',
  family: TUNE_FAMILY,
  handles: ['TaskSubmitted', 'UpstreamSubmitted', 'TaskProgressed', 'TaskSucceeded', 'TaskFailed', 'AssetsExpired'],
  submitted: (e) => ({ accountId: e.data.accountId, body: submittedTuneBody(e.data) }),
  evolve(doc, e) {
    const record = doc.body.data;
    const update = (next: TuneTaskRecord): TuneTaskDoc => ({ ...doc, body: { ...doc.body, data: next } });
    if (e.type === 'AssetsExpired') return update(expired(record));
    if (FINAL.includes(record.status)) return undefined;
    switch (e.type) {
      case 'UpstreamSubmitted':
        return update({
          ...record,
          status: record.status === 'NOT_START' ? 'SUBMITTED' : record.status,
          start_time: record.start_time || secondsOf(e.metadata.at),
        });
      case 'TaskProgressed':
        return update({ ...record, status: e.data.status === 'in_progress' ? 'IN_PROGRESS' : 'QUEUED', progress: `${e.data.progress}%` });
      case 'TaskSucceeded':
        return update(succeeded(record, e.data));
      case 'TaskFailed':
        return update({ ...record, status: 'FAILURE', finish_time: e.data.completedAt, fail_reason: `${e.data.code}: ${e.data.reason}` });
      default:
        return undefined;
    }
  },
});
