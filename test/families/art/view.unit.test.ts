import { describe, expect, it } from 'vitest';
import type { DomainEvent, EventDataOf, PriceBasis } from '../../../src/domain/events.js';
import { artTaskProjection, GRID_COMPONENTS, retentionOf, retentionText } from '../../../src/families/art/view.js';
import { assetRef } from '../../../src/domain/asset-ref.js';
import { given } from '../../projections/support.js';

const basis: PriceBasis = { model: 'art_imagine', group: 'default', unit: 'request', unitPrice: 25_000, groupRatioPermille: 1000, units: 1 };
const S = 'task-j1';
/** `given` stamps event i at 2026-01-01T00:00:0i Z. */
const at = (i: number) => Date.parse(`2026-01-01T00:00:0${i}Z`);

function submitted(action: string, request: Record<string, unknown>, family = 'art'): readonly [string, DomainEvent] {
  const data: EventDataOf<'TaskSubmitted'> = {
    taskId: 'j1',
    family,
    action,
    model: 'art_imagine',
    accountId: 'a1',
    tokenId: 'k1',
    group: 'default',
    channelCandidates: ['sim-art'],
    request,
    reservationId: 'res_j1',
    reserved: 25_000,
    basis,
    createdAt: 1_700_000_000,
  };
  return [S, { type: 'TaskSubmitted', data }];
}
const dispatched: readonly [string, DomainEvent] = [S, { type: 'UpstreamSubmitted', data: { channelId: 'sim-art', upstreamTaskId: 'u1', attempt: 1 } }];
const progressed = (progress: number): readonly [string, DomainEvent] => [S, { type: 'TaskProgressed', data: { status: 'in_progress', progress } }];
const key = (n: string) => `tasks/j1/${n}.png`;
/** The view keeps asset references; the instance that answers signs them. */
const url = (n: string) => assetRef(key(n), 1_700_007_299);
const gridDone: EventDataOf<'TaskSucceeded'> = {
  results: ['grid', '0', '1', '2', '3'].map((n) => ({ kind: 'image' as const, assetKey: key(n), delivery: 'url' as const })),
  usage: { units: 1 },
  upstream: { status: 'SUCCESS', width: 1024, height: 1024, seed: 42 },
  assetsExpireAt: 1_700_007_299,
  completedAt: 1_700_000_100,
};
const succeeded = (data: EventDataOf<'TaskSucceeded'>): readonly [string, DomainEvent] => [S, { type: 'TaskSucceeded', data }];
const record = (events: readonly (readonly [string, DomainEvent])[]) => given(artTaskProjection, events).get('j1')?.body;

