/**
 * A callback's view behind its stream (src/engine/outbound/callbacks.ts): the projection that
 * keeps the callbacks view has stopped (a projector killed, its shards not yet taken over), so
 * the deliverer's wait for the views after recording an attempt ends in vain, and every later
 * pass reads the same pending document. The receiver, a real HTTP server, must get the callback
 * once: the attempt already recorded in the stream is not posted again. Real stores (SQLite),
 * the real callbacks projection, run once and then stopped.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createCallbackDeliverer, scheduleCallbackFor } from '../../src/engine/outbound/callbacks.js';
import { toNewEvents } from '../../src/engine/commands/append.js';
import { streams } from '../../src/domain/events.js';
import type { EventStore } from '../../src/ports/event-store.js';
import type { ViewStore } from '../../src/ports/view-store.js';
import { callbacksProjection } from '../../projections/callbacks.js';
import { createProjectionRunner } from '../../projections/runner.js';
import { waitForProjectedHead } from '../../projections/head.js';
import { startReceiver } from '../support/receiver.js';
import { useTempStores } from '../support/temp-event-store.js';
import { submittedEvent } from '../projections/support.js';

let events: EventStore;
let views: ViewStore;
useTempStores((stores) => ({ events, views } = stores));

describe('a callback whose view is behind its stream', () => {
  it('is posted once, however many passes read the stale document', async () => {
    const receiver = await startReceiver(() => 200);
    try {
      // A finished task with a callback address, and its callback scheduled.
      const metadata = { at: new Date().toISOString(), accountId: 'a' };
      const submitted = submittedEvent('t1');
      await events.append(
        streams.task('t1'),
        toNewEvents([{ ...submitted, data: { ...submitted.data, callbackUrl: receiver.url } } as typeof submitted], metadata),
      );
      await events.append(streams.task('t1'), toNewEvents([{ type: 'TaskFailed', data: { code: 'upstream_error', reason: 'x', completedAt: 2 } }], metadata));
      await scheduleCallbackFor({ events, clock: () => new Date() }, 't1', 'cause', 1);
      // The callbacks view shows it pending; then its projection stops.
      const runner = createProjectionRunner({ events, views, projections: [callbacksProjection], log: pino({ level: 'silent' }) });
      await runner.start();
      await waitForProjectedHead(events, runner, 10_000);
      await runner.stop();
      expect((await views.find('callbacks', { state: 'pending' })).length).toBe(1);

      const deliverer = createCallbackDeliverer({
        events,
        views,
        log: pino({ level: 'silent' }),
        clock: () => new Date(),
        bodies: new Map([['image', async (_events, taskId) => ({ task_id: taskId })]]),
        retryScheduleSeconds: [1, 1],
        timeoutMs: 2000,
        checkUrl: async () => undefined,
        post: async (url, body, headers) => (await fetch(url, { method: 'POST', body, headers })).status,
        // The views never show the attempt: the projection is stopped.
        viewsReach: (position) => runner.waitFor(position, 50),
      });
      for (let pass = 0; pass < 5; pass++) await deliverer.runOnce();
      expect(receiver.received).toHaveLength(1);
      const recorded = await events.readStream(streams.callback('t1'));
      expect(recorded.map((e) => e.type)).toEqual(['CallbackScheduled', 'CallbackAttempted', 'CallbackDelivered']);
    } finally {
      await receiver.close();
    }
  });
});
