/**
 * The `art` task record (spec 2.7, 3.5), the answer of `GET /art/task/{id}/fetch`. Decisions
 * (docs/decisions/0030-art-submits-fetch-and-request-rules.md): `status` IN_PROGRESS from submit (progress "0%"), SUCCESS ("100%"),
 * FAILURE (progress as reached); times in Unix ms (`assetsExpireAt` in Unix seconds, 0 until
 * there are assets); `imageUrl` = `cdnImage` = the main image (the 2x2 grid, or the upscaled
 * image), `images` the single images; `components` the CHANGE operations a finished grid
 * accepts (`UPSCALE:1` …); DESCRIBE puts its prompts in `prompt`; `quota` the quota held while
 * the task runs (its reservation), then what was charged: the settled amount, "0" on FAILURE.
 * After the asset retention `images`, `imageUrl` and `cdnImage` are emptied. The view keeps
 * asset references where the record has URLs; the instance that answers signs them.
 */
import { resultUrlRef } from '../../domain/asset-ref.js';
import { taskIdOfStream, type EventDataOf, type TaskResultItem } from '../../domain/events.js';
import type { z } from 'zod';
import type { ArtTaskAnswer } from './schema.js';
import { taskView } from '../kit/view.js';

export const ART_FAMILY = 'art';

/** The task record as stored and answered (schema.ts). */
export type ArtTaskRecord = z.infer<typeof ArtTaskAnswer>;

export interface ArtTaskDoc {
  accountId: string;
  /** How long the results are kept (seconds), for the notice once they expired. */
  retentionSeconds?: number;
  body: ArtTaskRecord;
}

export const GRID_COMPONENTS: readonly string[] = [...[1, 2, 3, 4].map((i) => `UPSCALE:${i}`), ...[1, 2, 3, 4].map((i) => `VARIATION:${i}`), 'REROLL'];
const GRID_RESULTS: readonly string[] = ['IMAGINE', 'BLEND', 'VARIATION', 'REROLL'];

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const int = (value: unknown): number => (typeof value === 'number' && Number.isInteger(value) ? value : 0);
const msOf = (iso: string): number => Date.parse(iso) || 0;

function describeCommand(action: string, request: Record<string, unknown>): string {
  switch (action) {
    case 'IMAGINE':
      return `/imagine ${str(request.prompt)}`;
    case 'DESCRIBE':
      return '/describe';
    case 'BLEND':
      return `/blend ${Array.isArray(request.base64Array) ? request.base64Array.length : 0} images ${str(request.dimensions)}`;
    case 'REROLL':
      return `/reroll ${str(request.taskId)}`;
    default:
      return `/${action.toLowerCase()} ${action.charAt(0)}${int(request.index)} of ${str(request.taskId)}`;
  }
}

/** "2 hours", "90 minutes", "45 seconds". */
export function retentionText(seconds: number): string {
  const unit = (n: number, name: string) => `${n} ${name}${n === 1 ? '' : 's'}`;
  if (seconds % 3600 === 0) return unit(seconds / 3600, 'hour');
  if (seconds % 60 === 0) return unit(seconds / 60, 'minute');
  return unit(seconds, 'second');
}

function retentionNotice(retentionSeconds: number, expireAt: number): string {
  return `Result images are kept for ${retentionText(retentionSeconds)} after the task finished (until ${new Date(expireAt * 1000).toISOString()}), then deleted; images is empty after that.`;
}

function expiredNotice(retentionSeconds: number): string {
  return `The result images were deleted after the ${retentionText(retentionSeconds)} retention; images is empty.`;
}

/** The record right after submit. */
function submittedArtRecord(data: EventDataOf<'TaskSubmitted'>, submittedAtMs: number): ArtTaskRecord {
  return {
    id: data.taskId,
    action: data.action,
    prompt: str(data.request.prompt),
    description: describeCommand(data.action, data.request),
    state: str(data.request.state),
    status: 'IN_PROGRESS',
    progress: '0%',
    failReason: '',
    imageUrl: '',
    cdnImage: '',
    images: [],
    components: [],
    width: 0,
    height: 0,
    seed: 0,
    quota: String(data.reserved),
    assetsExpireAt: 0,
    assetRetentionNotice: '',
    submitTime: submittedAtMs,
    startTime: 0,
    finishTime: 0,
  };
}

