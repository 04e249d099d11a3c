import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otherCaller, startVideoWorld, type VideoWorld } from '../../support/videos.js';

let world: VideoWorld;
/** The caller's videos, oldest first. */
let ids: string[];
/** Another account's video, never listed for the caller. */
let foreignId: string;

const PATH = '/v1/videos';

/** Until the query view has folded every submit so far. */
async function viewCaughtUp() {
  const { events, runner } = world.gw.gateway.deps;
  await runner.waitFor(await events.headPosition());
}

beforeAll(async () => {
  world = await startVideoWorld();
  ids = [];
  for (let i = 0; i < 5; i++) {
    const r = await world.api.post(PATH, { model: 'Vid-H3', prompt: `video ${i}`, seconds: 4 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ids.push(r.body.id);
  }
  const other = await otherCaller(world);
  const r = await other.api.post(PATH, { model: 'Vid-H3', prompt: 'not yours', seconds: 4 });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  foreignId = r.body.id;
  await viewCaughtUp();
});
afterAll(() => world.gw.close());

/** The caller's ids in the list's order (created_at, ties by id). */
async function expectedOrder(order: 'asc' | 'desc') {
  const bodies = await Promise.all(ids.map(async (id) => (await world.api.get(`${PATH}/${id}`)).body));
  const sorted = bodies.sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).map((b) => b.id as string);
  return order === 'asc' ? sorted : sorted.reverse();
}

describe("GET /v1/videos: the account's Vid-H3 videos, as OpenAI lists them", () => {
  it("newest first by default, each as GET /v1/videos/{id} answers it, only the caller's own", async () => {
    const r = await world.api.get(PATH);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const order = await expectedOrder('desc');
    expect(r.body).toEqual({ object: 'list', data: expect.any(Array), first_id: order[0], last_id: order[4], has_more: false });
    expect(r.body.data.map((v: any) => v.id)).toEqual(order);
    expect(r.body.data.map((v: any) => v.id)).not.toContain(foreignId);
    for (const video of r.body.data) {
      expect(Object.keys(video).sort()).toEqual([
        'completed_at',
        'created_at',
        'error',
        'expires_at',
        'id',
        'model',
        'object',
        'progress',
        'seconds',
        'size',
        'status',
      ]);
      expect(video).toMatchObject({ object: 'video', model: 'Vid-H3', seconds: '4' });
    }
  });

  it('pages with limit and after; order=asc is oldest first', async () => {
    const desc = await expectedOrder('desc');
    const first = await world.api.get(`${PATH}?limit=2`);
    expect(first.body).toMatchObject({ first_id: desc[0], last_id: desc[1], has_more: true });
    expect(first.body.data.map((v: any) => v.id)).toEqual(desc.slice(0, 2));
    const second = await world.api.get(`${PATH}?limit=2&after=${first.body.last_id}`);
    expect(second.body.data.map((v: any) => v.id)).toEqual(desc.slice(2, 4));
    expect(second.body.has_more).toBe(true);
    const last = await world.api.get(`${PATH}?limit=2&after=${second.body.last_id}`);
    expect(last.body).toMatchObject({ first_id: desc[4], last_id: desc[4], has_more: false });

    const asc = await world.api.get(`${PATH}?order=asc&limit=3`);
    expect(asc.body.data.map((v: any) => v.id)).toEqual((await expectedOrder('asc')).slice(0, 3));
    expect(asc.body.has_more).toBe(true);
  });

  it('another account lists only its own; an empty page has null ids', async () => {
    const other = await otherCaller(world);
    const empty = await other.api.get(PATH);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    // The caller's video is no cursor for another account.
    const foreignCursor = await other.api.get(`${PATH}?after=${ids[0]}`);
    expect(foreignCursor.status).toBe(400);
    expect(foreignCursor.body.error).toMatchObject({ param: 'after' });
  });

  it('the openai client iterates every page (for await) with a small limit', async () => {
    const client = new OpenAI({ apiKey: world.key, baseURL: `${world.gw.url}/v1`, maxRetries: 0 });
    const page = await client.videos.list({ limit: 3 });
    expect(page.data).toHaveLength(3);
    expect(page.has_more).toBe(true);
    expect(page.hasNextPage()).toBe(true);
    const seen: string[] = [];
    for await (const video of client.videos.list({ limit: 3 })) {
      expect(video.object).toBe('video');
      seen.push(video.id);
    }
    expect(seen).toEqual(await expectedOrder('desc'));
    const asc: string[] = [];
    for await (const video of client.videos.list({ limit: 2, order: 'asc' })) asc.push(video.id);
    expect(asc).toEqual(await expectedOrder('asc'));
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['order=newest', 'order'],
    ['after=task_doesnotexist000000000', 'after'],
    ['after=not%20an%20id', 'after'],
  ])('?%s is a 400 naming %s', async (query, field) => {
    const r = await world.api.get(`${PATH}?${query}`);
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error).toMatchObject({ param: field });
    expect(r.body.error.message).toMatch(new RegExp(`^${field}: `));
  });

  it('the openai client surfaces a bad limit as a 400 APIError naming limit', async () => {
    const client = new OpenAI({ apiKey: world.key, baseURL: `${world.gw.url}/v1`, maxRetries: 0 });
    const error = await client.videos.list({ limit: 500 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error).toMatchObject({ status: 400, param: 'limit' });
  });
});

it('the OpenAPI document declares the list query (after, limit 1..100 default 20, order asc|desc default desc)', async () => {
  const doc = (await (await fetch(`${world.gw.url}/openapi.json`)).json()) as any;
  const params = Object.fromEntries(doc.paths['/v1/videos'].get.parameters.map((p: any) => [p.name, p.schema]));
  expect(params).toMatchObject({
    after: { type: 'string' },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
    order: { enum: ['asc', 'desc'], default: 'desc' },
  });
});
