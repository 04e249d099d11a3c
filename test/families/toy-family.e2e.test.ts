/**
 * Step 9 of docs/adding-a-family.md over HTTP, for a toy family written from its steps 1 to 8,
 * one file per step (test/support/toy-family/: catalog, schema, request, upstream, view, routes,
 * index, and its simulator). The gateway takes it with `extraFamilies` and
 * `extraSimulatorFamilies` instead of the two index lines, and it is used over loopback HTTP like
 * any family: a funded key submits, a bad body is refused naming the field in the family's error
 * shape, the query route is polled until the simulated upstream finishes, the answer holds the
 * re-hosted sketches, and the account is charged exactly the catalog price. The routes and the
 * body are in /openapi.json.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectBooksBalance } from '../support/billing.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE, pngSize } from '../support/images.js';
import { TOY_PRICES } from '../support/toy-family/catalog.js';
import { toyFamily } from '../support/toy-family/index.js';
import { TOY_PATH } from '../support/toy-family/routes.js';
import { toySimFamily } from '../support/toy-family/simulator.js';
import { download, nothingReserved, pollUntil, refusedWithoutAppend, submittedOf } from '../support/videos.js';

const CREDIT = 1_000_000;
let gw: TestGateway;
let admin: Client;
let session: Client;
let api: Client;
let accountId: string;

beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE, { extraFamilies: [toyFamily], extraSimulatorFamilies: [toySimFamily] });
  admin = await adminClient(gw);
  const user = await newUser(admin, { credit: CREDIT });
  session = user.client;
  accountId = user.accountId;
  api = new Client(gw.url, (await newToken(session)).key);
});
afterAll(() => gw?.close());

const finished = (body: any) => body.status === 'done' || body.status === 'failed';

describe('a toy family added from docs/adding-a-family.md', () => {
  it('submits with a funded key, polls until the simulated upstream is done, and answers the sketches', async () => {
    const submitted = await api.post(TOY_PATH, { model: 'toy-sketch-hd', prompt: 'a lighthouse at dusk', n: 2, style: 'ink' });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    expect(submitted.body).toEqual({
      id: expect.stringMatching(/^task_/),
      object: 'toy.sketch',
      model: 'toy-sketch-hd',
      status: 'queued',
      progress: 0,
      created_at: expect.any(Number),
      sketches: [],
      charged: 0,
    });
    const id: string = submitted.body.id;
    // The plan's upstream body, defaults applied, is what the task recorded and sent.
    expect((await submittedOf(gw, id)).request).toEqual({ model: 'toy-sketch-hd', prompt: 'a lighthouse at dusk', n: 2, style: 'ink' });

    const done = await pollUntil(api, `${TOY_PATH}/${id}`, finished);
    const price = 2 * TOY_PRICES['toy-sketch-hd'];
    expect(done).toEqual({
      ...submitted.body,
      status: 'done',
      progress: 100,
      sketches: [{ url: expect.any(String) }, { url: expect.any(String) }],
      charged: price,
    });
    for (const sketch of done.sketches) {
      expect(sketch.url).toMatch(new RegExp(`^${gw.url}/assets/`));
      const file = await download(sketch.url);
      expect(file.status).toBe(200);
      expect(file.headers.get('content-type')).toBe('image/png');
      expect(pngSize(file.bytes)).toEqual({ width: 128, height: 128 });
    }
  });

  it('charges exactly the catalog price: the ledger settles it and the balance drops by it', async () => {
    const before = (await session.get('/api/user/self')).body.data.balance as number;
    const r = await api.post(TOY_PATH, { model: 'toy-sketch', prompt: 'three kites', n: 3 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id: string = r.body.id;
    const done = await pollUntil(api, `${TOY_PATH}/${id}`, finished);
    const price = 3 * TOY_PRICES['toy-sketch'];
    expect(done).toMatchObject({ status: 'done', charged: price });
    expect(done.sketches).toHaveLength(3);

    const settled = await eventually(async () => {
      const ledger = await session.get(`/api/billing/ledger?task_id=${id}`);
      return ledger.body.data.items.find((e: { type: string }) => e.type === 'QuotaSettled');
    });
    expect(settled).toMatchObject({
      model: 'toy-sketch',
      amount: price,
      balance_delta: -price,
      basis: { unit: 'image', unitPrice: TOY_PRICES['toy-sketch'], units: 3 },
    });
    const ledger = await session.get(`/api/billing/ledger?task_id=${id}`);
    expect(ledger.body.data.items.map((e: { type: string }) => e.type).sort()).toEqual(['QuotaReserved', 'QuotaSettled']);
    const after = await eventually(async () => {
      const self = await session.get('/api/user/self');
      return self.body.data.reserved_quota === 0 ? (self.body.data.balance as number) : undefined;
    });
    expect(before - after).toBe(price);
  });

  const refusals: [string, Record<string, unknown>, string, RegExp][] = [
    ['no model (schema)', { prompt: 'x' }, 'model', /^model: required, one of toy-sketch, toy-sketch-hd$/],
    ['n out of range (schema)', { model: 'toy-sketch', prompt: 'x', n: 9 }, 'n', /^n: must be an integer from 1 to 4$/],
    ['unknown style (schema)', { model: 'toy-sketch', prompt: 'x', style: 'oil' }, 'style', /^style: must be one of pencil, ink, crayon$/],
    ['too many sketches for the model (the plan)', { model: 'toy-sketch-hd', prompt: 'x', n: 3 }, 'n', /^n: toy-sketch-hd draws at most 2 sketches, got 3$/],
  ];

  it.each(refusals)('refuses %s naming the field, in the plain shape, appending nothing', async (_name, body, param, message) => {
    const r = await refusedWithoutAppend(gw, () => api.post(TOY_PATH, body));
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      code: 'invalid_request',
      message: expect.stringMatching(message),
      error: { message: r.body.message, type: 'invalid_request_error', param, code: 'invalid_request' },
    });
  });

  it("answers another account's task exactly like a missing one (404)", async () => {
    const r = await api.post(TOY_PATH, { model: 'toy-sketch', prompt: 'private' });
    const stranger = await newUser(admin, { credit: CREDIT });
    const other = { api: new Client(gw.url, (await newToken(stranger.client)).key) };
    const theirs = await other.api.get(`${TOY_PATH}/${r.body.id}`);
    const missing = await other.api.get(`${TOY_PATH}/task_doesnotexist000000000`);
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(theirs.body.error.code).toBe('task_not_exist');
    expect(Object.keys(theirs.body)).toEqual(Object.keys(missing.body));
    await pollUntil(api, `${TOY_PATH}/${r.body.id}`, finished);
  });

  it('shows its routes and body schema in /openapi.json', async () => {
    const doc = (await (await fetch(`${gw.url}/openapi.json`)).json()) as any;
    const submit = doc.paths[TOY_PATH]?.post;
    expect(submit).toMatchObject({ tags: ['toy'], summary: 'Submit a toy sketch task', security: [{ bearer: [] }] });
    const body = submit.requestBody.content['application/json'].schema;
    expect(Object.keys(body.properties)).toEqual(['model', 'prompt', 'n', 'style', 'callback_url']);
    expect(body.required).toEqual(['model', 'prompt']);
    expect(body.properties.model.enum).toEqual(['toy-sketch', 'toy-sketch-hd']);
    expect(body.properties.n).toMatchObject({ minimum: 1, maximum: 4 });
    const query = doc.paths[`${TOY_PATH}/{task_id}`]?.get;
    expect(query).toMatchObject({ tags: ['toy'], summary: 'Query a toy sketch task' });
    expect(Object.keys(query.responses['200'].content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['id', 'status', 'sketches', 'charged']),
    );
  });

  it('after every task ends the books balance', async () => {
    await nothingReserved(gw, accountId);
    await expectBooksBalance(gw, accountId);
  });
});
