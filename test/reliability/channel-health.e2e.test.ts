/**
 * Channel health on the assembled gateway (src/engine/channels/channel-health.ts): a channel whose
 * upstream fails N times in a row opens its circuit, the next channel serves the tasks and the
 * synchronous calls while the failing upstream gets no call at all, the admin API shows it
 * open, and once the upstream answers again the trial succeeds, the circuit closes and the
 * channel serves again. The periodic health check opens and closes a circuit without any task,
 * a task whose every channel is open fails at once, and the simulator's channels pass the check.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHANNELS_UNAVAILABLE_REASON } from '../../src/engine/channels/failover.js';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { startFlakyUpstream, type FlakyUpstream } from './flaky-upstream.js';

const IMAGE_MODEL = 'anime-diffusion-4-5-full';
const SYNC_MODEL = 'std-image';
const FAILURES = 3;
const HALF_OPEN_MS = 4_000;

interface Health {
  state: 'closed' | 'open' | 'half_open';
  consecutive_failures: number;
  last_failure_at: string | null;
  last_error: string | null;
  last_check_at: string | null;
}
interface ChannelItem {
  id: string;
  name: string;
  key_set: boolean;
  health: Health;
}
interface ImageTask {
  id: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  error?: { code: string; message: string };
}

/** A gateway without the simulator, priced for the two models, and a user's API client. */
async function gatewayWith(env: Record<string, string>): Promise<{ gw: TestGateway; admin: Client; api: Client }> {
  const gw = await startGateway({ SIMULATOR: '0', ALLOW_LOOPBACK_OUTBOUND: '1', POLL_INTERVAL_MS: '50', ...env });
  const admin = await adminClient(gw);
  const prices = await admin.put('/api/pricing', {
    models: { [IMAGE_MODEL]: { unit: 'image', price: 10_000 }, [SYNC_MODEL]: { unit: 'image', price: 20_000 } },
  });
  expect(prices.status, JSON.stringify(prices.body)).toBe(200);
  const user = await newUser(admin, { credit: 10_000_000 });
  return { gw, admin, api: new Client(gw.url, (await newToken(user.client)).key) };
}

