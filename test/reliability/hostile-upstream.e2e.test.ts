/**
 * The assembled gateway against an upstream that misbehaves on purpose (hostile-upstream.ts):
 * hanging submits and polls, headers then a body that never ends, garbage JSON, endless 5xx,
 * connections closed under a submit,
 * wrong status codes, a 1 GiB answer, 50 images for `n=1`, a 30 s video for 5 s, a result URL
 * that redirects to the cloud metadata address, a result file larger than the limit, and a big
 * one within it. Every task must end (failed, or settled) within its maximum age, never be
 * charged above what was asked for, leave nothing reserved, answer no 500, and the gateway
 * must not hold a huge body in memory.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldAccount } from '../../src/domain/account.js';
import { toDomainEvent, type RecordedDomainEvent } from '../../src/domain/recorded.js';
import { auditAccounts } from '../../src/audit/audit.js';
import { adminClient, Client, newToken, newUser, startGateway, type Reply, type TestGateway } from '../support/gateway.js';
import { BIG_RESULT_BYTES, HUGE_ANSWER_BYTES, MiB, startHostileUpstream, type HostileUpstream } from './hostile-upstream.js';
import { recordReliability } from '../support/reliability-summary.js';

/** Every family's maximum task age in this suite (TASK_MAX_AGE_SECONDS). */
const MAX_AGE_S = 5;
/** How late past its deadline a task may be seen ending (the query view, a poll interval). */
const SLACK_MS = 1_500;
const BOUND_MS = MAX_AGE_S * 1000 + SLACK_MS;
const IMAGE_MODEL = 'anime-diffusion-4-5-full';
const IMAGE_PRICE = 10_000;
const SYNC_MODEL = 'std-image';
const SYNC_PRICE = 20_000;
const VIDEO_MODEL = 'vendor-vidgen-2-5-260628';
const VIDEO_TIERS = { '480p': 2_000, '720p': 4_000, '1080p': 8_000 };
const CREDIT = 10_000_000;

let gw: TestGateway;
let upstream: HostileUpstream;
let api: Client;
let session: Client;
let accountId: string;
/** Every answer the gateway gave in this suite. */
const statuses: number[] = [];

beforeAll(async () => {
  upstream = await startHostileUpstream();
  gw = await startGateway({ SIMULATOR: '0', ALLOW_LOOPBACK_OUTBOUND: '1', TASK_MAX_AGE_SECONDS: String(MAX_AGE_S), POLL_INTERVAL_MS: '100' });
  const admin = await adminClient(gw);
  const prices = await admin.put('/api/pricing', {
    models: {
      [IMAGE_MODEL]: { unit: 'image', price: IMAGE_PRICE },
      [SYNC_MODEL]: { unit: 'image', price: SYNC_PRICE },
      [VIDEO_MODEL]: { unit: 'second', price: VIDEO_TIERS['720p'], tiers: VIDEO_TIERS },
    },
  });
  expect(prices.status, JSON.stringify(prices.body)).toBe(200);
  for (const [family, models] of [
    ['images', [IMAGE_MODEL, SYNC_MODEL]],
    ['vidgen', [VIDEO_MODEL]],
  ] as const) {
    const channel = await admin.post('/api/channel/', { name: `hostile ${family}`, family, base_url: upstream.url, key: 'hostile-key', models });
    expect(channel.status, JSON.stringify(channel.body)).toBe(200);
  }
  const user = await newUser(admin, { credit: CREDIT });
  accountId = user.accountId;
  session = user.client;
  api = new Client(gw.url, (await newToken(user.client)).key);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});

async function call<T = unknown>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<Reply<T>> {
  const reply = method === 'GET' ? await api.get<T>(path) : await api.post<T>(path, body);
  statuses.push(reply.status);
  return reply;
}