describe('art task record: given events, then document', () => {
  it('right after submit: IN_PROGRESS at 0%, quota, state, description, submitTime in ms', () => {
    expect(record([submitted('IMAGINE', { prompt: 'a cat', state: 's' })])).toEqual({
      id: 'j1',
      action: 'IMAGINE',
      prompt: 'a cat',
      description: '/imagine a cat',
      state: 's',
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
      quota: '25000',
      assetsExpireAt: 0,
      assetRetentionNotice: '',
      submitTime: at(0),
      startTime: 0,
      finishTime: 0,
    });
  });

  it('other families are not this view', () => {
    expect(record([submitted('IMAGINE', { prompt: 'x' }, 'tune')])).toBeUndefined();
  });

  it('startTime when it went upstream, progress as a percentage', () => {
    expect(record([submitted('IMAGINE', { prompt: 'x' }), dispatched, progressed(40)])).toMatchObject({
      status: 'IN_PROGRESS',
      progress: '40%',
      startTime: at(1),
    });
  });

  it('grid SUCCESS: imageUrl = cdnImage = the grid, four images, components, size and seed, retention notice', () => {
    const r = record([submitted('IMAGINE', { prompt: 'x' }), dispatched, progressed(50), succeeded(gridDone)]);
    expect(r).toMatchObject({
      status: 'SUCCESS',
      progress: '100%',
      imageUrl: url('grid'),
      cdnImage: url('grid'),
      images: ['0', '1', '2', '3'].map(url),
      components: [...GRID_COMPONENTS],
      width: 1024,
      height: 1024,
      seed: 42,
      assetsExpireAt: 1_700_007_299,
      finishTime: at(3),
    });
    expect(r!.assetRetentionNotice).toMatch(/kept for 2 hours .*2023-11-15T00:14:59\.000Z/);
  });

  it('UPSCALE SUCCESS: one image, no components; the description names the grid and index', () => {
    const done = { ...gridDone, results: [{ kind: 'image' as const, assetKey: key('u'), delivery: 'url' as const }] };
    const r = record([submitted('UPSCALE', { taskId: 'g1', action: 'UPSCALE', index: 2, prompt: 'p' }), dispatched, succeeded(done)]);
    expect(r).toMatchObject({ action: 'UPSCALE', prompt: 'p', description: '/upscale U2 of g1', imageUrl: url('u'), images: [url('u')], components: [] });
  });

  it('an event of an earlier version (a signed URL next to the key) folds to the same references', () => {
    const old = {
      ...gridDone,
      results: ['grid', '0', '1', '2', '3'].map((n) => ({
        kind: 'image' as const,
        assetKey: key(n),
        url: `http://127.0.0.1:3000/assets/${key(n)}?exp=1700007299&sig=x`,
      })),
    };
    const r = record([submitted('IMAGINE', { prompt: 'x' }), dispatched, succeeded(old)]);
    expect(r).toMatchObject({ imageUrl: url('grid'), cdnImage: url('grid'), images: ['0', '1', '2', '3'].map(url) });
  });

  it('DESCRIBE SUCCESS: the prompts go in prompt, no images', () => {
    const done: EventDataOf<'TaskSucceeded'> = {
      results: [{ kind: 'text', text: '1. a\n\n2. b' }],
      usage: { units: 1 },
      assetsExpireAt: 0,
      completedAt: 1_700_000_100,
    };
    const r = record([submitted('DESCRIBE', { base64: 'data:…' }), dispatched, succeeded(done)]);
    expect(r).toMatchObject({
      status: 'SUCCESS',
      prompt: '1. a\n\n2. b',
      description: '/describe',
      imageUrl: '',
      images: [],
      components: [],
      assetsExpireAt: 0,
      assetRetentionNotice: '',
    });
  });

  it('BLEND: the description counts the images', () => {
    expect(record([submitted('BLEND', { base64Array: ['a', 'b', 'c'], dimensions: 'PORTRAIT' })])!.description).toBe('/blend 3 images PORTRAIT');
  });

  it('FAILURE keeps the progress reached; later progress changes nothing', () => {
    const failed: readonly [string, DomainEvent] = [S, { type: 'TaskFailed', data: { code: 'upstream_failed', reason: 'boom', completedAt: 1_700_000_050 } }];
    expect(record([submitted('IMAGINE', { prompt: 'x' }), dispatched, progressed(25), failed, progressed(75)])).toMatchObject({
      status: 'FAILURE',
      progress: '25%',
      failReason: 'upstream_failed: boom',
      finishTime: at(3),
    });
  });

  it('AssetsExpired empties images, imageUrl and cdnImage; status and assetsExpireAt stay', () => {
    const r = record([submitted('IMAGINE', { prompt: 'x' }), dispatched, succeeded(gridDone), [S, { type: 'AssetsExpired', data: { assetKeys: ['grid'] } }]]);
    expect(r).toMatchObject({ status: 'SUCCESS', imageUrl: '', cdnImage: '', images: [], components: [...GRID_COMPONENTS], assetsExpireAt: 1_700_007_299 });
    expect(r!.assetRetentionNotice).toBe('The result images were deleted after the 2 hours retention; images is empty.');
  });

  it('retention: rounded up to whole minutes from a minute up, and spelled out', () => {
    expect(retentionOf({ assetsExpireAt: 1_000_007_199, completedAt: 1_000_000_000 })).toBe(7200);
    expect(retentionOf({ assetsExpireAt: 1_000_000_002, completedAt: 1_000_000_000 })).toBe(2);
    expect(retentionOf({ assetsExpireAt: 0, completedAt: 1_000_000_000 })).toBe(0);
    expect([7200, 3600, 5400, 90, 1].map(retentionText)).toEqual(['2 hours', '1 hour', '90 minutes', '90 seconds', '1 second']);
  });
});
