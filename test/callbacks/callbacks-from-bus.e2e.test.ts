/**
 * Callbacks are fed by a consumer group on the task-events topic, not by the event store
 * directly: while the publisher is stopped a finished task's callback is not scheduled; once it
 * publishes again, the consumer schedules it and it is delivered — once, even though the
 * consumer may see the event again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, Client, eventually, newToken, newUser, startGateway, type TestGateway } from '../support/gateway.js';
import { startReceiver } from '../support/receiver.js';

let gw: TestGateway;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  gw = await startGateway({ SIM_STEP_MS: '20', POLL_INTERVAL_MS: '20', ALLOW_LOOPBACK_OUTBOUND: '1', CALLBACK_CHECK_MS: '100' });
  receiver = await startReceiver(() => 200);
});
afterAll(async () => {
  await gw.close();
  await receiver.close();
});

describe('callbacks from the bus', () => {
  it('wait for the publisher, then arrive once', async () => {
    const user = await newUser(await adminClient(gw), { credit: 10_000_000 });
    const api = new Client(gw.url, (await newToken(user.client)).key);
    await gw.gateway.publisher.stop();
    const r = await api.post('/tune/submit/LYRICS', { prompt: 'a song for the bus', hookUrl: receiver.url });
    expect(r.status).toBe(200);
    const taskId = r.body.data as string;
    await eventually(async () => ((await api.get(`/tune/fetch/${taskId}`)).body.data?.status === 'SUCCESS' ? true : undefined), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await gw.gateway.deps.events.readStream(`callback-${taskId}`)).toEqual([]);
    expect(receiver.received).toHaveLength(0);

    await gw.gateway.publisher.start();
    await eventually(async () => (receiver.received.length > 0 ? true : undefined), 15_000, 100);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.received).toHaveLength(1);
    const scheduled = (await gw.gateway.deps.events.readStream(`callback-${taskId}`)).filter((e) => e.type === 'CallbackScheduled');
    expect(scheduled).toHaveLength(1);
  });
});
