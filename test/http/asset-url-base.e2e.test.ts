/**
 * Result URLs are signed where they are read, by the instance that answers (DESIGN.md §8):
 * events and views keep asset keys, and every answer — query routes, synchronous answers,
 * callback bodies — carries URLs on the answering instance's PUBLIC_BASE_URL (or its listen
 * address). Black-box: gateways started one after the other on the same data directory with
 * different bases answer the same finished tasks each on its own base, and the URLs download.
 * Stores written by earlier versions (TaskSucceeded with the URL its re-hosting instance
 * signed, views holding such URLs) answer the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { EventDataOf } from '../../src/domain/events.js';
import { createAssetSigner } from '../../src/engine/media/assets.js';
import type { EventStore, NewEvent } from '../../src/ports/event-store.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { expectPng, FAST_ENGINE, waitForImageTask } from '../support/images.js';
import { startReceiver } from '../support/receiver.js';
import { tempDir } from '../support/tmp.js';
import { freePort } from '../support/child-gateway.js';
import { withOverrides } from '../support/event-store-overrides.js';
import { pollUntil } from '../support/videos.js';

const SECRET = 'shared-asset-signing-secret-for-tests';
const ENV = { ...FAST_ENGINE, ASSET_SIGNING_SECRET: SECRET, ALLOW_LOOPBACK_OUTBOUND: '1', CALLBACK_CHECK_MS: '50' };
/** Where an earlier version's worker signed its URLs: its own loopback, unreachable for clients. */
const WORKER_LOOPBACK = 'http://127.0.0.1:3000';

/** A gateway on `dataDir` whose PUBLIC_BASE_URL is `http://<host>:<its port>`: reachable, and told apart by host and port. */
async function startOn(dataDir: string, host: 'localhost' | '127.0.0.1', env: Record<string, string> = {}, wrap?: (s: EventStore) => EventStore) {
  const port = await freePort();
  const base = `http://${host}:${port}`;
  const gw = await startGateway({ ...ENV, PORT: String(port), PUBLIC_BASE_URL: base, ...env }, { dataDir, ...(wrap ? { wrapEventStore: wrap } : {}) });
  return { gw, base };
}

/** An asset URL's parts: where it points, which file, until when. */
function partsOf(url: string) {
  const u = new URL(url);
  return { origin: u.origin, path: u.pathname, exp: u.searchParams.get('exp'), sig: u.searchParams.get('sig') };
}

async function download(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status, url).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

interface Finished {
  key: string;
  image: string;
  pro: string;
  video: string;
  sync: string;
  /** The first answers, on the first instance's base. */
  first: { image: string; pro: string; video: string; callback: string; sync: string };
}

/** One finished task of each kind of view: async image (URL), pro-image (Base64), vidgen (with a callback), a synchronous std-image call. */
async function finishTasks(gw: TestGateway, receiverUrl: string, received: () => string[]): Promise<Finished> {
  const user = await newUser(await adminClient(gw), { credit: 100_000_000 });
  const { key } = await newToken(user.client);
  const api = new Client(gw.url, key);
  const image = (await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'a fox', n: 1, size: '832x1216' })).body
    .id as string;
  const pro = (await api.post('/v1/images/async/generations', { model: 'pro-image', prompt: 'a lighthouse', n: 1, size: '1024x1024' })).body.id as string;
  const submitted = await api.post('/v1/video/generations', {
    model: 'vendor-vidgen-2-5-260628',
    prompt: 'a boat',
    metadata: { callback_url: receiverUrl, resolution: '480p' },
  });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  const video = submitted.body.id as string;
  const call = await api.post('/v1/images/generations', { model: 'std-image', prompt: 'a kite', size: '1024x1024' });
  expect(call.status, JSON.stringify(call.body)).toBe(200);
  const sync = call.headers.get('x-task-id')!;
  const imageBody = await waitForImageTask(api, image);
  const proBody = await waitForImageTask(api, pro);
  const videoBody = await pollUntil(api, `/v1/video/generations/${video}`, (b) => b.data.status === 'SUCCESS' || b.data.status === 'FAILURE');
  const callback = await eventually(
    async () =>
      received()
        .map((b) => JSON.parse(b))
        .find((b) => b.data?.task_id === video),
    15_000,
  );
  return {
    key,
    image,
    pro,
    video,
    sync,
    first: {
      image: imageBody.data[0].url,
      pro: proBody.data[0].b64_json,
      video: videoBody.data.result_url,
      callback: callback.data.result_url,
      sync: call.body.data[0].url,
    },
  };
}

