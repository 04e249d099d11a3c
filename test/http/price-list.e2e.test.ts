/**
 * A plain user can find out what things cost: the price list of their group, with an API key
 * (`GET /v1/pricing`, also through the openai client's generic `get`) and with a session
 * (`GET /api/user/pricing`), in quota units — and a submit is charged what the list says.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
let admin: Client;
beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '0', POLL_INTERVAL_MS: '20' });
  admin = await adminClient(gw);
  // A discounted group, to see the ratio applied.
  expect((await admin.put('/api/pricing', { group_ratios: { vip: 800 } })).status).toBe(200);
});
afterAll(() => gw.close());

interface Entry {
  model: string;
  unit: string;
  price: number;
  tiers: Record<string, number>;
  extras: Record<string, number>;
}

describe('price list', () => {
  it('with an API key: every model the key may use, priced for its group; a submit charges the listed price', async () => {
    const user = await newUser(admin, { credit: 10_000_000, group: 'vip' });
    const key = (await newToken(user.client)).key;
    const api = new Client(gw.url, key);
    const models = (await api.get('/v1/models')).body.data.map((m: { id: string }) => m.id).sort();
    const list = await api.get('/v1/pricing');
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ group: 'vip', group_ratio_permille: 800 });
    expect(list.body.models.map((e: Entry) => e.model).sort()).toEqual(models);
    const anime = list.body.models.find((e: Entry) => e.model === 'anime-diffusion-4-5-full') as Entry;
    expect(anime.unit).toBe('image');
    expect(Number.isInteger(anime.price)).toBe(true);
    const video = list.body.models.find((e: Entry) => Object.keys(e.tiers).length > 0) as Entry;
    expect(video).toBeDefined();

    const submit = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'priced', n: 2 });
    expect(submit.status).toBe(200);
    await eventually(async () => ((await api.get(`/v1/images/async/generations/${submit.body.id}`)).body.status === 'completed' ? true : undefined));
    const self = await eventually(async () => {
      const d = (await user.client.get('/api/user/self')).body.data;
      return d.reserved_quota === 0 && d.used_quota > 0 ? d : undefined;
    });
    expect(self.used_quota).toBe(2 * anime.price);

    // The official client reaches it too, with its generic request method.
    const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const viaClient = (await client.get('/pricing')) as { group: string; models: Entry[] };
    expect(viaClient.models).toEqual(list.body.models);
  });

  it('a key limited to some models sees only their prices; no key is refused', async () => {
    const user = await newUser(admin, { credit: 1000 });
    const api = new Client(gw.url, (await newToken(user.client, { model_limits: 'anime-diffusion-4-5-full' })).key);
    const list = await api.get('/v1/pricing');
    expect(list.status).toBe(200);
    expect(list.body.models.map((e: Entry) => e.model)).toEqual(['anime-diffusion-4-5-full']);
    expect((await new Client(gw.url).get('/v1/pricing')).status).toBe(401);
  });

  it('with a session: the whole list of the user’s group in the session envelope', async () => {
    const user = await newUser(admin, { credit: 1000 });
    const r = await user.client.get('/api/user/pricing');
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
    expect(r.body.data).toMatchObject({ group: 'default', group_ratio_permille: 1000 });
    expect(r.body.data.models.length).toBeGreaterThan(10);
    expect((await new Client(gw.url).get('/api/user/pricing')).status).toBe(401);
  });
});
