/**
 * The embedded default is one process that owns every task: its settler and dispatcher keep the
 * one checkpoint each they always kept, under the same names, so a data directory written by an
 * earlier version resumes where it stood (docs/decisions/0124-work-scoped-to-owned-partitions.md).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { waitForImageTask } from '../support/images.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '20', POLL_INTERVAL_MS: '30' });
});
afterAll(() => gw.close());

it('the embedded gateway keeps one settler and one dispatcher checkpoint, none per partition', async () => {
  const user = await newUser(await adminClient(gw), { credit: 1_000_000 });
  const api = new Client(gw.url, (await newToken(user.client)).key);
  const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'embedded checkpoints' });
  expect(r.status).toBe(200);
  expect((await waitForImageTask(api, r.body.id as string)).status).toBe('completed');
  const { events, views, bus } = gw.gateway.deps;
  const head = await events.headPosition();
  await gw.gateway.engine.settler.caughtUp(head);
  await gw.gateway.engine.dispatcher.caughtUp(head);
  expect(await views.getCheckpoint('processor:settler')).toBeGreaterThan(0n);
  expect(await views.getCheckpoint('processor:dispatcher')).toBeGreaterThan(0n);
  for (let p = 0; p < bus.partitions; p++) {
    expect(await views.getCheckpoint(`processor:settler:p${p}`), `settler p${p}`).toBeUndefined();
    expect(await views.getCheckpoint(`processor:dispatcher:p${p}`), `dispatcher p${p}`).toBeUndefined();
  }
});
