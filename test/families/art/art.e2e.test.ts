import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway, expectNothingAppendedSince } from '../../support/gateway.js';
import { expectBooksBalance, expectEachReservationClosedOnce } from '../../support/billing.js';
import { FAST_ENGINE, pngSize } from '../../support/images.js';
import { makePng } from '../../../src/simulator/media.js';
import type { LedgerEntry } from '../../../projections/ledger.js';

const IMG = `data:image/png;base64,${makePng(8, 8, 'ref').toString('base64')}`;
const IMG2 = `data:image/png;base64,${makePng(8, 8, 'ref2').toString('base64')}`;

let gw: TestGateway;
let api: Client;
let other: Client;
let accountId: string;

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE);
  const admin = await adminClient(gw);
  const user = await newUser(admin, { credit: 10_000_000 });
  accountId = user.accountId;
  api = new Client(gw.url, (await newToken(user.client)).key);
  other = new Client(gw.url, (await newToken((await newUser(admin, { credit: 1_000_000 })).client)).key);
});
afterAll(() => gw.close());

async function waitForArt(client: Client, id: string) {
  return eventually(
    async () => {
      const r = await client.get(`/art/task/${id}/fetch`);
      if (r.status !== 200) throw new Error(`fetch answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.status === 'SUCCESS' || r.body.status === 'FAILURE' ? r.body : undefined;
    },
    15_000,
    30,
  );
}

/** The head once settlement of finished tasks has been appended (so only a refusal could move it). */
async function settledHead(): Promise<bigint> {
  await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
  return gw.gateway.deps.events.headPosition();
}

async function submitted(client: Client, kind: string, body: unknown): Promise<string> {
  const r = await client.post(`/art/submit/${kind}`, body);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(r.body).toEqual({ code: 1, description: 'Submit success', result: expect.stringMatching(/^task_/), properties: {} });
  return r.body.result;
}

async function png(url: string) {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/png');
  return Buffer.from(await res.arrayBuffer());
}
const firstPixel = (bytes: Buffer) => [...PNG.sync.read(bytes).data.subarray(0, 3)];

async function finishedImagine(prompt = 'a castle') {
  const id = await submitted(api, 'imagine', { prompt });
  const done = await waitForArt(api, id);
  expect(done.status).toBe('SUCCESS');
  return done;
}

describe('art actions to SUCCESS (spec 2.7, 3.5, 4.14)', () => {
  it('IMAGINE: a 2x2 grid plus four images, the 2.7 record filled in', async () => {
    const id = await submitted(api, 'imagine', {
      prompt: 'a castle at dawn',
      base64Array: [IMG],
      state: 'my-state',
      notifyHook: 'https://hooks.example.com/art',
    });
    const first = await api.get(`/art/task/${id}/fetch`);
    expect(first.status).toBe(200);
    expect(first.body.progress).toMatch(/^\d+%$/);
    const done = await waitForArt(api, id);
    expect(done).toMatchObject({
      id,
      action: 'IMAGINE',
      prompt: 'a castle at dawn',
      description: '/imagine a castle at dawn',
      state: 'my-state',
      status: 'SUCCESS',
      progress: '100%',
      failReason: '',
      quota: '25000',
      width: 1024,
      height: 1024,
    });
    expect(done.imageUrl).toBe(done.cdnImage);
    expect(done.images).toHaveLength(4);
    expect(done.components).toEqual(expect.arrayContaining(['UPSCALE:1', 'VARIATION:4', 'REROLL']));
    expect(Number.isInteger(done.seed)).toBe(true);
    expect(done.submitTime).toBeGreaterThan(1e12);
    expect(done.startTime).toBeGreaterThanOrEqual(done.submitTime);
    expect(done.finishTime).toBeGreaterThanOrEqual(done.startTime);
    expect(done.assetsExpireAt).toBeGreaterThan(done.finishTime / 1000);
    expect(done.assetRetentionNotice).toMatch(/2 hours/);
    expect(pngSize(await png(done.imageUrl))).toEqual({ width: 1024, height: 1024 });
    for (const url of done.images) expect(pngSize(await png(url))).toEqual({ width: 512, height: 512 });
    const [submittedEvent] = await gw.gateway.deps.events.readStream(`task-${id}`, { maxCount: 1 });
    expect(submittedEvent!.data).toMatchObject({ model: 'art_imagine', callbackUrl: 'https://hooks.example.com/art' });
  });

  it('a slow task is IN_PROGRESS with a rising percentage', async () => {
    const id = await submitted(api, 'imagine', { prompt: 'slowly [sim:slow]' });
    const seen: string[] = [];
    for (let i = 0; i < 300; i++) {
      const r = await api.get(`/art/task/${id}/fetch`);
      if (r.body.status === 'IN_PROGRESS' && seen.at(-1) !== r.body.progress) seen.push(r.body.progress);
      if (r.body.status === 'SUCCESS') break;
      await new Promise((res) => setTimeout(res, 15));
    }
    const values = seen.map((p) => Number.parseInt(p, 10));
    expect(values.length).toBeGreaterThan(1);
    expect(values).toEqual([...values].sort((a, b) => a - b));
  });

  it('DESCRIBE: four prompts in prompt, no images', async () => {
    const id = await submitted(api, 'describe', { base64: IMG });
    const done = await waitForArt(api, id);
    expect(done).toMatchObject({
      action: 'DESCRIBE',
      status: 'SUCCESS',
      progress: '100%',
      imageUrl: '',
      images: [],
      components: [],
      quota: '5000',
      description: '/describe',
    });
    expect(done.prompt.split('\n\n')).toHaveLength(4);
  });

  it('BLEND: a grid in the requested dimensions', async () => {
    const id = await submitted(api, 'blend', { base64Array: [IMG, IMG2], dimensions: 'PORTRAIT' });
    const done = await waitForArt(api, id);
    expect(done).toMatchObject({ action: 'BLEND', status: 'SUCCESS', width: 896, height: 1344 });
    expect(done.images).toHaveLength(4);
    expect(pngSize(await png(done.imageUrl))).toEqual({ width: 896, height: 1344 });
  });

  it('CHANGE UPSCALE of a finished IMAGINE: one image in the colour of the chosen quadrant', async () => {
    const grid = await finishedImagine();
    const id = await submitted(api, 'change', { taskId: grid.id, action: 'UPSCALE', index: 3 });
    const done = await waitForArt(api, id);
    expect(done).toMatchObject({ action: 'UPSCALE', status: 'SUCCESS', prompt: grid.prompt, description: `/upscale U3 of ${grid.id}`, components: [] });
    expect(done.images).toEqual([done.imageUrl]);
    const upscaled = await png(done.imageUrl);
    expect(pngSize(upscaled)).toEqual({ width: 1024, height: 1024 });
    expect(firstPixel(upscaled)).toEqual(firstPixel(await png(grid.images[2])));
  });

  it.each(['VARIATION', 'REROLL'])('CHANGE %s of a finished IMAGINE: a new grid', async (action) => {
    const grid = await finishedImagine();
    const id = await submitted(api, 'change', { taskId: grid.id, action, ...(action === 'VARIATION' ? { index: 1 } : {}) });
    const done = await waitForArt(api, id);
    expect(done).toMatchObject({ action, status: 'SUCCESS' });
    expect(done.images).toHaveLength(4);
    expect(done.components).toContain('UPSCALE:1');
  });
});

describe('art refusals append nothing', () => {
  const refused: [string, string, unknown, string][] = [
    ['imagine without prompt', 'imagine', {}, 'prompt'],
    ['imagine reference not a data URI', 'imagine', { prompt: 'x', base64Array: ['https://a.example/1.png'] }, 'base64Array'],
    ['imagine six references', 'imagine', { prompt: 'x', base64Array: Array(6).fill(IMG) }, 'base64Array'],
    ['imagine bad notifyHook', 'imagine', { prompt: 'x', notifyHook: 'javascript:alert(1)' }, 'notifyHook'],
    ['describe without image', 'describe', {}, 'base64'],
    ['blend one image', 'blend', { base64Array: [IMG] }, 'base64Array'],
    ['blend six images', 'blend', { base64Array: Array(6).fill(IMG) }, 'base64Array'],
    ['blend bad dimensions', 'blend', { base64Array: [IMG, IMG2], dimensions: 'WIDE' }, 'dimensions'],
    ['change without taskId', 'change', { action: 'UPSCALE', index: 1 }, 'taskId'],
    ['change bad action', 'change', { taskId: 'task_x', action: 'ZOOM', index: 1 }, 'action'],
    ['change index 5', 'change', { taskId: 'task_x', action: 'UPSCALE', index: 5 }, 'index'],
    ['change upscale without index', 'change', { taskId: 'task_x', action: 'UPSCALE' }, 'index'],
    ['change reroll with index', 'change', { taskId: 'task_x', action: 'REROLL', index: 1 }, 'index'],
    ['change a missing task', 'change', { taskId: 'task_doesnotexist0000', action: 'UPSCALE', index: 1 }, 'taskId'],
  ];

  it.each(refused)('%s → 400 {code: 4} naming the field', async (_name, kind, body, field) => {
    const head = await settledHead();
    const r = await api.post(`/art/submit/${kind}`, body);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe(4);
    expect(r.body.result).toBeNull();
    expect(r.body.description.startsWith(`${field}:`), r.body.description).toBe(true);
    await expectNothingAppendedSince(gw, head, r);
  });

  /** Nothing appended: the head stays put (or, while a task runs, no reservation was made). */
  async function refusedChange(client: Client, taskId: string, pattern: RegExp, background = false) {
    const head = await settledHead();
    const before = await gw.gateway.deps.events.readStream(`account-${accountId}`);
    const r = await client.post('/art/submit/change', { taskId, action: 'UPSCALE', index: 1 });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 4, result: null });
    expect(r.body.description).toMatch(pattern);
    if (background) expect((await gw.gateway.deps.events.readStream(`account-${accountId}`)).length).toBe(before.length);
    else await expectNothingAppendedSince(gw, head, r);
  }

  it('CHANGE of an unfinished task is refused', async () => {
    const id = await submitted(api, 'imagine', { prompt: 'not yet [sim:slow]' });
    await refusedChange(api, id, /^taskId: .*not finished/, true);
    await waitForArt(api, id);
  });

  it("CHANGE of another account's task is refused like a missing one", async () => {
    const grid = await finishedImagine();
    await refusedChange(other, grid.id, /^taskId: task_no_found$/);
  });

  it('CHANGE of a DESCRIBE or a failed task is refused', async () => {
    const described = await submitted(api, 'describe', { base64: IMG });
    await waitForArt(api, described);
    await refusedChange(api, described, /^taskId: a DESCRIBE result cannot be changed/);
    const failed = await submitted(api, 'imagine', { prompt: 'doomed [sim:fail]' });
    await waitForArt(api, failed);
    await refusedChange(api, failed, /^taskId: the task failed/);
  });

  it('a submit without a key is refused in the art shape', async () => {
    const r = await new Client(gw.url).post('/art/submit/imagine', { prompt: 'x' });
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ code: 4, result: null });
  });
});

describe('art failures, access and billing', () => {
  it('[sim:fail] ends FAILURE with failReason and the reservation is released', async () => {
    const id = await submitted(api, 'imagine', { prompt: 'doomed [sim:fail]' });
    const done = await waitForArt(api, id);
    expect(done).toMatchObject({ status: 'FAILURE', images: [], imageUrl: '', quota: '0' });
    expect(done.failReason).toMatch(/upstream_failed/);
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    const events = await gw.gateway.deps.events.readStream(`account-${accountId}`);
    expect(events.find((e) => e.type === 'QuotaReleased' && (e.data as { taskId: string }).taskId === id)).toBeDefined();
    expect(events.find((e) => e.type === 'QuotaSettled' && (e.data as { taskId: string }).taskId === id)).toBeUndefined();
    // After the release is projected the record still shows that nothing was charged.
    await gw.gateway.deps.runner.waitFor(await gw.gateway.deps.events.headPosition());
    expect((await api.get(`/art/task/${id}/fetch`)).body.quota).toBe('0');
  });

  it('quota shows the amount charged once the task is settled', async () => {
    const grid = await finishedImagine('charged');
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    await gw.gateway.deps.runner.waitFor(await gw.gateway.deps.events.headPosition());
    const settled = (await gw.gateway.deps.events.readStream(`account-${accountId}`)).find(
      (e) => e.type === 'QuotaSettled' && (e.data as { taskId: string }).taskId === grid.id,
    );
    expect((await api.get(`/art/task/${grid.id}/fetch`)).body.quota).toBe(String((settled!.data as { charged: number }).charged));
  });

  it("another account's task and a missing one: HTTP 404 {code: 4, description: task_no_found}", async () => {
    const grid = await finishedImagine('private');
    const theirs = await other.get(`/art/task/${grid.id}/fetch`);
    const missing = await other.get('/art/task/task_doesnotexist0000/fetch');
    for (const r of [theirs, missing]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ code: 4, description: 'task_no_found', result: null });
    }
  });

  it('an Idempotency-Key replay answers the same job and charges once', async () => {
    const key = { 'idempotency-key': `art-${Date.now()}` };
    const first = await api.post('/art/submit/imagine', { prompt: 'once' }, key);
    const again = await api.post('/art/submit/imagine', { prompt: 'once' }, key);
    expect(again.body).toEqual(first.body);
    const other = await api.post('/art/submit/imagine', { prompt: 'twice' }, key);
    expect(other.status).toBe(409);
    expect(other.body.code).toBe(4);
    await waitForArt(api, first.body.result);
  });

  it('each action is charged its own model per request in the ledger', async () => {
    const grid = await finishedImagine('billing');
    const ids = {
      art_imagine: grid.id,
      art_describe: await submitted(api, 'describe', { base64: IMG }),
      art_blend: await submitted(api, 'blend', { base64Array: [IMG, IMG2] }),
      art_change: await submitted(api, 'change', { taskId: grid.id, action: 'REROLL' }),
    };
    for (const id of Object.values(ids)) await waitForArt(api, id);
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    await gw.gateway.deps.runner.waitFor(await gw.gateway.deps.events.headPosition());
    const ledger = (await gw.gateway.deps.views.find<LedgerEntry>('ledger', { accountId }, { limit: 100_000 })).map((l) => l.doc);
    const prices = { art_imagine: 25_000, art_describe: 5_000, art_blend: 25_000, art_change: 25_000 };
    for (const [model, id] of Object.entries(ids)) {
      const settled = ledger.find((l) => l.type === 'QuotaSettled' && l.taskId === id);
      expect(settled, model).toMatchObject({ amount: prices[model as keyof typeof prices], basis: { model, unit: 'request', units: 1 } });
    }
  });

  it('after every task ends the books balance', async () => {
    await gw.gateway.engine.settler.caughtUp(await gw.gateway.deps.events.headPosition());
    const { charged } = await expectBooksBalance(gw, accountId);
    expect(charged).toBeGreaterThan(0);
    expect(await expectEachReservationClosedOnce(gw, accountId)).toBeGreaterThan(10);
  });
});
