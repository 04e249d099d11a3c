/**
 * The deadline backstop in a started gateway: a task that nothing dispatches (its dispatch was
 * lost — here the dispatcher is stopped) still ends with `timeout` soon after its maximum age,
 * and its reservation is released.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '20', POLL_INTERVAL_MS: '20', TASK_MAX_AGE_SECONDS: '2' });
});
afterAll(() => gw.close());

describe('deadline backstop', () => {
  it('a task whose dispatch never happens is failed with timeout after its maximum age; nothing stays reserved', async () => {
    const user = await newUser(await adminClient(gw), { credit: 1_000_000 });
    const api = new Client(gw.url, (await newToken(user.client)).key);
    await gw.gateway.engine.dispatcher.stop();
    const r = await api.post('/v1/images/async/generations', { model: 'anime-diffusion-4-5-full', prompt: 'never dispatched', n: 1 });
    expect(r.status).toBe(200);
    expect((await user.client.get('/api/user/self')).body.data.reserved_quota).toBeGreaterThan(0);
    const done = await eventually(
      async () => {
        const t = (await api.get(`/v1/images/async/generations/${r.body.id}`)).body;
        return t.status === 'failed' ? t : undefined;
      },
      15_000,
      100,
    );
    expect(JSON.stringify(done)).toContain('timeout');
    await eventually(async () => ((await user.client.get('/api/user/self')).body.data.reserved_quota === 0 ? true : undefined), 10_000, 100);
    const task = await gw.gateway.deps.events.readStream(`task-${r.body.id}`);
    expect(task.map((e) => e.type)).toEqual(['TaskSubmitted', 'TaskFailed']);
  }, 30_000);
});
