import { describe, expect, it } from 'vitest';
import { accountTasksProjection, SUMMARY_TEXT_LIMIT } from '../../projections/account-tasks.js';
import { assetRef } from '../../src/domain/asset-ref.js';
import type { DomainEvent, EventDataOf, PriceBasis } from '../../src/domain/events.js';
import { given } from './support.js';

const basis: PriceBasis = { model: 'anime-diffusion-4-5-full', group: 'default', unit: 'image', unitPrice: 10_000, groupRatioPermille: 1000, units: 2 };
const S = 'task-t1';
const A = 'account-a1';

function submitted(request: Record<string, unknown> = { prompt: 'a fox' }, extra: Partial<EventDataOf<'TaskSubmitted'>> = {}): readonly [string, DomainEvent] {
  const data: EventDataOf<'TaskSubmitted'> = {
    taskId: 't1',
    family: 'image',
    action: 'anime/generate',
    model: 'anime-diffusion-4-5-full',
    accountId: 'a1',
    tokenId: 'k1',
    group: 'default',
    channelCandidates: ['sim-images'],
    request,
    reservationId: 'res_t1',
    reserved: 20_000,
    basis,
    createdAt: 1_700_000_000,
    ...extra,
  };
  return [S, { type: 'TaskSubmitted', data }];
}
const progressed = (status: 'queued' | 'in_progress', progress: number): readonly [string, DomainEvent] => [
  S,
  { type: 'TaskProgressed', data: { status, progress } },
];
const succeeded: readonly [string, DomainEvent] = [
  S,
  {
    type: 'TaskSucceeded',
    data: {
      results: [
        { kind: 'image', assetKey: 'tasks/t1/0.png', delivery: 'url', contentType: 'image/png' },
        { kind: 'image', assetKey: 'tasks/t1/1.png', delivery: 'b64', contentType: 'image/png' },
        { kind: 'text', text: 'a poem' },
      ],
      usage: { units: 2 },
      assetsExpireAt: 1_700_007_200,
      completedAt: 1_700_000_010,
    },
  },
];
const settled = (charged: number): readonly [string, DomainEvent] => [
  A,
  { type: 'QuotaSettled', data: { reservationId: 'res_t1', taskId: 't1', reserved: 20_000, actual: charged, charged } },
];
const released: readonly [string, DomainEvent] = [
  A,
  { type: 'QuotaReleased', data: { reservationId: 'res_t1', taskId: 't1', amount: 20_000, reason: 'failed' } },
];

describe('account-tasks view', () => {
  it('follows a task from submit to settlement; only URL results get a reference', () => {
    const doc = given(accountTasksProjection, [submitted(), progressed('in_progress', 50), succeeded, settled(20_000)]).get('t1');
    expect(doc).toMatchObject({
      accountId: 'a1',
      family: 'image',
      prompt: 'a fox',
      status: 'completed',
      progress: 100,
      createdAt: 1_700_000_000,
      completedAt: 1_700_000_010,
      seq: 1,
      reserved: 20_000,
      charged: 20_000,
      error: null,
      assetsExpireAt: 1_700_007_200,
    });
    expect(doc!.results).toEqual([
      { kind: 'image', url: assetRef('tasks/t1/0.png', 1_700_007_200), contentType: 'image/png', text: null },
      { kind: 'image', url: null, contentType: 'image/png', text: null },
      { kind: 'text', url: null, contentType: null, text: 'a poem' },
    ]);
  });

  it('a failure is charged nothing once released; a late progress does not move a final task back', () => {
    const failed: readonly [string, DomainEvent] = [S, { type: 'TaskFailed', data: { code: 'upstream_failed', reason: 'boom', completedAt: 1_700_000_005 } }];
    const doc = given(accountTasksProjection, [submitted(), failed, progressed('in_progress', 75), released]).get('t1');
    expect(doc).toMatchObject({ status: 'failed', progress: 0, charged: 0, error: { code: 'upstream_failed', reason: 'boom' }, completedAt: 1_700_000_005 });
  });

  it('expired files lose their URLs; a release after a settlement changes nothing', () => {
    const expired: readonly [string, DomainEvent] = [S, { type: 'AssetsExpired', data: { assetKeys: ['tasks/t1/0.png'] } }];
    const doc = given(accountTasksProjection, [submitted(), succeeded, settled(15_000), released, expired]).get('t1');
    expect(doc!.charged).toBe(15_000);
    expect(doc!.results.map((r) => r.url)).toEqual([null, null, null]);
    expect(doc!.results[2]!.text).toBe('a poem');
  });

  it('reads the prompt where each family keeps it, cut to the limit; settlements of unknown tasks are ignored', () => {
    const prompt = (request: Record<string, unknown>) => given(accountTasksProjection, [submitted(request)]).get('t1')!.prompt;
    expect(prompt({ ai_description_prompt: 'a calm song', custom_mode: false })).toBe('a calm song');
    expect(prompt({ model: 'm', input: { prompt: 'a dancer' } })).toBe('a dancer');
    expect(prompt({ image: 'x' })).toBeNull();
    expect(prompt({ prompt: 'x'.repeat(SUMMARY_TEXT_LIMIT + 10) })).toBe(`${'x'.repeat(SUMMARY_TEXT_LIMIT)}…`);
    expect(given(accountTasksProjection, [settled(1), released]).size).toBe(0);
    expect(given(accountTasksProjection, [submitted({ prompt: 'p' }, { sync: true, callbackUrl: 'https://example.com/hook' })]).get('t1')).toMatchObject({
      sync: true,
      callbackUrl: 'https://example.com/hook',
    });
  });
});