/** What an instance answers for the finished tasks now. */
async function answersOf(gw: TestGateway, done: Finished) {
  const api = new Client(gw.url, done.key);
  const get = async (path: string) => {
    const r = await api.get(path);
    expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
    return r.body;
  };
  return {
    image: (await get(`/v1/images/async/generations/${done.image}`)).data[0].url as string,
    pro: (await get(`/v1/images/async/generations/${done.pro}`)).data[0] as { url?: string; b64_json?: string },
    video: (await get(`/v1/video/generations/${done.video}`)).data.result_url as string,
    sync: (await get(`/v1/images/generations/${done.sync}`)).data[0].url as string,
  };
}

describe('result URLs are signed by the instance that answers', () => {
  const dir = tempDir();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let done: Finished;
  let firstBase: string;
  const bytes = new Map<string, Buffer>();

  beforeAll(async () => {
    receiver = await startReceiver(() => 200);
    const { gw, base } = await startOn(dir.path, 'localhost');
    firstBase = base;
    try {
      done = await finishTasks(gw, receiver.url, () => receiver.received.map((r) => r.body));
      for (const [name, url] of Object.entries({ image: done.first.image, video: done.first.video, sync: done.first.sync }))
        bytes.set(name, await download(url));
    } finally {
      await gw.close();
    }
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    dir.remove();
  });

  it('the first instance answered, and called back, with URLs on its PUBLIC_BASE_URL; Base64 stays Base64', () => {
    for (const url of [done.first.image, done.first.video, done.first.callback, done.first.sync]) expect(partsOf(url).origin).toBe(firstBase);
    expect(partsOf(done.first.image).path).toBe(`/assets/tasks/${done.image}/0.png`);
    expect(partsOf(done.first.callback).path).toBe(partsOf(done.first.video).path);
    expectPng(bytes.get('image')!);
    expectPng(Buffer.from(done.first.pro, 'base64'));
  });

  it('the events keep keys and how they are delivered, never a URL', async () => {
    const { gw } = await startOn(dir.path, '127.0.0.1');
    try {
      for (const id of [done.image, done.pro, done.video, done.sync]) {
        const succeeded = (await gw.gateway.deps.events.readStream(`task-${id}`)).find((e) => e.type === 'TaskSucceeded')!;
        const { results } = succeeded.data as EventDataOf<'TaskSucceeded'>;
        expect(results.length).toBeGreaterThan(0);
        for (const r of results) {
          expect(r.url).toBeUndefined();
          expect(r.assetKey).toMatch(new RegExp(`^tasks/${id}/0\\.`));
          expect(r.delivery).toBe(id === done.pro ? 'b64' : 'url');
        }
      }
    } finally {
      await gw.close();
    }
  });

  it('another instance with another PUBLIC_BASE_URL on the same data answers the same tasks on its own base, and the URLs download', async () => {
    const { gw, base } = await startOn(dir.path, '127.0.0.1');
    try {
      expect(base).not.toBe(firstBase);
      const now = await answersOf(gw, done);
      for (const [name, url] of Object.entries({ image: now.image, video: now.video, sync: now.sync })) {
        const first = partsOf(done.first[name as 'image' | 'video' | 'sync']);
        expect(partsOf(url)).toMatchObject({ origin: base, path: first.path, exp: first.exp, sig: first.sig });
        expect((await download(url)).equals(bytes.get(name)!)).toBe(true);
      }
      expect(now.pro).toMatchObject({ b64_json: done.first.pro });
      expect(now.pro.url).toBeUndefined();
    } finally {
      await gw.close();
    }
  });

  it('an api-role instance signs with its PUBLIC_BASE_URL, or without one with its listen address', async () => {
    const withBase = await startOn(dir.path, 'localhost', { ROLE: 'api' });
    try {
      expect(withBase.gw.config.role).toBe('api');
      const now = await answersOf(withBase.gw, done);
      expect(partsOf(now.image).origin).toBe(withBase.base);
      expect((await download(now.image)).equals(bytes.get('image')!)).toBe(true);
    } finally {
      await withBase.gw.close();
    }
    const listening = await startGateway({ ...ENV, ROLE: 'api' }, { dataDir: dir.path });
    try {
      expect(listening.config.publicBaseUrl).toBeUndefined();
      const now = await answersOf(listening, done);
      expect(partsOf(now.video).origin).toBe(listening.url);
      expect((await download(now.video)).equals(bytes.get('video')!)).toBe(true);
    } finally {
      await listening.close();
    }
  });
});