async function addChannel(admin: Client, name: string, upstream: FlakyUpstream, priority: number): Promise<string> {
  const r = await admin.post('/api/channel/', {
    name,
    family: 'images',
    base_url: upstream.url,
    key: 'flaky-key',
    models: [IMAGE_MODEL, SYNC_MODEL],
    priority,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.data.id as string;
}

async function healthOf(admin: Client, channelId: string): Promise<Health> {
  const r = await admin.get<{ data: ChannelItem[] }>('/api/channel/');
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  const item = r.body.data.find((c) => c.id === channelId);
  if (!item) throw new Error(`channel ${channelId} not listed`);
  return item.health;
}

/** Submits an async image task and follows it until it ends. */
async function imageTask(api: Client, prompt: string): Promise<ImageTask> {
  const submitted = await api.post<ImageTask>('/v1/images/async/generations', { model: IMAGE_MODEL, prompt, n: 1 });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  return eventually(async () => {
    const r = await api.get<ImageTask>(`/v1/images/async/generations/${submitted.body.id}`);
    return r.body.status === 'completed' || r.body.status === 'failed' ? r.body : undefined;
  }, 15_000);
}

/** The channels a task's stream records tries on, as `<event type> <channel id>`. */
async function triesOf(gw: TestGateway, taskId: string): Promise<string[]> {
  const stream = await gw.gateway.deps.events.readStream(`task-${taskId}`);
  return stream
    .filter((e) => ['UpstreamSubmitClaimed', 'UpstreamSubmitFailed', 'UpstreamSubmitted'].includes(e.type))
    .map((e) => `${e.type} ${(e.data as { channelId: string }).channelId}`);
}

describe('a failing channel opens, the next one serves, and it closes again once its upstream recovers', () => {
  let gw: TestGateway;
  let admin: Client;
  let api: Client;
  let first: FlakyUpstream;
  let second: FlakyUpstream;
  let firstId: string;
  let secondId: string;
  let openedAt = 0;

  beforeAll(async () => {
    [first, second] = await Promise.all([startFlakyUpstream(), startFlakyUpstream()]);
    // No health check here: only real tries judge the channels.
    ({ gw, admin, api } = await gatewayWith({
      CHANNEL_BREAKER_FAILURES: String(FAILURES),
      CHANNEL_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS),
      CHANNEL_HEALTH_INTERVAL_MS: '0',
    }));
    firstId = await addChannel(admin, 'preferred', first, 10);
    secondId = await addChannel(admin, 'fallback', second, 0);
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await Promise.all([first?.close(), second?.close()]);
  });

  it(`${FAILURES} failures in a row open the preferred channel; each task was served by the next one`, async () => {
    first.down = true;
    for (let i = 0; i < FAILURES; i++) {
      const task = await imageTask(api, `while the preferred upstream is down ${i}`);
      expect(task.status, JSON.stringify(task)).toBe('completed');
      expect(await triesOf(gw, task.id)).toEqual([
        `UpstreamSubmitClaimed ${firstId}`,
        `UpstreamSubmitFailed ${firstId}`,
        `UpstreamSubmitClaimed ${secondId}`,
        `UpstreamSubmitted ${secondId}`,
      ]);
    }
    openedAt = Date.now();
    expect(first.calls.submits).toBe(FAILURES);
    const health = await healthOf(admin, firstId);
    expect(health).toMatchObject({ state: 'open', consecutive_failures: FAILURES, last_check_at: null });
    expect(health.last_error).toMatch(/upstream answered 503: down for maintenance/);
    expect(Date.parse(health.last_failure_at ?? '')).toBeGreaterThan(openedAt - 60_000);
    expect(await healthOf(admin, secondId)).toEqual({ state: 'closed', consecutive_failures: 0, last_failure_at: null, last_error: null, last_check_at: null });
  }, 30_000);

  it('while open, tasks and synchronous calls go straight to the next channel: the failing upstream gets no call', async () => {
    const [tasks, sync] = await Promise.all([
      Promise.all([1, 2, 3].map((i) => imageTask(api, `while the preferred channel is open ${i}`))),
      api.post<{ data: unknown[] }>('/v1/images/generations', { model: SYNC_MODEL, prompt: 'synchronous, while open', n: 1, response_format: 'b64_json' }),
    ]);
    // Still within the open period: nothing above was the trial.
    expect(Date.now() - openedAt).toBeLessThan(HALF_OPEN_MS);
    for (const task of tasks) {
      expect(task.status, JSON.stringify(task)).toBe('completed');
      expect(await triesOf(gw, task.id)).toEqual([`UpstreamSubmitClaimed ${secondId}`, `UpstreamSubmitted ${secondId}`]);
    }
    expect(sync.status, JSON.stringify(sync.body)).toBe(200);
    expect(sync.body.data).toHaveLength(1);
    expect(second.calls.syncCalls).toBe(1);
    expect(first.calls).toMatchObject({ submits: FAILURES, syncCalls: 0 });
    expect((await healthOf(admin, firstId)).state).toBe('open');
  }, 30_000);

  it('once the upstream answers again and the open period is over, the trial succeeds, the circuit closes and the channel serves again', async () => {
    first.down = false;
    await new Promise((r) => setTimeout(r, Math.max(0, openedAt + HALF_OPEN_MS + 100 - Date.now())));
    const trial = await imageTask(api, 'the trial');
    expect(trial.status, JSON.stringify(trial)).toBe('completed');
    expect(await triesOf(gw, trial.id)).toEqual([`UpstreamSubmitClaimed ${firstId}`, `UpstreamSubmitted ${firstId}`]);
    expect(await healthOf(admin, firstId)).toMatchObject({ state: 'closed', consecutive_failures: 0 });
    const after = await imageTask(api, 'after recovery');
    expect(await triesOf(gw, after.id)).toEqual([`UpstreamSubmitClaimed ${firstId}`, `UpstreamSubmitted ${firstId}`]);
    expect(first.calls.submits).toBe(FAILURES + 2);
  }, 30_000);
});

describe('the periodic health check', () => {
  let gw: TestGateway;
  let admin: Client;
  let api: Client;
  let upstream: FlakyUpstream;
  let channelId: string;

  beforeAll(async () => {
    upstream = await startFlakyUpstream();
    upstream.down = true;
    ({ gw, admin, api } = await gatewayWith({
      CHANNEL_BREAKER_FAILURES: '2',
      CHANNEL_BREAKER_HALF_OPEN_MS: String(HALF_OPEN_MS),
      CHANNEL_HEALTH_INTERVAL_MS: '200',
    }));
    channelId = await addChannel(admin, 'only', upstream, 0);
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await upstream?.close();
  });

  it('opens the circuit of a channel that does not answer, without any task; /readyz shows its passes', async () => {
    const health = await eventually(async () => {
      const h = await healthOf(admin, channelId);
      return h.state === 'open' ? h : undefined;
    }, 10_000);
    expect(health.consecutive_failures).toBe(2);
    expect(health.last_error).toMatch(/^health check: poll: upstream answered 503/);
    expect(health.last_check_at).not.toBeNull();
    expect(upstream.calls).toMatchObject({ submits: 0, healthChecks: 2 });
    const ready = (await (await fetch(`${gw.url}/readyz`)).json()) as { processes: Record<string, { last_pass: string | null }> };
    expect(ready.processes['channel-health']?.last_pass).toEqual(expect.any(String));
  }, 20_000);

  it('a task and a synchronous call whose every channel is open fail at once, without calling it', async () => {
    const task = await imageTask(api, 'nowhere to go');
    expect(task.status).toBe('failed');
    expect(task.error?.message).toBe(`no_channel_available: ${CHANNELS_UNAVAILABLE_REASON}`);
    expect(await triesOf(gw, task.id)).toEqual([]);
    const sync = await api.post<{ code: string; message: string }>('/v1/images/generations', { model: SYNC_MODEL, prompt: 'nowhere either', n: 1 });
    expect(sync.status).toBe(502);
    expect(sync.body.code).toBe('upstream_error');
    expect(upstream.calls).toMatchObject({ submits: 0, syncCalls: 0 });
  }, 20_000);

  it('closes the circuit on its own once the upstream answers again (the check is the trial)', async () => {
    upstream.down = false;
    const health = await eventually(
      async () => {
        const h = await healthOf(admin, channelId);
        return h.state === 'closed' ? h : undefined;
      },
      HALF_OPEN_MS + 5_000,
      100,
    );
    expect(health.consecutive_failures).toBe(0);
    const task = await imageTask(api, 'served again');
    expect(task.status, JSON.stringify(task)).toBe('completed');
    expect(upstream.calls.submits).toBe(1);
  }, 20_000);
});

describe("the simulator's channels", () => {
  it('pass the health check', async () => {
    const gw = await startGateway({ CHANNEL_HEALTH_INTERVAL_MS: '60000' });
    try {
      const admin = await adminClient(gw);
      const channels = await eventually(async () => {
        const list = (await admin.get<{ data: ChannelItem[] }>('/api/channel/')).body.data;
        return list.every((c) => c.health.last_check_at !== null) ? list : undefined;
      });
      expect(channels.length).toBeGreaterThan(5);
      for (const c of channels) expect(c.health, c.name).toMatchObject({ state: 'closed', consecutive_failures: 0, last_error: null, last_failure_at: null });
    } finally {
      await gw.close();
    }
  });
});
