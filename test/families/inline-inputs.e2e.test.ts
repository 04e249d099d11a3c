/**
 * Large inline inputs go to the asset store and the events keep references (issue 14, item 3),
 * on the assembled gateway: art BLEND / DESCRIBE with photo-sized images and an async
 * image-to-image with a 2 MiB data URI succeed end to end, their TaskSubmitted stays small,
 * the upstream (the simulator, behind a recording pass-through) receives the images exactly as
 * sent, and the inputs are deleted once the task has ended. A refused submit leaves no input
 * behind and charges nothing, also when the store itself refuses the append (413, never 500).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputKeysOf } from '../../src/engine/media/inline-inputs.js';
import { appendSize, EventTooLargeError, MAX_APPEND_BYTES, type EventStore, type RecordedEvent } from '../../src/ports/event-store.js';
import { adminClient, Client, eventually, expectNothingAppendedSince, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { FAST_ENGINE, waitForImageTask } from '../support/images.js';
import { RECORDING_BASE, recordingUpstream } from '../support/recording-upstream.js';
import { withOverrides } from '../support/event-store-overrides.js';

const MiB = 1024 * 1024;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** A photo-sized image: incompressible bytes behind a PNG signature, as a data URI. */
function photo(bytes: number): string {
  const b = randomBytes(bytes);
  PNG_SIGNATURE.copy(b);
  return `data:image/png;base64,${b.toString('base64')}`;
}

const recorder = recordingUpstream();
/** The largest append the store takes: lowered in one test to stand for a server set lower. */
let storeLimit = MAX_APPEND_BYTES;
function withLimit(store: EventStore): EventStore {
  return withOverrides(store, {
    append: (stream, events, options) => {
      const size = appendSize(events);
      if (size > storeLimit) return Promise.reject(new EventTooLargeError(stream, size, storeLimit));
      return store.append(stream, events, options);
    },
  });
}

