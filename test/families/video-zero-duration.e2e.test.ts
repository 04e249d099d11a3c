/**
 * A delivered video whose upstream reports 0 seconds is not free: vidgen, Vid-H3 and clip
 * charge the seconds asked for (docs/decisions/0016-settlement-capped-at-what-was-asked.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moneyOf, pollUntil, startVideoWorld, type VideoWorld } from '../support/videos.js';

let world: VideoWorld;
beforeAll(async () => {
  world = await startVideoWorld();
});
afterAll(() => world.gw.close());

describe('a delivered video reported as 0 s long', () => {
  it('vidgen: charged the seconds asked for', async () => {
    const r = await world.api.post('/v1/video/generations', {
      model: 'vendor-vidgen-2-5-260628',
      prompt: 'instant [sim:dur=0]',
      seconds: 4,
      metadata: { resolution: '720p' },
    });
    expect(r.status).toBe(200);
    const done = await pollUntil(world.api, `/v1/video/generations/${r.body.id}`, (b) => b.data?.status === 'SUCCESS' || b.data?.status === 'FAILURE');
    expect(done.data.status).toBe('SUCCESS');
    const money = await moneyOf(world.gw, world.accountId, r.body.id);
    expect(money.settled).toMatchObject({ actual: money.reserved, charged: money.reserved, basis: { units: 4 } });
  });

  it('Vid-H3: charged the seconds asked for', async () => {
    const r = await world.api.post('/v1/videos', { model: 'Vid-H3', prompt: 'instant [sim:dur=0]', seconds: 6, size: '768P' });
    expect(r.status).toBe(200);
    const done = await pollUntil(world.api, `/v1/videos/${r.body.id}`, (b) => b.status === 'completed' || b.status === 'failed');
    expect(done.status).toBe('completed');
    const money = await moneyOf(world.gw, world.accountId, r.body.id);
    expect(money.settled).toMatchObject({ actual: money.reserved, charged: money.reserved, basis: { units: 6 } });
  });

  it('clip: charged the seconds asked for, and final_unit_deduction says so', async () => {
    const r = await world.api.post('/clip/v1/videos/text2video', { model_name: 'clip-v1', prompt: 'instant [sim:dur=0]', duration: 5 });
    expect(r.status).toBe(200);
    const id = r.body.data.task_id;
    const done = await pollUntil(world.api, `/clip/v1/videos/text2video/${id}`, (b) => b.data?.task_status === 'succeed' || b.data?.task_status === 'failed');
    expect(done.data).toMatchObject({ task_status: 'succeed', final_unit_deduction: 5 });
    const money = await moneyOf(world.gw, world.accountId, id);
    expect(money.settled).toMatchObject({ actual: money.reserved, charged: money.reserved, basis: { units: 5 } });
  });
});
