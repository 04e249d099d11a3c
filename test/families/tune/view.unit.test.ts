import { describe, expect, it } from 'vitest';
import type { DomainEvent, EventDataOf, PriceBasis } from '../../../src/domain/events.js';
import { tuneTaskProjection } from '../../../src/families/tune/view.js';
import { assetRef } from '../../../src/domain/asset-ref.js';
import { given } from '../../projections/support.js';

const basis: PriceBasis = { model: 'tune_music', group: 'default', unit: 'request', unitPrice: 50_000, groupRatioPermille: 1000, units: 1 };
const S = 'task-t1';

function submitted(action: 'LYRICS' | 'MUSIC', family = 'tune'): readonly [string, DomainEvent] {
  const data: EventDataOf<'TaskSubmitted'> = {
    taskId: 't1',
    family,
    action,
    model: action === 'LYRICS' ? 'tune_lyrics' : 'tune_music',
    accountId: 'a1',
    tokenId: 'k1',
    group: 'default',
    channelCandidates: ['sim-tune'],
    request: { prompt: 'x' },
    reservationId: 'res_t1',
    reserved: 50_000,
    basis,
    createdAt: 1_700_000_000,
  };
  return [S, { type: 'TaskSubmitted', data }];
}
const dispatched: readonly [string, DomainEvent] = [S, { type: 'UpstreamSubmitted', data: { channelId: 'sim-tune', upstreamTaskId: 'u1', attempt: 1 } }];
const progressed = (status: 'queued' | 'in_progress', progress: number): readonly [string, DomainEvent] => [
  S,
  { type: 'TaskProgressed', data: { status, progress } },
];
const songs = {
  results: [
    { kind: 'audio' as const, assetKey: 'tasks/t1/0.wav', delivery: 'url' as const, contentType: 'audio/wav', durationSeconds: 3 },
    { kind: 'audio' as const, assetKey: 'tasks/t1/1.wav', delivery: 'url' as const, contentType: 'audio/wav' },
  ],
  usage: { units: 1 },
  upstream: {
    status: 'SUCCESS',
    songs: [
      { id: 'c0', title: 'Moon', tags: 'folk', lyrics: 'la', mv: 'tune-v4', duration: 3 },
      { id: 'c1', title: 'Moon', tags: 'folk', lyrics: 'la', mv: 'tune-v4', duration: 'bad' },
    ],
  },
  assetsExpireAt: 1_700_007_300,
  completedAt: 1_700_000_100,
};

/** The view keeps asset references; the instance that answers signs them. */
const ref = (i: number) => assetRef(`tasks/t1/${i}.wav`, 1_700_007_300);

const record = (events: readonly (readonly [string, DomainEvent])[]) => given(tuneTaskProjection, events).get('t1');

describe('tune task view: given events, then document', () => {
  it('right after submit: NOT_START, the envelope, zeros for what is not known', () => {
    expect(record([submitted('MUSIC')])).toEqual({
      accountId: 'a1',
      body: {
        code: 'success',
        message: '',
        data: {
          task_id: 't1',
          action: 'MUSIC',
          status: 'NOT_START',
          progress: '0%',
          submit_time: 1_700_000_000,
          start_time: 0,
          finish_time: 0,
          fail_reason: '',
          result_url: '',
          data: null,
        },
      },
    });
  });

  it('other families are not this view', () => {
    expect(record([submitted('MUSIC', 'image')])).toBeUndefined();
  });

  it('SUBMITTED once upstream (start_time from the event), then QUEUED and IN_PROGRESS with progress', () => {
    const start = Math.floor(Date.parse('2026-01-01T00:00:01Z') / 1000);
    expect(record([submitted('MUSIC'), dispatched])!.body.data).toMatchObject({ status: 'SUBMITTED', start_time: start });
    expect(record([submitted('MUSIC'), dispatched, progressed('queued', 0)])!.body.data).toMatchObject({ status: 'QUEUED', progress: '0%' });
    expect(record([submitted('MUSIC'), dispatched, progressed('in_progress', 50)])!.body.data).toMatchObject({
      status: 'IN_PROGRESS',
      progress: '50%',
      start_time: start,
    });
  });

  it('music SUCCESS: songs in result order with their audio URLs, result_url the first', () => {
    const doc = record([submitted('MUSIC'), dispatched, progressed('in_progress', 75), [S, { type: 'TaskSucceeded', data: songs }]]);
    expect(doc!.body.data).toMatchObject({ status: 'SUCCESS', progress: '100%', finish_time: 1_700_000_100, result_url: ref(0) });
    expect(doc!.body.data.data).toEqual([
      { id: 'c0', title: 'Moon', tags: 'folk', lyrics: 'la', mv: 'tune-v4', duration: 3, audio_url: ref(0) },
      { id: 'c1', title: 'Moon', tags: 'folk', lyrics: 'la', mv: 'tune-v4', duration: 0, audio_url: ref(1) },
    ]);
  });

  it('lyrics SUCCESS: data is the text, no result_url', () => {
    const done: EventDataOf<'TaskSucceeded'> = {
      results: [{ kind: 'text', text: '[Verse]\nla' }],
      usage: { units: 1 },
      assetsExpireAt: 0,
      completedAt: 1_700_000_050,
    };
    expect(record([submitted('LYRICS'), dispatched, [S, { type: 'TaskSucceeded', data: done }]])!.body.data).toMatchObject({
      status: 'SUCCESS',
      data: '[Verse]\nla',
      result_url: '',
    });
  });

  it('FAILURE keeps the progress reached and explains why; later events change nothing', () => {
    const failed: readonly [string, DomainEvent] = [S, { type: 'TaskFailed', data: { code: 'upstream_failed', reason: 'boom', completedAt: 1_700_000_090 } }];
    const doc = record([submitted('MUSIC'), dispatched, progressed('in_progress', 25), failed, progressed('in_progress', 75)]);
    expect(doc!.body.data).toMatchObject({ status: 'FAILURE', progress: '25%', finish_time: 1_700_000_090, fail_reason: 'upstream_failed: boom', data: null });
  });

  it('AssetsExpired empties the audio URLs and keeps the song details', () => {
    const doc = record([
      submitted('MUSIC'),
      dispatched,
      [S, { type: 'TaskSucceeded', data: songs }],
      [S, { type: 'AssetsExpired', data: { assetKeys: ['tasks/t1/0.wav'] } }],
    ]);
    expect(doc!.body.data.status).toBe('SUCCESS');
    expect(doc!.body.data.result_url).toBe('');
    expect(doc!.body.data.data).toEqual([expect.objectContaining({ title: 'Moon', audio_url: '' }), expect.objectContaining({ audio_url: '' })]);
  });
});