/**
 * The retention the engine applied: expiry is fixed just before the results are re-hosted and
 * completion just after, so the difference can fall short by the seconds re-hosting took;
 * from a minute up it is rounded up to whole minutes (7199 s reads "2 hours").
 */
export function retentionOf(e: Pick<EventDataOf<'TaskSucceeded'>, 'assetsExpireAt' | 'completedAt'>): number {
  const seconds = e.assetsExpireAt > 0 ? Math.max(0, e.assetsExpireAt - e.completedAt) : 0;
  return seconds >= 60 ? Math.ceil(seconds / 60) * 60 : seconds;
}

function succeeded(record: ArtTaskRecord, e: EventDataOf<'TaskSucceeded'>, atMs: number): ArtTaskRecord {
  const urls = e.results.flatMap((r: TaskResultItem) => {
    const url = r.kind === 'image' ? resultUrlRef(r, e.assetsExpireAt) : undefined;
    return url ? [url] : [];
  });
  const text = e.results.find((r) => r.kind === 'text')?.text;
  const main = urls[0] ?? '';
  const up = e.upstream ?? {};
  const retention = retentionOf(e);
  return {
    ...record,
    status: 'SUCCESS',
    progress: '100%',
    finishTime: atMs,
    ...(text !== undefined ? { prompt: text } : {}),
    imageUrl: main,
    cdnImage: main,
    images: urls.length > 1 ? urls.slice(1) : urls,
    components: GRID_RESULTS.includes(record.action) && urls.length > 0 ? [...GRID_COMPONENTS] : [],
    width: int(up.width),
    height: int(up.height),
    seed: int(up.seed),
    assetsExpireAt: e.assetsExpireAt,
    assetRetentionNotice: e.assetsExpireAt > 0 ? retentionNotice(retention, e.assetsExpireAt) : '',
  };
}

function expired(record: ArtTaskRecord, retentionSeconds: number): ArtTaskRecord {
  return { ...record, imageUrl: '', cdnImage: '', images: [], assetRetentionNotice: expiredNotice(retentionSeconds) };
}

export const artTaskProjection = taskView<ArtTaskDoc>({
  name: 'art-tasks',
  family: ART_FAMILY,
  handles: ['TaskSubmitted', 'UpstreamSubmitted', 'TaskProgressed', 'TaskSucceeded', 'TaskFailed', 'AssetsExpired', 'QuotaSettled', 'QuotaReleased'],
  // The settlement lives on the account stream; it names its task.
  documentId: (e) => (e.type === 'QuotaSettled' || e.type === 'QuotaReleased' ? e.data.taskId : taskIdOfStream(e.streamName)),
  submitted: (e) => ({ accountId: e.data.accountId, body: submittedArtRecord(e.data, msOf(e.metadata.at)) }),
  evolve(doc, e) {
    const record = doc.body;
    const update = (body: ArtTaskRecord): ArtTaskDoc => ({ ...doc, body });
    if (e.type === 'QuotaSettled') return update({ ...record, quota: String(e.data.charged) });
    if (e.type === 'QuotaReleased') return update({ ...record, quota: '0' });
    if (e.type === 'AssetsExpired') return update(expired(record, doc.retentionSeconds ?? 0));
    if (record.status !== 'IN_PROGRESS') return undefined;
    switch (e.type) {
      case 'UpstreamSubmitted':
        return record.startTime ? undefined : update({ ...record, startTime: msOf(e.metadata.at) });
      case 'TaskProgressed':
        return update({ ...record, progress: `${e.data.progress}%` });
      case 'TaskSucceeded':
        return { ...update(succeeded(record, e.data, msOf(e.metadata.at))), retentionSeconds: retentionOf(e.data) };
      case 'TaskFailed':
        // Nothing is charged for a failure (the release follows).
        return update({ ...record, status: 'FAILURE', quota: '0', finishTime: msOf(e.metadata.at), failReason: `${e.data.code}: ${e.data.reason}` });
      default:
        return undefined;
    }
  },
});
