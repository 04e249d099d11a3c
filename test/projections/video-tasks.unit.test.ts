import { describe, expect, it } from 'vitest';
import type { DomainEvent, EventDataOf, PriceBasis } from '../../src/domain/events.js';
import { clipTaskProjection } from '../../src/families/clip/view.js';
import { motionTaskProjection } from '../../src/families/motion/view.js';
import { vidH3VideoProjection } from '../../src/families/vid-h3/view.js';
import { vidgenTaskProjection } from '../../src/families/vidgen/view.js';
import { assetRef } from '../../src/domain/asset-ref.js';
import { given } from './support.js';

const T = 'task-t1';
/** `given` stamps event i at 2026-01-01T00:00:0i Z. */
const AT0 = Date.parse('2026-01-01T00:00:00Z') / 1000;
const basis = (tier: string, units: number): PriceBasis => ({
  model: 'm',
  group: 'default',
  unit: 'second',
  unitPrice: 10,
  groupRatioPermille: 1000,
  units,
  tier,
});

function submitted(family: string, model: string, tier: string, units: number, action = 'text2video'): Given {
  const data: EventDataOf<'TaskSubmitted'> = {
    taskId: 't1',
    family,
    action,
    model,
    accountId: 'a1',
    tokenId: 'k1',
    group: 'default',
    channelCandidates: ['c1'],
    request: {},
    reservationId: 'r1',
    reserved: 100,
    basis: basis(tier, units),
    createdAt: AT0,
  };
  return [T, { type: 'TaskSubmitted', data }];
}
type Given = readonly [string, DomainEvent];
const on = (event: DomainEvent): Given => [T, event];
const dispatched = on({ type: 'UpstreamSubmitted', data: { channelId: 'c1', upstreamTaskId: 'u1', attempt: 1 } });
const queued = on({ type: 'TaskProgressed', data: { status: 'queued', progress: 0, upstream: { status: 'queued' } } });
const running = on({ type: 'TaskProgressed', data: { status: 'in_progress', progress: 50, upstream: { status: 'running' } } });
const succeeded = (units: number, tier: string): Given =>
  on({
    type: 'TaskSucceeded',
    data: {
      results: [{ kind: 'video', assetKey: 'tasks/t1/0.mp4', delivery: 'url', contentType: 'video/mp4', durationSeconds: units }],
      usage: { units, tier },
      upstream: { status: 'succeeded', duration: units, resolution: tier },
      assetsExpireAt: AT0 + 7200,
      completedAt: AT0 + 5,
    },
  });
/** The views keep an asset reference; the instance that answers signs it. */
const VIDEO_REF = assetRef('tasks/t1/0.mp4', AT0 + 7200);
const failed = on({ type: 'TaskFailed', data: { code: 'upstream_failed', reason: 'boom', completedAt: AT0 + 4 } });
const expired = on({ type: 'AssetsExpired', data: { assetKeys: ['tasks/t1/0.mp4'] } });

describe('vidgen envelope: given events, then document', () => {
  it('submitted: NOT_START, data.id the position of TaskSubmitted, the reservation in properties', () => {
    const doc = given(vidgenTaskProjection, [
      on({ type: 'AccountOpened', data: { accountId: 'x', userId: 'u', group: 'g' } }),
      submitted('vidgen', 'v-1', '1080p', 5),
    ]).get('t1');
    expect(doc).toEqual({
      accountId: 'a1',
      body: {
        code: 'success',
        message: '',
        data: {
          id: 2,
          task_id: 't1',
          platform: 'vidgen',
          status: 'NOT_START',
          progress: '0%',
          fail_reason: '',
          result_url: '',
          created_at: AT0,
          updated_at: AT0,
          submit_time: AT0,
          start_time: 0,
          finish_time: 0,
          properties: { origin_model_name: 'v-1', resolution: '1080p', seconds: 5, reserved_resolution: '1080p', reserved_seconds: 5 },
          data: {},
        },
      },
    });
  });

  it('running then succeeded: IN_PROGRESS with start_time, then SUCCESS with the result URL and the upstream result', () => {
    const events = [submitted('vidgen', 'v-1', '1080p', 5), dispatched, queued, running, succeeded(6, '720p')];
    const mid = given(vidgenTaskProjection, events.slice(0, 4)).get('t1')!.body.data;
    expect(mid).toMatchObject({ status: 'IN_PROGRESS', progress: '50%', start_time: AT0 + 3, updated_at: AT0 + 3, data: { status: 'running' } });
    const done = given(vidgenTaskProjection, events).get('t1')!.body.data;
    expect(done).toMatchObject({
      status: 'SUCCESS',
      progress: '100%',
      start_time: AT0 + 3,
      finish_time: AT0 + 5,
      result_url: VIDEO_REF,
      data: { status: 'succeeded', duration: 6, resolution: '720p' },
    });
  });

  it('failed: FAILURE with fail_reason; late progress is ignored; expiry empties result_url', () => {
    expect(given(vidgenTaskProjection, [submitted('vidgen', 'v', '720p', 5), failed, running]).get('t1')!.body.data).toMatchObject({
      status: 'FAILURE',
      fail_reason: 'upstream_failed: boom',
      finish_time: AT0 + 4,
    });
    expect(given(vidgenTaskProjection, [submitted('vidgen', 'v', '720p', 5), succeeded(5, '720p'), expired]).get('t1')!.body.data.result_url).toBe('');
  });

  it('tasks of other families make no document', () => {
    expect(given(vidgenTaskProjection, [submitted('clip', 'clip-v1', 'std', 5), running]).size).toBe(0);
  });
});