/** A streamed synchronous image call (`stream: true`): its status and the whole text of its answer. */
async function streamed(scenario: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${gw.url}/v1/images/generations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${api.bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: SYNC_MODEL, prompt: `scenario:${scenario}`, n: 1, stream: true }),
  });
  statuses.push(res.status);
  return { status: res.status, text: await res.text() };
}

/** The async image task view (spec 2.1), as far as this suite reads it. */
interface ImageTaskBody {
  id: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  error?: { code: string; message: string };
  data: Array<{ url?: string; b64_json?: string }>;
}

interface Ended {
  id: string;
  status: 'completed' | 'failed';
  /** From submit to the first query that showed the task ended. */
  elapsedMs: number;
  body: ImageTaskBody;
}

/** Submits an async image task for `scenario` and follows it until it ends. */
async function asyncImage(scenario: string, extra: Record<string, unknown> = {}): Promise<Ended> {
  const started = Date.now();
  const submitted = await call<ImageTaskBody>('POST', '/v1/images/async/generations', { model: IMAGE_MODEL, prompt: `scenario:${scenario}`, n: 1, ...extra });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  const id = submitted.body.id;
  for (;;) {
    const r = await call<ImageTaskBody>('GET', `/v1/images/async/generations/${id}`);
    expect(r.status).toBe(200);
    if (r.body.status === 'completed' || r.body.status === 'failed') return { id, status: r.body.status, elapsedMs: Date.now() - started, body: r.body };
    if (Date.now() - started > BOUND_MS + 5_000) throw new Error(`${scenario}: task ${id} still ${r.body.status} after ${Date.now() - started} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The account stream's events for one task, once the settler and the views caught up. */
async function moneyEvents(taskId: string): Promise<RecordedDomainEvent[]> {
  const { events, runner } = gw.gateway.deps;
  await gw.gateway.engine.settler.caughtUp(await events.headPosition());
  await runner.waitFor(await events.headPosition());
  const recorded = (await events.readStream(`account-${accountId}`)).map(toDomainEvent).filter((e): e is RecordedDomainEvent => e !== undefined);
  return recorded.filter((e) => 'taskId' in e.data && e.data.taskId === taskId);
}

/** A failed task's money: reserved, then released in full; nothing charged. */
async function expectReleased(taskId: string): Promise<void> {
  const types = (await moneyEvents(taskId)).map((e) => e.type);
  expect(types).toEqual(['QuotaReserved', 'QuotaReleased']);
}

/** Samples the process's resident memory while `work` runs; resolves with the peak growth. */
async function peakRssGrowth(work: () => Promise<void>): Promise<number> {
  const baseline = process.memoryUsage.rss();
  let peak = baseline;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(peak, process.memoryUsage.rss()) - baseline;
}

describe('a task ends failed by its maximum age, whatever the upstream does', () => {
  const timeouts = ['hang-submit', 'trickle-submit', 'hang-poll', 'trickle-poll', 'garbage-poll', 'error-poll', 'teapot-poll'];

  it(`hangs, never-ending bodies, garbage, endless 503 and 418 polls: failed with timeout within ${MAX_AGE_S} s`, async () => {
    const ended = await Promise.all(timeouts.map((s) => asyncImage(s)));
    ended.forEach((e, i) => {
      const scenario = timeouts[i];
      expect(e.status, scenario).toBe('failed');
      expect(e.body.error?.message, scenario).toMatch(/^timeout: no result within 5 s/);
      expect(e.elapsedMs, scenario).toBeLessThanOrEqual(BOUND_MS);
      // Not before its time either: the deadline is the maximum age (created at a whole second).
      expect(e.elapsedMs, scenario).toBeGreaterThanOrEqual((MAX_AGE_S - 1) * 1000);
    });
    for (const e of ended) await expectReleased(e.id);
  }, 30_000);

  it('garbage, 503 and a redirect on submit: failed at once (no channel left), nothing charged', async () => {
    const scenarios = ['garbage-submit', 'error-submit', 'redirect-submit'];
    const ended = await Promise.all(scenarios.map((s) => asyncImage(s)));
    ended.forEach((e, i) => {
      expect(e.status, scenarios[i]).toBe('failed');
      expect(e.body.error?.message, scenarios[i]).toMatch(/^no_channel_available: /);
      expect(e.elapsedMs, scenarios[i]).toBeLessThan((MAX_AGE_S * 1000) / 2);
    });
    for (const e of ended) await expectReleased(e.id);
  });

  it('a submit whose connection is closed under it is sent once more with the same Idempotency-Key: the task runs; closed again, it fails naming why', async () => {
    const before = new Set(upstream.submitsByKey.keys());
    const [once, always] = await Promise.all([asyncImage('reset-submit-once'), asyncImage('reset-submit')]);
    expect(once.status, JSON.stringify(once.body)).toBe('completed');
    expect(always.status).toBe('failed');
    expect(always.body.error?.message).toMatch(/^no_channel_available: upstream unreachable: other side closed/);
    // Each task's submit reached the upstream twice, with one key: the first try and the one re-send.
    const sent = [...upstream.submitsByKey].filter(([key]) => !before.has(key));
    expect(sent.map(([, n]) => n)).toEqual([2, 2]);
    expect((await moneyEvents(once.id)).map((e) => e.type)).toEqual(['QuotaReserved', 'QuotaSettled']);
    await expectReleased(always.id);
  });
});

describe('result files', () => {
  it('a result URL redirecting to the cloud metadata address fails the task at once; nothing charged', async () => {
    const e = await asyncImage('redirect-private');
    expect(e.status).toBe('failed');
    expect(e.body.error?.message).toMatch(/^result_unavailable: .*169\.254\.169\.254 is a linkLocal address/);
    expect(e.elapsedMs).toBeLessThan((MAX_AGE_S * 1000) / 2);
    expect(upstream.fileRequests).toContain('to-metadata');
    await expectReleased(e.id);
  });

  it('a result declaring more than the download limit is refused on its headers; nothing charged', async () => {
    const e = await asyncImage('declared-huge');
    expect(e.status).toBe('failed');
    expect(e.body.error?.message).toMatch(/^result_unavailable: .*629145600 bytes is over the \d+ byte limit/);
    expect(e.elapsedMs).toBeLessThan((MAX_AGE_S * 1000) / 2);
    await expectReleased(e.id);
  });

  it('50 images for n=1: one is stored and charged, the excess is recorded on the settlement', async () => {
    const before = upstream.fileRequests.length;
    const e = await asyncImage('over-deliver');
    expect(e.status).toBe('completed');
    expect(e.body.data).toHaveLength(1);
    // Only the image asked for was downloaded.
    expect(upstream.fileRequests.slice(before)).toEqual(['png-0']);
    const money = await moneyEvents(e.id);
    const settled = money.find((m) => m.type === 'QuotaSettled');
    expect(settled?.data).toMatchObject({ reserved: IMAGE_PRICE, actual: IMAGE_PRICE, charged: IMAGE_PRICE, deliveredUnits: 50, basis: { units: 1 } });
    const ledger = await session.get(`/api/billing/ledger?task_id=${e.id}`);
    const entry = ledger.body.data.items.find((i: { type: string }) => i.type === 'QuotaSettled');
    expect(entry).toMatchObject({
      balance_delta: -IMAGE_PRICE,
      delivered_units: 50,
      note: expect.stringContaining('upstream delivered 50 × image where 1 were asked for; charged for 1'),
    });
  });
});

describe('memory: nothing huge is held whole', () => {
  it(`a ${HUGE_ANSWER_BYTES / MiB} MiB poll answer is abandoned past the answer limit, and the task ends at its deadline`, async () => {
    let ended: Ended | undefined;
    const growth = await peakRssGrowth(async () => {
      ended = await asyncImage('huge-poll');
    });
    expect(ended?.status).toBe('failed');
    expect(ended?.body.error?.message).toMatch(/^timeout: /);
    expect(ended?.elapsedMs).toBeLessThanOrEqual(BOUND_MS);
    // Each answer was cut off a little past the 64 MiB answer limit (socket buffers aside).
    const largest = upstream.largestAnswer.get('huge-poll') ?? 0;
    expect(largest).toBeGreaterThan(64 * MiB);
    expect(largest).toBeLessThan(96 * MiB);
    // Reading a 200 MiB answer whole once cost +610 MiB; a cut-off read costs about its limit
    // (measured: about 110 MiB at the peak, against 1 GiB offered on every poll).
    expect(growth).toBeLessThan(256 * MiB);
    await expectReleased(ended!.id);
  }, 20_000);

  it(`a ${BIG_RESULT_BYTES / MiB} MiB result file streams into the asset store`, async () => {
    let ended: Ended | undefined;
    const growth = await peakRssGrowth(async () => {
      ended = await asyncImage('big-result');
    });
    expect(ended?.status, JSON.stringify(ended?.body)).toBe('completed');
    const asset = await fetch(ended?.body.data[0]?.url ?? 'missing', { headers: { range: 'bytes=0-7' } });
    expect(asset.status).toBe(206);
    expect(asset.headers.get('content-range')).toBe(`bytes 0-7/${BIG_RESULT_BYTES}`);
    expect(Buffer.from(await asset.arrayBuffer())).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    // Streamed: a few chunks in flight, not the file (measured: about 1 MiB).
    expect(growth).toBeLessThan(48 * MiB);
  }, 20_000);
});

describe('synchronous calls and video', () => {
  it('a sync call that hangs, or trickles its body, answers 504 within the maximum age and releases', async () => {
    const scenarios = ['sync-hang', 'sync-trickle'];
    const replies = await Promise.all(
      scenarios.map(async (s) => {
        const started = Date.now();
        const r = await call<{ code?: string }>('POST', '/v1/images/generations', { model: SYNC_MODEL, prompt: `scenario:${s}`, n: 1 });
        return { r, elapsedMs: Date.now() - started };
      }),
    );
    replies.forEach(({ r, elapsedMs }, i) => {
      expect(r.status, scenarios[i]).toBe(504);
      expect(r.body.code, scenarios[i]).toBe('upstream_timeout');
      expect(elapsedMs, scenarios[i]).toBeLessThanOrEqual(BOUND_MS);
    });
    const { events } = gw.gateway.deps;
    await gw.gateway.engine.settler.caughtUp(await events.headPosition());
    const recorded = (await events.readStream(`account-${accountId}`)).map(toDomainEvent).filter((e): e is RecordedDomainEvent => e !== undefined);
    const released = recorded.filter((e) => e.type === 'QuotaReleased' && e.data.reason === 'timeout' && e.data.amount === SYNC_PRICE);
    expect(released).toHaveLength(2);
  }, 20_000);

  it('a sync call answered with garbage or a 1 GiB body answers 502 at once and releases', async () => {
    for (const scenario of ['sync-garbage', 'sync-huge']) {
      const started = Date.now();
      const r = await call<{ code?: string }>('POST', '/v1/images/generations', { model: SYNC_MODEL, prompt: `scenario:${scenario}`, n: 1 });
      expect(r.status, scenario).toBe(502);
      expect(Date.now() - started, scenario).toBeLessThan((MAX_AGE_S * 1000) / 2);
    }
    expect(upstream.largestAnswer.get('sync-huge')).toBeLessThan(96 * MiB);
  });

  it('a streamed sync call whose connection is closed under it is sent once more with the same Idempotency-Key; an error answer that never ends is read within the limit', async () => {
    const before = new Set(upstream.submitsByKey.keys());
    const once = await streamed('stream-reset-once');
    expect(once.status, once.text).toBe(200);
    expect(once.text).toContain('event: image_generation.completed');
    const sent = [...upstream.submitsByKey].filter(([key]) => !before.has(key));
    expect(sent.map(([, n]) => n)).toEqual([2]);
    const started = Date.now();
    const huge = await streamed('stream-error-huge');
    expect(huge.status, huge.text).toBe(502);
    expect(JSON.parse(huge.text).error.message).toMatch(/over the \d+ byte limit/);
    expect(Date.now() - started).toBeLessThan((MAX_AGE_S * 1000) / 2);
    expect(upstream.largestAnswer.get('stream-error-huge')).toBeLessThan(96 * MiB);
  });

  it('a sync call answered with 50 images for n=1 returns and charges one', async () => {
    const r = await call<{ data: unknown[] }>('POST', '/v1/images/generations', {
      model: SYNC_MODEL,
      prompt: 'scenario:sync-over-deliver',
      n: 1,
      response_format: 'b64_json',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toHaveLength(1);
  });

  it('a 30 s 1080p video for 5 s at 720p: charged 5 s at the 1080p price delivered, the 30 s recorded', async () => {
    const started = Date.now();
    const submitted = await call<{ id: string }>('POST', '/v1/video/generations', {
      model: VIDEO_MODEL,
      prompt: 'scenario:video-over',
      seconds: 5,
      metadata: { resolution: '720p' },
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
    const id: string = submitted.body.id;
    let status = '';
    while (status !== 'SUCCESS' && status !== 'FAILURE') {
      expect(Date.now() - started).toBeLessThanOrEqual(BOUND_MS);
      await new Promise((r) => setTimeout(r, 50));
      status = (await call<{ data?: { status?: string } }>('GET', `/v1/video/generations/${id}`)).body.data?.status ?? '';
    }
    expect(status).toBe('SUCCESS');
    const settled = (await moneyEvents(id)).find((e) => e.type === 'QuotaSettled');
    expect(settled?.data).toMatchObject({
      reserved: 5 * VIDEO_TIERS['720p'],
      actual: 5 * VIDEO_TIERS['1080p'],
      basis: { units: 5, tier: '1080p' },
      deliveredUnits: 30,
    });
  });
});

describe('afterwards', () => {
  it('nothing stays reserved, the books replay to the views, and only what was asked for was charged', async () => {
    const { events, views, runner } = gw.gateway.deps;
    await gw.gateway.engine.settler.caughtUp(await events.headPosition());
    await runner.waitFor(await events.headPosition());
    const recorded = (await events.readStream(`account-${accountId}`)).map(toDomainEvent).filter((e): e is RecordedDomainEvent => e !== undefined);
    const state = foldAccount(recorded);
    expect(state.reserved).toBe(0);
    expect(state.openReservations.size).toBe(0);
    // over-deliver 1 image + big-result 1 image + reset-submit-once 1 image + sync over-deliver 1 image + stream-reset-once 1 image + video 5 s at 1080p.
    const charged = 3 * IMAGE_PRICE + 2 * SYNC_PRICE + 5 * VIDEO_TIERS['1080p'];
    expect(state.usedQuota).toBe(charged);
    expect(state.balance).toBe(CREDIT - charged);
    const report = await auditAccounts(events, views, { accountId });
    expect(report.discrepancies).toEqual([]);
    // No 500 anywhere; the only 5xx are the sync calls' 502 (bad answer) and 504 (deadline).
    expect(statuses.filter((s) => s >= 500 && s !== 502 && s !== 504)).toEqual([]);
    expect(statuses.filter((s) => s >= 500)).toHaveLength(5);
    const counts: Record<string, number> = {};
    for (const s of statuses) counts[String(s)] = (counts[String(s)] ?? 0) + 1;
    recordReliability({ suite: 'hostile-upstream', requests: statuses.length, statuses: counts, invariants: 6 });
  });
});
