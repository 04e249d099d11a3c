/**
 * The callback consumer: a consumer group on the task-events topic (the in-process bus on the
 * embedded default, Kafka in the distributed deployment), fed by the publisher from the event
 * store. A final task event schedules the task's callback (`scheduleCallbackFor`: one
 * `CallbackScheduled` per task, so a message delivered twice schedules once — deduplicated by
 * the callback stream, whatever the event id), naming the event's revision: the body is the
 * task as of that event. Partitions follow the task id, so each task's
 * callbacks are scheduled by the one member that owns it; the deliverer then posts them.
 * At least once: the offset is committed after the schedule is appended, and a failing append
 * is retried (with backoff) before the message is let go.
 */
import type { Logger } from 'pino';
import { retry, type Backoff } from '../../lib/backoff.js';
import type { Bus, Consumer } from '../../ports/bus.js';
import type { EventStore } from '../../ports/event-store.js';
import type { BackgroundProcess } from '../../lib/background.js';
import { FINAL_TASK_EVENTS, scheduleCallbackFor } from './callbacks.js';
import { TASK_TOPIC, type EventEnvelope } from './event-envelope.js';

export const CALLBACK_GROUP = 'gateway-callbacks';
/** Between tries of a failing schedule: 100 ms doubling, at most 10 s. */
const SCHEDULE_RETRY: Backoff = { initialMs: 100, maxMs: 10_000 };

export function createCallbackConsumer(deps: { bus: Bus; events: EventStore; clock: () => Date; log: Logger }): BackgroundProcess {
  let consumer: Consumer | undefined;
  let lastPass: Date | undefined;
  let stopped = false;

  async function schedule(envelope: EventEnvelope): Promise<void> {
    await retry(() => scheduleCallbackFor(deps, envelope.key, envelope.id, envelope.revision), {
      backoff: SCHEDULE_RETRY,
      // Once stopped the failure is thrown: not committed, the next member gets the message again.
      retryIf: () => !stopped,
      onRetry: (err, attempt) => deps.log.error({ err, taskId: envelope.key, attempt }, 'scheduling a callback failed; retrying'),
    });
  }

  return {
    name: 'callback-scheduler',
    lastPass: () => lastPass,
    async start() {
      stopped = false;
      consumer = await deps.bus.consume({
        topic: TASK_TOPIC,
        groupId: CALLBACK_GROUP,
        // Scheduling is idempotent per task, so a new group may safely read the whole topic.
        fromBeginning: true,
        handle: async (message) => {
          let envelope: EventEnvelope;
          try {
            envelope = JSON.parse(message.value) as EventEnvelope;
          } catch (err) {
            deps.log.error({ err, offset: message.offset.toString(), partition: message.partition }, 'skipped a task event that is not JSON');
            return;
          }
          if (FINAL_TASK_EVENTS.has(envelope.type)) await schedule(envelope);
          lastPass = deps.clock();
        },
      });
      lastPass = deps.clock();
    },
    async stop() {
      stopped = true;
      await consumer?.close();
      consumer = undefined;
    },
  };
}