describe('Vid-H3 video object: given events, then document', () => {
  it('queued → in_progress → completed with the delivered seconds and size and the asset key', () => {
    const events = [submitted('vid-h3', 'Vid-H3', '2K', 8), running, succeeded(10, '768P')];
    expect(given(vidH3VideoProjection, events.slice(0, 1)).get('t1')).toEqual({
      accountId: 'a1',
      body: {
        id: 't1',
        object: 'video',
        model: 'Vid-H3',
        status: 'queued',
        progress: 0,
        created_at: AT0,
        completed_at: 0,
        expires_at: null,
        seconds: '8',
        size: '2K',
        error: null,
      },
    });
    expect(given(vidH3VideoProjection, events.slice(0, 2)).get('t1')!.body).toMatchObject({ status: 'in_progress', progress: 50 });
    expect(given(vidH3VideoProjection, events).get('t1')).toMatchObject({
      assetKey: 'tasks/t1/0.mp4',
      body: { status: 'completed', progress: 100, completed_at: AT0 + 5, expires_at: AT0 + 7200, seconds: '10', size: '768P', error: null },
    });
  });

  it('failed carries an error object; expiry marks the document', () => {
    expect(given(vidH3VideoProjection, [submitted('vid-h3', 'Vid-H3', '768P', 5), failed]).get('t1')!.body).toMatchObject({
      status: 'failed',
      completed_at: AT0 + 4,
      error: { code: 'upstream_failed', message: 'boom' },
    });
    expect(given(vidH3VideoProjection, [submitted('vid-h3', 'Vid-H3', '768P', 5), succeeded(5, '768P'), expired]).get('t1')!.expired).toBe(true);
  });
});

describe('clip task: given events, then document', () => {
  it('submitted → processing → succeed with videos and the seconds billed, times in ms', () => {
    const events = [submitted('clip', 'clip-v1', 'std', 5, 'image2video'), running, succeeded(3, 'std')];
    expect(given(clipTaskProjection, events.slice(0, 1)).get('t1')).toEqual({
      accountId: 'a1',
      action: 'image2video',
      basis: expect.objectContaining({ unit: 'second', units: 5, tier: 'std' }),
      body: {
        code: 0,
        message: 'SUCCEED',
        request_id: '',
        data: {
          task_id: 't1',
          task_status: 'submitted',
          task_status_msg: '',
          created_at: AT0 * 1000,
          updated_at: AT0 * 1000,
          task_result: { videos: [] },
          final_unit_deduction: 0,
        },
      },
    });
    expect(given(clipTaskProjection, events.slice(0, 2)).get('t1')!.body.data).toMatchObject({ task_status: 'processing', updated_at: (AT0 + 1) * 1000 });
    expect(given(clipTaskProjection, events).get('t1')!.body.data).toMatchObject({
      task_status: 'succeed',
      task_result: { videos: [{ id: 't1-0', url: VIDEO_REF, duration: 3 }] },
      final_unit_deduction: 3,
    });
  });

  it('failed has task_status_msg; expiry empties the videos', () => {
    expect(given(clipTaskProjection, [submitted('clip', 'clip-v1', 'std', 5), failed]).get('t1')!.body.data).toMatchObject({
      task_status: 'failed',
      task_status_msg: 'upstream_failed: boom',
    });
    expect(given(clipTaskProjection, [submitted('clip', 'clip-v1', 'std', 5), succeeded(5, 'std'), expired]).get('t1')!.body.data.task_result.videos).toEqual(
      [],
    );
  });
});

describe('motion task: given events, then document', () => {
  it('PENDING → RUNNING → SUCCEEDED with video_url and usage', () => {
    const events = [submitted('motion', 'motion3.0-video', '1080P', 5), queued, running, succeeded(7, '720P')];
    expect(given(motionTaskProjection, events.slice(0, 2)).get('t1')).toEqual({
      accountId: 'a1',
      body: { request_id: '', output: { task_id: 't1', task_status: 'PENDING', submit_time: '2026-01-01 00:00:00.000' } },
    });
    expect(given(motionTaskProjection, events.slice(0, 3)).get('t1')!.body.output).toMatchObject({
      task_status: 'RUNNING',
      scheduled_time: '2026-01-01 00:00:02.000',
    });
    expect(given(motionTaskProjection, events).get('t1')!.body).toEqual({
      request_id: '',
      output: {
        task_id: 't1',
        task_status: 'SUCCEEDED',
        submit_time: '2026-01-01 00:00:00.000',
        scheduled_time: '2026-01-01 00:00:02.000',
        end_time: '2026-01-01 00:00:03.000',
        video_url: VIDEO_REF,
      },
      usage: { video_duration: 7, video_count: 1, SR: 720 },
    });
  });

  it('FAILED with code and message; expiry removes video_url', () => {
    expect(given(motionTaskProjection, [submitted('motion', 'm', '720P', 5), failed]).get('t1')!.body.output).toMatchObject({
      task_status: 'FAILED',
      code: 'upstream_failed',
      message: 'boom',
    });
    expect(given(motionTaskProjection, [submitted('motion', 'm', '720P', 5), succeeded(5, '720P'), expired]).get('t1')!.body.output.video_url).toBeUndefined();
  });
});
