/**
 * SIGTERM while the engine has a backlog of dispatches waiting for a slot of a slow upstream:
 * the dispatches under way finish, the queued ones are left for the next start, so the stop is
 * quick (it used to dispatch the whole backlog first, and the shutdown grace killed it). Started
 * again on the same data, every task is dispatched once, completes and is charged once.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startChildGateway, type ChildGateway } from '../support/child-gateway.js';
import { ADMIN_PASSWORD, Client, eventually, newToken, newUser } from '../support/gateway.js';
import { startSimProcess, type SimProcess } from '../support/sim-process.js';
import { tempDir } from '../support/tmp.js';
import { startUpstreamTap, type UpstreamTap } from '../support/upstream-tap.js';

const TASKS = 120;
const dir = tempDir();
let gateway: ChildGateway | undefined;
let sim: SimProcess | undefined;
let tap: UpstreamTap | undefined;
afterAll(async () => {
  await gateway?.kill('SIGKILL');
  await tap?.close();
  await sim?.stop();
  dir.remove();
});

describe('a stop with dispatches queued', () => {
  it('is quick, leaves the queued tasks for the next start, which dispatches each once', async () => {
    sim = await startSimProcess({ SIM_STEP_MS: '20' });
    // Every upstream submit takes 250 ms; two at a time: the backlog drains at 8 tasks/s.
    tap = await startUpstreamTap({ delayPostsMs: 250 });
    tap.target = sim.url;
    const env = { CHANNEL_CONCURRENCY: '2', SIMULATOR_URL: tap.simulatorUrlFor('gateway'), SIM_STEP_MS: '20', POLL_INTERVAL_MS: '50' };
    gateway = await startChildGateway(dir.path, env);
    const admin = new Client(gateway.url);
    await admin.login('admin', ADMIN_PASSWORD);
    const user = await newUser(admin, { credit: 10_000_000 });
    const key = (await newToken(user.client)).key;
    const api = new Client(gateway.url, key);
    const ids: string[] = [];
    for (let i = 0; i < TASKS; i++) {
      const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: `backlog ${i}`, n: 1 });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      ids.push(r.body.id as string);
    }
    const submitsBefore = tap.requests.filter((r) => r.method === 'POST' && r.body.includes('backlog ')).length;
    expect(submitsBefore, 'a backlog was queued when the stop came').toBeLessThan(TASKS / 2);

    const sentAt = Date.now();
    await gateway.kill('SIGTERM');
    expect(Date.now() - sentAt).toBeLessThan(5_000);
    expect(gateway.process.exitCode).toBe(0);

    gateway = await startChildGateway(dir.path, env);
    const again = new Client(gateway.url, key);
    await eventually(
      async () => {
        const states = await Promise.all(ids.map(async (id) => (await again.get(`/v1/images/async/generations/${id}`)).body.status as string));
        return states.every((s) => s === 'completed') ? true : undefined;
      },
      90_000,
      500,
    );
    // Each task reached the upstream once: what the stop left queued was not sent twice.
    const perPrompt = new Map<string, number>();
    for (const r of tap.requests) {
      const prompt = /"prompt":"(backlog \d+)"/.exec(r.body)?.[1];
      if (r.method === 'POST' && prompt) perPrompt.set(prompt, (perPrompt.get(prompt) ?? 0) + 1);
    }
    expect(perPrompt.size).toBe(TASKS);
    expect(
      [...perPrompt.values()].every((n) => n === 1),
      JSON.stringify([...perPrompt].filter(([, n]) => n !== 1)),
    ).toBe(true);
    const session = new Client(gateway.url);
    await session.login(user.username, user.password);
    const figures = await eventually(async () => {
      const data = (await session.get('/api/user/self')).body.data as { reserved_quota: number; used_quota: number };
      return data.reserved_quota === 0 ? data : undefined;
    }, 30_000);
    expect(figures.used_quota).toBe(TASKS * 10_000);
  }, 180_000);
});
