import { describe, expect, it } from 'vitest';
import { adminClient, Client, eventually, newToken, newUser, startGateway } from '../../support/gateway.js';
import { FAST_ENGINE } from '../../support/images.js';

async function waitForArt(client: Client, id: string) {
  return eventually(
    async () => {
      const r = await client.get(`/art/task/${id}/fetch`);
      return r.body.status === 'SUCCESS' || r.body.status === 'FAILURE' ? r.body : undefined;
    },
    15_000,
    30,
  );
}

async function submitted(client: Client, kind: string, body: unknown): Promise<string> {
  const r = await client.post(`/art/submit/${kind}`, body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.result;
}

describe('art asset retention (ASSET_RETENTION_SECONDS=2)', () => {
  it('after expiry images, imageUrl and cdnImage are empty and the URLs are gone; CHANGE still works', async () => {
    const short = await startGateway({ ...FAST_ENGINE, ASSET_RETENTION_SECONDS: '2' });
    try {
      const user = await newUser(await adminClient(short), { credit: 1_000_000 });
      const client = new Client(short.url, (await newToken(user.client)).key);
      const id = await submitted(client, 'imagine', { prompt: 'short-lived' });
      const done = await waitForArt(client, id);
      expect(done.assetRetentionNotice).toMatch(/kept for [12] seconds?/);
      expect(done.assetsExpireAt - Math.floor(done.finishTime / 1000)).toBeLessThanOrEqual(2);
      expect((await fetch(done.images[0])).status).toBe(200);
      const expired = await eventually(
        async () => {
          const r = await client.get(`/art/task/${id}/fetch`);
          return r.body.images.length === 0 ? r.body : undefined;
        },
        10_000,
        100,
      );
      expect(expired).toMatchObject({ status: 'SUCCESS', progress: '100%', imageUrl: '', cdnImage: '', images: [], assetsExpireAt: done.assetsExpireAt });
      expect(expired.assetRetentionNotice).toMatch(/deleted/);
      expect([404, 410]).toContain((await fetch(done.images[0])).status);
      const upscale = await submitted(client, 'change', { taskId: id, action: 'UPSCALE', index: 1 });
      expect((await waitForArt(client, upscale)).status).toBe('SUCCESS');
    } finally {
      await short.close();
    }
  });
});
