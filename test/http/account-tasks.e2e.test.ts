/**
 * `GET /api/tasks`: a session lists its account's tasks of every family, newest first, with live
 * status, result URLs that download, and what each cost — and never another account's tasks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { expectPng, FAST_ENGINE, waitForImageTask } from '../support/images.js';

let gw: TestGateway;
let admin: Client;
beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE);
  admin = await adminClient(gw);
});
afterAll(() => gw.close());

/** The account's list once the task's summary satisfies `done`. */
async function listedWhen(session: Client, taskId: string, done: (task: any) => boolean) {
  return eventually(async () => {
    const r = await session.get('/api/tasks');
    expect(r.status).toBe(200);
    const task = r.body.data.items.find((t: { id: string }) => t.id === taskId);
    return task && done(task) ? r.body.data : undefined;
  });
}

describe('GET /api/tasks', () => {
  it('lists the account’s tasks newest first, with results, charge and failure', async () => {
    const user = await newUser(admin, { credit: 1_000_000 });
    const api = new Client(gw.url, (await newToken(user.client)).key);
    expect((await user.client.get('/api/tasks')).body).toEqual({ success: true, message: '', data: { items: [], total: 0, page: 0, page_size: 20 } });

    const image = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'a listed fox', n: 2 });
    expect(image.status).toBe(200);
    await waitForImageTask(api, image.body.id);
    const failed = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'no luck [sim:fail]' });
    await waitForImageTask(api, failed.body.id);

    const page = await listedWhen(user.client, failed.body.id, (t) => t.status === 'failed' && t.charged === 0);
    expect(page.total).toBe(2);
    const [newest, oldest] = page.items;
    expect(newest).toMatchObject({
      id: failed.body.id,
      family: 'image',
      model: 'anime-diffusion-4-5-full',
      prompt: 'no luck [sim:fail]',
      status: 'failed',
      charged: 0,
      results: [],
      error: { code: 'upstream_failed' },
    });
    expect(oldest).toMatchObject({
      id: image.body.id,
      status: 'completed',
      progress: 100,
      prompt: 'a listed fox',
      reserved: 20_000,
      sync: false,
      callback_url: null,
    });
    expect(Date.parse(oldest.created_at)).not.toBeNaN();
    expect(Date.parse(oldest.completed_at)).not.toBeNaN();
    expect(Date.parse(oldest.assets_expire_at)).toBeGreaterThan(Date.now());

    // Charged what the ledger says the settlement charged.
    const completed = (await listedWhen(user.client, image.body.id, (t) => t.charged !== null)).items[1];
    const ledger = await user.client.get(`/api/billing/ledger?task_id=${image.body.id}`);
    const settled = ledger.body.data.items.find((e: { type: string }) => e.type === 'QuotaSettled');
    expect(completed.charged).toBe(settled.amount);

    // Result URLs are signed on this gateway and download without credentials.
    expect(completed.results).toHaveLength(2);
    for (const result of completed.results) {
      expect(result).toMatchObject({ kind: 'image', text: null });
      expect(result.url).toMatch(new RegExp(`^${gw.url}/assets/tasks/${image.body.id}/`));
      const file = await fetch(result.url);
      expect(file.status).toBe(200);
      expectPng(Buffer.from(await file.arrayBuffer()));
    }

    // Paging and the status filter.
    const second = await user.client.get('/api/tasks?size=1&p=1');
    expect(second.body.data).toMatchObject({ total: 2, page: 1, page_size: 1 });
    expect(second.body.data.items.map((t: { id: string }) => t.id)).toEqual([image.body.id]);
    const onlyFailed = await user.client.get('/api/tasks?status=failed');
    expect(onlyFailed.body.data.items.map((t: { id: string }) => t.id)).toEqual([failed.body.id]);
    expect(onlyFailed.body.data.total).toBe(1);
  });

  it('shows nothing of another account; needs a session; refuses a bad query', async () => {
    const owner = await newUser(admin, { credit: 100_000 });
    const api = new Client(gw.url, (await newToken(owner.client)).key);
    const task = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'mine' });
    await waitForImageTask(api, task.body.id);
    await listedWhen(owner.client, task.body.id, (t) => t.status === 'completed');

    const other = await newUser(admin, { credit: 100_000 });
    expect((await other.client.get('/api/tasks')).body.data).toMatchObject({ items: [], total: 0 });
    // An administrator's list is their own account's too.
    expect((await admin.get('/api/tasks')).body.data.items.some((t: { id: string }) => t.id === task.body.id)).toBe(false);

    const anonymous = await new Client(gw.url).get('/api/tasks');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ success: false, code: 'unauthorized' });
    // An API key is not a session.
    expect((await api.get('/api/tasks')).status).toBe(401);

    for (const query of ['size=0', 'size=101', 'p=-1', 'status=done']) {
      const refused = await owner.client.get(`/api/tasks?${query}`);
      expect(refused.status, query).toBe(400);
      expect(refused.body).toMatchObject({ success: false, code: 'invalid_request' });
    }
  });
});

describe('GET /api/billing/ledger?account_id=', () => {
  it("an administrator reads any account's statement; a user only their own, and naming another is refused", async () => {
    const user = await newUser(admin, { credit: 12_345 });
    const other = await newUser(admin, { credit: 100 });
    const credits = (body: any) => body.data.items.filter((e: { type: string }) => e.type === 'QuotaCredited').map((e: { amount: number }) => e.amount);

    // Every statement is ledger projection output: wait until the credit is there.
    const byAdmin = await eventually(async () => {
      const r = await admin.get(`/api/billing/ledger?account_id=${user.accountId}`);
      return r.status === 200 && credits(r.body).length > 0 ? r : undefined;
    });
    expect(credits(byAdmin.body)).toEqual([12_345]);
    // The administrator's own statement does not hold it.
    expect(credits((await admin.get('/api/billing/ledger')).body)).not.toContain(12_345);

    const own = await user.client.get(`/api/billing/ledger?account_id=${user.accountId}`);
    expect(own.status).toBe(200);
    expect(credits(own.body)).toEqual([12_345]);

    const refused = await user.client.get(`/api/billing/ledger?account_id=${other.accountId}`);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ success: false, code: 'forbidden' });
    expect(refused.body.message).toBe("account_id: only an administrator may read another account's statement");
  });
});