let gw: TestGateway;
let admin: Client;
let api: Client;
let session: Client;
let accountId: string;
beforeAll(async () => {
  gw = await startGateway(FAST_ENGINE, { extraRoutes: [recorder.plugin], wrapEventStore: withLimit });
  admin = await adminClient(gw);
  const user = await newUser(admin, { credit: 100_000_000 });
  ({ accountId } = user);
  session = user.client;
  api = new Client(gw.url, (await newToken(user.client)).key);
  // The simulator, reached through the recording pass-through, before the seeded channels.
  for (const [family, models] of [
    ['art', ['art_blend', 'art_describe']],
    ['images', ['anime-diffusion-4-5-full', 'pro-image']],
  ] as const) {
    const r = await admin.post('/api/channel/', { name: `recorded ${family}`, family, base_url: RECORDING_BASE, key: 'recorded', models, priority: 100 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  }
});
afterAll(() => gw.close());

async function submitted(taskId: string): Promise<RecordedEvent> {
  const [first] = await gw.gateway.deps.events.readStream(`task-${taskId}`, { maxCount: 1 });
  expect(first?.type).toBe('TaskSubmitted');
  return first!;
}

/** The recorded TaskSubmitted is small: its inline images are references. */
async function expectSmallRecord(taskId: string): Promise<Record<string, unknown>> {
  const event = await submitted(taskId);
  const size = appendSize([event]);
  expect(size).toBeLessThan(MAX_APPEND_BYTES);
  expect(size).toBeLessThan(8 * 1024);
  return (event.data as { request: Record<string, unknown> }).request;
}

/** The body the upstream received for the last submit to `path`. */
function lastUpstreamBody(path: string): Record<string, unknown> {
  const call = recorder.calls.filter((c) => c.method === 'POST' && c.path === path).at(-1);
  expect(call, `a submit to ${path}`).toBeDefined();
  return call!.body as Record<string, unknown>;
}

/** Once the task has ended its inputs are deleted (by the settler, shortly after). */
async function expectInputsDeleted(taskId: string, request: Record<string, unknown>, count: number): Promise<void> {
  const keys = inputKeysOf(taskId, request);
  expect(keys).toHaveLength(count);
  await eventually(async () => ((await Promise.all(keys.map((k) => gw.gateway.deps.assets.stat(k)))).every((s) => s === undefined) ? true : undefined), 10_000);
}

/** Every stored input file, by the embedded asset store's layout (`<DATA_DIR>/assets/objects/<key>`). */
function inputFiles(): string[] {
  const root = join(gw.dataDir, 'assets', 'objects', 'inputs');
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((name) => statSync(join(root, name)).isFile());
}

async function waitForArt(id: string) {
  return eventually(async () => {
    const r = await api.get(`/art/task/${id}/fetch`);
    return r.body?.status === 'SUCCESS' || r.body?.status === 'FAILURE' ? r.body : undefined;
  }, 20_000);
}

async function balance(): Promise<number> {
  return (await session.get('/api/user/self')).body.data.balance as number;
}

describe('large inline inputs are stored aside, events keep references', () => {
  it('art BLEND with two 2 MiB images: SUCCESS, a small TaskSubmitted, the upstream gets the images as sent', async () => {
    const images = [photo(2 * MiB), photo(2 * MiB)];
    const r = await api.post('/art/submit/blend', { base64Array: images, dimensions: 'LANDSCAPE' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const id = r.body.result as string;
    const done = await waitForArt(id);
    expect(done.status, done.failReason).toBe('SUCCESS');

    const request = await expectSmallRecord(id);
    expect(request.base64Array).toEqual([expect.stringMatching(/^asset-input:inputs\//), expect.stringMatching(/^asset-input:inputs\//)]);
    const sent = lastUpstreamBody('/art/submit/blend').base64Array as string[];
    // Compared as booleans: a mismatch of 2.8 MB strings is no readable diff.
    expect(sent.map((s, i) => s === images[i])).toEqual([true, true]);
    await expectInputsDeleted(id, request, 2);
  }, 30_000);

  it('art DESCRIBE with a 2 MiB image: SUCCESS with four prompts, the upstream gets the image', async () => {
    const image = photo(2 * MiB);
    const r = await api.post('/art/submit/describe', { base64: image });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const done = await waitForArt(r.body.result as string);
    expect(done.status, done.failReason).toBe('SUCCESS');
    expect(done.prompt).toMatch(/^1\. /);
    const request = await expectSmallRecord(r.body.result as string);
    expect(request.base64).toMatch(/^asset-input:/);
    expect(lastUpstreamBody('/art/submit/describe').base64 === image).toBe(true);
  }, 30_000);

  it('async image-to-image with a 2 MiB data URI: completed, a small TaskSubmitted, the upstream gets the image', async () => {
    const image = photo(2 * MiB);
    const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'the same, in snow', image });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const done = await waitForImageTask(api, r.body.id as string);
    expect(done.status, JSON.stringify(done.error)).toBe('completed');
    const request = await expectSmallRecord(r.body.id as string);
    expect(request.image).toMatch(/^asset-input:/);
    expect(lastUpstreamBody('/v1/images/async/generations').image === image).toBe(true);
    await expectInputsDeleted(r.body.id as string, request, 1);
  }, 30_000);
});

describe('a refused submit leaves no input behind and charges nothing', () => {
  it('refused for quota: 402 in the art shape, nothing stored, nothing appended', async () => {
    const poor = new Client(gw.url, (await newToken((await newUser(admin, { credit: 10 })).client)).key);
    const before = inputFiles();
    const head = await gw.gateway.deps.events.headPosition();
    const r = await poor.post('/art/submit/blend', { base64Array: [photo(MiB), photo(MiB)] });
    expect(r.status).toBe(402);
    expect(r.body).toMatchObject({ code: 4, result: null });
    await expectNothingAppendedSince(gw, head, r);
    expect(inputFiles().filter((f) => !before.includes(f))).toEqual([]);
  });

  it('refused by the store (a server limit below the request): 413 request_too_large, its stored input removed, the reservation released', async () => {
    // Ten small data URIs stay inline (at most 4 KiB each), the large one is stored aside; the
    // store, set to 32 KiB per append, then refuses the TaskSubmitted.
    const small = Array.from({ length: 10 }, () => `data:image/png;base64,${'A'.repeat(3960)}`);
    const before = inputFiles();
    const balanceBefore = await balance();
    storeLimit = 32 * 1024;
    let r;
    try {
      r = await api.post('/v1/images/async/generations', { model: 'pro-image', prompt: 'too much to record', images: [photo(MiB), ...small] });
    } finally {
      storeLimit = MAX_APPEND_BYTES;
    }
    expect(r.status, JSON.stringify(r.body)).toBe(413);
    expect(r.body).toMatchObject({ code: 'invalid_request', reason: 'request_too_large', error: { param: 'body', code: 'request_too_large' } });
    expect(inputFiles().filter((f) => !before.includes(f))).toEqual([]);
    expect(await balance()).toBe(balanceBefore);
    const account = await gw.gateway.deps.events.readStream(`account-${accountId}`);
    expect(account.at(-1)).toMatchObject({ type: 'QuotaReleased', data: { reason: 'submit_failed' } });
  });
});
