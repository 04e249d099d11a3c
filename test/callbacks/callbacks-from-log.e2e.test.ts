/**
 * On the embedded default callbacks are scheduled from the event store itself, by a checkpointed
 * processor (nothing is published to the in-process bus): while the scheduler is stopped a
 * finished task's callback is not scheduled; once it runs again it is, and delivered once. A
 * gateway killed while callbacks go out and tasks still run schedules each after the restart, once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, ADMIN_PASSWORD, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { startChildGateway } from '../support/child-gateway.js';
import { startReceiver } from '../support/receiver.js';
import { tempDir } from '../support/tmp.js';

const ENV = { SIM_STEP_MS: '20', POLL_INTERVAL_MS: '20', ALLOW_LOOPBACK_OUTBOUND: '1', CALLBACK_CHECK_MS: '100' };
let gw: TestGateway;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  gw = await startGateway(ENV);
  receiver = await startReceiver(() => 200);
});
afterAll(async () => {
  await gw.close();
  await receiver.close();
});

describe('callbacks from the event log', () => {
  it('wait for the scheduler, then arrive once; no bus log is written', async () => {
    expect(gw.gateway.publisher).toBeUndefined();
    const user = await newUser(await adminClient(gw), { credit: 10_000_000 });
    const api = new Client(gw.url, (await newToken(user.client)).key);
    await gw.gateway.callbacks.scheduler.stop();
    const r = await api.post('/tune/submit/LYRICS', { prompt: 'a song for the log', hookUrl: receiver.url });
    expect(r.status).toBe(200);
    const taskId = r.body.data as string;
    await eventually(async () => ((await api.get(`/tune/fetch/${taskId}`)).body.data?.status === 'SUCCESS' ? true : undefined), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await gw.gateway.deps.events.readStream(`callback-${taskId}`)).toEqual([]);
    expect(receiver.received).toHaveLength(0);

    await gw.gateway.callbacks.scheduler.start();
    await eventually(async () => (receiver.received.length > 0 ? true : undefined), 15_000, 100);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received).toHaveLength(1);
    const scheduled = (await gw.gateway.deps.events.readStream(`callback-${taskId}`)).filter((e) => e.type === 'CallbackScheduled');
    expect(scheduled).toHaveLength(1);
    // Each event is written once: the in-process bus holds no message.
    const { default: Database } = await import('better-sqlite3');
    const bus = new Database(`${gw.dataDir}/bus.sqlite`, { readonly: true });
    try {
      expect(bus.prepare('SELECT count(*) AS n FROM bus_messages').get()).toEqual({ n: 0 });
    } finally {
      bus.close();
    }
  });

  it('a gateway killed while callbacks go out schedules each after the restart, once', async () => {
    const dir = tempDir();
    const hooks = await startReceiver(() => 200);
    let child = await startChildGateway(dir.path, ENV);
    try {
      const admin = new Client(child.url);
      await admin.login('admin', ADMIN_PASSWORD);
      const user = await newUser(admin, { credit: 10_000_000 });
      const key = (await newToken(user.client)).key;
      const api = new Client(child.url, key);
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await api.post('/tune/submit/LYRICS', { prompt: `killed song ${i}`, hookUrl: hooks.url })).body.data as string);
      // Killed while the first callbacks go out and the last tasks are still running.
      await eventually(async () => (hooks.received.length > 0 ? true : undefined), 15_000, 20);
      await child.kill('SIGKILL');
      child = await startChildGateway(dir.path, ENV);
      const after = new Client(child.url, key);
      await eventually(
        async () => {
          const done = await Promise.all(ids.map(async (id) => (await after.get(`/tune/fetch/${id}`)).body.data?.status === 'SUCCESS'));
          const delivered = new Set(hooks.received.map((h) => (JSON.parse(h.body) as { data?: { task_id?: string } }).data?.task_id));
          return done.every(Boolean) && ids.every((id) => delivered.has(id)) ? true : undefined;
        },
        30_000,
        100,
      );
      await child.kill('SIGTERM');
      const { createSqliteEventStore } = await import('../../src/adapters/sqlite/event-store.js');
      const store = createSqliteEventStore({ path: `${dir.path}/events.sqlite` });
      try {
        for (const id of ids) {
          const scheduled = (await store.readStream(`callback-${id}`)).filter((e) => e.type === 'CallbackScheduled');
          expect(scheduled, id).toHaveLength(1);
        }
      } finally {
        await store.close();
      }
    } finally {
      await child.kill('SIGKILL').catch(() => undefined);
      await hooks.close();
      dir.remove();
    }
  }, 90_000);
});
