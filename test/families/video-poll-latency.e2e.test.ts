/**
 * Video tasks are polled soon after submit and back off from there: on the default poll
 * intervals (video families: 5 s) a fast upstream's finished video is seen within a couple of
 * seconds, not one whole interval later.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
let api: Client;
beforeAll(async () => {
  // No POLL_INTERVAL_MS override: the families' own intervals apply.
  gw = await startGateway({ SIM_STEP_MS: '30' });
  const user = await newUser(await adminClient(gw), { credit: 100_000_000 });
  api = new Client(gw.url, (await newToken(user.client)).key);
});
afterAll(() => gw.close());

describe('video polling starts fast', () => {
  it.each([
    ['Vid-H3', '/v1/videos', { model: 'Vid-H3', prompt: 'quick', seconds: 4, size: '768P' }, (b: any) => b.status === 'completed', (b: any) => b.id],
    [
      'vidgen',
      '/v1/video/generations',
      { model: 'vendor-vidgen-2-5-260628', prompt: 'quick', seconds: 2, metadata: { resolution: '480p' } },
      (b: any) => b.data?.status === 'SUCCESS',
      (b: any) => b.id,
    ],
  ] as const)('%s: a video the upstream finishes at once is shown completed within 2.5 s', async (_name, path, body, done, idOf) => {
    const started = Date.now();
    const r = await api.post(path, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id = idOf(r.body);
    await eventually(async () => (done((await api.get(`${path}/${id}`)).body) ? true : undefined), 10_000, 25);
    expect(Date.now() - started).toBeLessThan(2_500);
  });
});