describe('the URL a worker signs', () => {
  it('configuration refuses ROLE=worker without PUBLIC_BASE_URL, naming it', () => {
    // (A split worker or projector also needs KAFKA_BROKERS: test/reliability/role-bus.e2e.test.ts.)
    const KAFKA_BROKERS = '127.0.0.1:9092';
    expect(() => loadConfig({ ROLE: 'worker', KAFKA_BROKERS })).toThrow(/^invalid configuration: PUBLIC_BASE_URL: required when ROLE=worker/);
    expect(loadConfig({ ROLE: 'worker', PUBLIC_BASE_URL: 'http://localhost:3001', KAFKA_BROKERS })).toMatchObject({
      role: 'worker',
      publicBaseUrl: 'http://localhost:3001',
    });
    // The other roles keep the listen address as their default.
    for (const ROLE of ['all', 'api', 'projector']) expect(loadConfig({ ROLE, KAFKA_BROKERS }).publicBaseUrl).toBeUndefined();
  });
});

/**
 * What an earlier version appended: TaskSucceeded items with the URL the re-hosting instance
 * signed on its own base (a worker's loopback) and no `delivery`.
 */
function asEarlierVersion(store: EventStore): EventStore {
  const signer = createAssetSigner(SECRET, () => WORKER_LOOPBACK);
  const old = (e: NewEvent): NewEvent => {
    if (e.type !== 'TaskSucceeded') return e;
    const data = e.data as EventDataOf<'TaskSucceeded'>;
    const results = data.results.map(({ delivery, ...item }) =>
      delivery === 'url' && item.assetKey ? { ...item, url: signer.url(item.assetKey, data.assetsExpireAt) } : item,
    );
    return { ...e, data: { ...data, results } };
  };
  return withOverrides(store, { append: (stream, events, options) => store.append(stream, events.map(old), options) });
}

describe('stores written by earlier versions', () => {
  const dir = tempDir();
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let done: Finished;
  const bytes = new Map<string, Buffer>();

  beforeAll(async () => {
    receiver = await startReceiver(() => 200);
    const { gw } = await startOn(dir.path, 'localhost', {}, asEarlierVersion);
    try {
      done = await finishTasks(gw, receiver.url, () => receiver.received.map((r) => r.body));
      bytes.set('image', await download(done.first.image));
    } finally {
      await gw.close();
    }
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    dir.remove();
  });

  it("a TaskSucceeded that carries `url` answers on the reader's base, Base64 as Base64, and the URL downloads", async () => {
    const { gw, base } = await startOn(dir.path, '127.0.0.1');
    try {
      const stored = (await gw.gateway.deps.events.readStream(`task-${done.image}`)).find((e) => e.type === 'TaskSucceeded')!;
      const item = (stored.data as EventDataOf<'TaskSucceeded'>).results[0]!;
      expect(item.delivery).toBeUndefined();
      expect(partsOf(item.url!).origin).toBe(WORKER_LOOPBACK);
      const now = await answersOf(gw, done);
      for (const url of [now.image, now.video, now.sync]) expect(partsOf(url).origin).toBe(base);
      expect(partsOf(now.image).path).toBe(partsOf(item.url!).path);
      expect((await download(now.image)).equals(bytes.get('image')!)).toBe(true);
      expect(now.pro).toMatchObject({ b64_json: done.first.pro });
      expect(now.pro.url).toBeUndefined();
    } finally {
      await gw.close();
    }
  });

  it("a view document holding such a URL is answered on the reader's base; a URL not signed by the gateway is left as it is", async () => {
    const { gw, base } = await startOn(dir.path, '127.0.0.1');
    try {
      const views = gw.gateway.deps.views;
      const stored = (await views.get<{ body: { data: { url?: string }[] } }>('image-tasks', done.image))!;
      const signer = createAssetSigner(SECRET, () => WORKER_LOOPBACK);
      const path = `tasks/${done.image}/0.png`;
      const exp = Number(partsOf(done.first.image).exp);
      // As the earlier projection wrote it: the URL from the event, then one whose signature is not the gateway's.
      const data = [{ url: signer.url(path, exp) }, { url: `${WORKER_LOOPBACK}/assets/${path}?exp=${exp}&sig=forged` }];
      await views.commit(
        'image-tasks',
        [{ view: 'image-tasks', id: done.image, position: stored.position + 1n, doc: { ...stored.doc, body: { ...stored.doc.body, data } } }],
        undefined,
      );
      const body = (await new Client(gw.url, done.key).get(`/v1/images/async/generations/${done.image}`)).body;
      expect(partsOf(body.data[0].url)).toMatchObject({ origin: base, path: `/assets/${path}`, exp: String(exp) });
      expect((await download(body.data[0].url)).equals(bytes.get('image')!)).toBe(true);
      expect(body.data[1].url).toBe(data[1]!.url);
    } finally {
      await gw.close();
    }
  });
});
