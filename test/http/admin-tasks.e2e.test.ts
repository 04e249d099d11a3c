/**
 * `GET /api/admin/tasks`: an administrator's task log across users on the assembled gateway —
 * filtered by user, key, model, family, channel, status and time, paged, and exported as CSV
 * that parses back to the same tasks; refused to anyone else, and bad filters named.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE, waitForImageTask } from '../support/images.js';

let gw: TestGateway;
let admin: Client;
let alice: Awaited<ReturnType<typeof newUser>>;
let bob: Awaited<ReturnType<typeof newUser>>;
let aliceKeys: Array<{ id: string; key: string }>;
const ids: Record<string, string> = {};
let before: string;

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE);
  admin = await adminClient(gw);
  alice = await newUser(admin, { credit: 1_000_000 });
  bob = await newUser(admin, { credit: 1_000_000 });
  aliceKeys = [await newToken(alice.client), await newToken(alice.client)];
  const bobKey = await newToken(bob.client);
  const submit = async (key: string, name: string, body: Record<string, unknown>, path = '/v1/images/async/generations') => {
    const r = await new Client(gw.url, key).post(path, body);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    ids[name] = r.body.id ?? r.body.data;
  };
  before = new Date(Date.now() - 1000).toISOString();
  await submit(aliceKeys[0]!.key, 'a1', { model: 'anime-diffusion-4-5-full', prompt: '=cmd|a "quoted", fox\nsecond line' });
  await submit(aliceKeys[1]!.key, 'a2', { model: 'anime-diffusion-4-5-curated', prompt: 'fails [sim:fail]' });
  await submit(bobKey.key, 'b1', { model: 'anime-diffusion-4-5-full', prompt: 'bob fox' });
  await submit(bobKey.key, 'b2', { prompt: 'a song' }, '/tune/submit/LYRICS');
  for (const [name, key] of [
    ['a1', aliceKeys[0]!.key],
    ['a2', aliceKeys[1]!.key],
    ['b1', bobKey.key],
  ] as const)
    await waitForImageTask(new Client(gw.url, key), ids[name]!);
});
afterAll(() => gw.close());

const listed = async (query: string) => {
  const r = await admin.get(`/api/admin/tasks?${query}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data as {
    items: Array<{ id: string; account_id: string; token_id: string; channel_id: string | null; model: string; status: string }>;
    total: number;
  };
};
const mine = (items: Array<{ id: string }>) => items.map((t) => t.id).filter((id) => Object.values(ids).includes(id));

describe('GET /api/admin/tasks', () => {
  it('lists every user’s tasks, newest first, with account, key and channel', async () => {
    const all = await listed('size=100');
    expect(mine(all.items)).toEqual([ids.b2, ids.b1, ids.a2, ids.a1]);
    const a1 = all.items.find((t) => t.id === ids.a1)!;
    expect(a1).toMatchObject({ account_id: alice.accountId, token_id: aliceKeys[0]!.id, model: 'anime-diffusion-4-5-full', status: 'completed' });
    expect(a1.channel_id).toMatch(/\S/);
  });

  it('filters by user, key, model, family, channel, status and time', async () => {
    expect(mine((await listed(`user_id=${alice.userId}`)).items)).toEqual([ids.a2, ids.a1]);
    expect(mine((await listed(`token_id=${aliceKeys[1]!.id}`)).items)).toEqual([ids.a2]);
    expect(mine((await listed('model=anime-diffusion-4-5-full')).items)).toEqual([ids.b1, ids.a1]);
    expect(mine((await listed('family=tune')).items)).toEqual([ids.b2]);
    expect(mine((await listed(`user_id=${alice.userId}&status=failed`)).items)).toEqual([ids.a2]);
    const channel = (await listed(`user_id=${bob.userId}&family=image`)).items[0]!.channel_id!;
    expect(mine((await listed(`channel_id=${encodeURIComponent(channel)}&user_id=${bob.userId}`)).items)).toEqual([ids.b1]);
    const window = await listed(`from=${before}&user_id=${alice.userId}`);
    expect(mine(window.items)).toEqual([ids.a2, ids.a1]);
    expect(window.total).toBe(2);
    expect((await listed('to=2001-01-01')).items).toEqual([]);
    // Paged: one at a time.
    const first = await listed(`user_id=${alice.userId}&size=1&p=0`);
    const second = await listed(`user_id=${alice.userId}&size=1&p=1`);
    expect([...mine(first.items), ...mine(second.items)]).toEqual([ids.a2, ids.a1]);
    expect(first.total).toBe(2);
  });

  it('exports the filtered log as CSV that parses back to the same tasks, prompts quoted and defused', async () => {
    const r = await fetch(`${gw.url}/api/admin/tasks?format=csv&user_id=${alice.userId}`, { headers: { cookie: admin.cookie! } });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(r.headers.get('content-disposition')).toMatch(/^attachment; filename="tasks-\d{4}-\d{2}-\d{2}\.csv"$/);
    const rows = parseCsv(await r.text());
    expect(rows[0]).toEqual([
      'id',
      'created_at',
      'completed_at',
      'status',
      'account_id',
      'token_id',
      'family',
      'action',
      'model',
      'channel_id',
      'reserved',
      'charged',
      'error_code',
      'prompt',
    ]);
    const body = rows.slice(1);
    expect(body.map((row) => row[0])).toEqual([ids.a2, ids.a1]);
    const a1 = body[1]!;
    expect(a1[3]).toBe('completed');
    expect(a1[5]).toBe(aliceKeys[0]!.id);
    expect(a1[11]).toBe('10000');
    // A spreadsheet would run a cell starting with `=`: it is written as text.
    expect(a1[13]).toBe(`'=cmd|a "quoted", fox\nsecond line`);
    expect(body[0]![12]).toMatch(/\S/);
  });

  it('is for administrators only; bad filters are named', async () => {
    expect((await alice.client.get('/api/admin/tasks')).status).toBe(403);
    expect((await new Client(gw.url).get('/api/admin/tasks')).status).toBe(401);
    const unknown = await admin.get('/api/admin/tasks?user_id=usr_nobody');
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain('user_id');
    for (const [query, field] of [
      ['from=yesterday', 'from'],
      ['status=done', 'status'],
      ['format=xml', 'format'],
      ['size=501', 'size'],
    ]) {
      const r = await admin.get(`/api/admin/tasks?${query}`);
      expect(r.status, query).toBe(400);
      expect(r.body.message, query).toContain(field);
    }
  });
});

/** RFC 4180, as a reader would parse it: quoted fields may hold commas, quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  return rows;
}
