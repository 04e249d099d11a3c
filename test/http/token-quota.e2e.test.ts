/**
 * What a token's quota cap means to its user: it limits spending, never reading — a key that
 * spent its cap still polls and downloads what it paid for — and a key created without a cap
 * (the body `{}`) spends from the account balance.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, eventually, newUser, startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
let user: Awaited<ReturnType<typeof newUser>>;
beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '20', POLL_INTERVAL_MS: '20' });
  user = await newUser(await adminClient(gw), { credit: 10_000_000 });
});
afterAll(() => gw.close());

async function createToken(body: Record<string, unknown>): Promise<{ key: string; record: Record<string, unknown> }> {
  const r = await user.client.post('/api/token/', body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { key: r.body.data.key, record: r.body.data };
}

describe('token quota caps', () => {
  it('a key that spent its whole cap still polls its video and downloads it through the openai client; another submit is refused', async () => {
    // Exactly one 5 s Vid-H3 video at 768P (5 × 5,000 quota units).
    const { key } = await createToken({ name: 'capped', remain_quota: 25_000 });
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const created = await client.videos.create({ model: 'Vid-H3', prompt: 'a paid-for video', seconds: '5' as never, size: '768P' as never });
    const video = await eventually(
      async () => {
        const v = await client.videos.retrieve(created.id);
        return v.status === 'completed' ? v : undefined;
      },
      20_000,
      100,
    );
    expect(video.id).toBe(created.id);
    const tokens = await eventually(async () => {
      const list = (await user.client.get('/api/token/')).body.data.items as Array<{ name: string; remain_quota: number }>;
      const t = list.find((x) => x.name === 'capped');
      return t && t.remain_quota === 0 ? t : undefined;
    });
    expect(tokens.remain_quota).toBe(0);
    // Reading goes on: the task, its content, the model list.
    expect((await client.videos.retrieve(created.id)).status).toBe('completed');
    const content = await client.videos.downloadContent(created.id);
    expect(
      Buffer.from(await content.arrayBuffer())
        .subarray(4, 8)
        .toString('latin1'),
    ).toBe('ftyp');
    expect((await client.models.list()).data.length).toBeGreaterThan(0);
    // Spending does not.
    const refused = await client.videos.create({ model: 'Vid-H3', prompt: 'one more', seconds: '5' as never, size: '768P' as never }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
  });

  it('a key created with the body {} spends from the account balance', async () => {
    const { key, record } = await createToken({});
    expect(record).toMatchObject({ unlimited_quota: true });
    const api = new Client(gw.url, key);
    expect((await api.get('/v1/models')).status).toBe(200);
    const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'from the balance', n: 1 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    await eventually(async () => ((await api.get(`/v1/images/async/generations/${r.body.id}`)).body.status === 'completed' ? true : undefined));
  });

  it('a key created with only remain_quota is capped at it', async () => {
    const { record } = await createToken({ remain_quota: 5000 });
    expect(record).toMatchObject({ unlimited_quota: false, remain_quota: 5000 });
  });
});
