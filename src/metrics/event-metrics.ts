/**
 * Business counters derived from the events the engine appends (tasks, quota, callbacks), so
 * no engine code counts anything. A subscription from the store's head when the process
 * starts, without a checkpoint: Prometheus counters start at zero with the process, and
 * `rate()`/`increase()` read across restarts. It runs where the projections run (roles `all`
 * and `projector`): the log is store-wide, so one process per deployment counts each event.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { taskIdOfStream, type EventDataOf } from '../domain/events.js';
import { toDomainEvent, type RecordedDomainEvent } from '../domain/recorded.js';
import type { BackgroundProcess } from '../lib/background.js';
import { idleCheck } from '../lib/idle-check.js';
import type { EventStore, Subscription } from '../ports/event-store.js';
import type { GatewayMetrics } from './registry.js';

const STREAM_PREFIXES = ['task-', 'account-', 'callback-'] as const;
/**
 * Tasks whose family and model are remembered (the newest submitted); an older one's are read
 * from its stream's first event when it ends or its reservation closes.
 */
const REMEMBERED_TASKS = 100_000;

type TaskLabels = { family: string; model: string };

export function eventMetricsProcess(deps: { events: EventStore; metrics: GatewayMetrics; clock: () => Date; log: Logger }): BackgroundProcess {
  const { events, metrics, clock, log } = deps;
  const labelsOfTask = new LRUCache<string, TaskLabels>({ max: REMEMBERED_TASKS });
  let position = 0n;
  let lastPass: Date | undefined;
  let stopped = false;
  let subscription: Subscription | undefined;
  let loop: Promise<void> | undefined;
  const idle = idleCheck(
    events,
    STREAM_PREFIXES,
    () => position,
    () => (lastPass = clock()),
  );

  /** The family and model of a task: remembered from its submit, or its stream's first event. */
  async function labelsOf(taskId: string): Promise<TaskLabels | undefined> {
    const known = labelsOfTask.get(taskId);
    if (known) return known;
    const [first] = await events.readStream(`task-${taskId}`, { maxCount: 1 });
    if (first?.type !== 'TaskSubmitted') return undefined;
    const data = first.data as EventDataOf<'TaskSubmitted'>;
    return { family: data.family, model: data.model };
  }
  /** A reservation's model: the one the event names, else its task's ('unknown' for a task gone). */
  const modelOf = async (taskId: string, named?: string) => ({ model: named ?? (await labelsOf(taskId))?.model ?? 'unknown' });

  async function count(event: RecordedDomainEvent): Promise<void> {
    switch (event.type) {
      case 'TaskSubmitted': {
        const labels = { family: event.data.family, model: event.data.model };
        labelsOfTask.set(event.data.taskId, labels);
        metrics.tasksSubmitted.inc(labels);
        return;
      }
      case 'TaskSucceeded':
      case 'TaskFailed': {
        const labels = await labelsOf(taskIdOfStream(event.streamName));
        if (labels) (event.type === 'TaskSucceeded' ? metrics.tasksSucceeded : metrics.tasksFailed).inc(labels);
        return;
      }
      case 'QuotaReserved':
        metrics.quotaReserved.inc({ model: event.data.model }, event.data.amount);
        return;
      case 'QuotaSettled':
        metrics.quotaSettled.inc(await modelOf(event.data.taskId, event.data.basis?.model), event.data.charged);
        return;
      case 'QuotaReleased':
        metrics.quotaReleased.inc(await modelOf(event.data.taskId), event.data.amount);
        return;
      case 'CallbackAttempted':
        metrics.callbackAttempts.inc({ outcome: event.data.error === undefined ? 'delivered' : event.data.status === 0 ? 'no_answer' : 'http_error' });
        metrics.callbackDuration.observe(event.data.latencyMs / 1000);
        return;
      case 'CallbackDelivered':
        metrics.callbacksDelivered.inc();
        return;
      case 'CallbackDeadLettered':
        metrics.callbacksDeadLettered.inc();
        return;
      default:
        return;
    }
  }

  async function run(): Promise<void> {
    while (!stopped) {
      subscription = events.subscribe({ after: position, streamPrefixes: STREAM_PREFIXES, batchSize: 500 });
      try {
        for await (const batch of subscription) {
          for (const raw of batch) {
            const event = toDomainEvent(raw);
            if (event) await count(event);
            // Per event: a resubscription after a failed read counts nothing twice.
            position = raw.position;
          }
          lastPass = clock();
        }
      } catch (err) {
        if (stopped) return;
        log.error({ err }, 'metrics subscription failed; resubscribing');
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  }

  return {
    name: 'metrics',
    lastPass: () => lastPass,
    async start() {
      stopped = false;
      position = await events.headPosition();
      loop = run();
      idle.start();
    },
    async stop() {
      stopped = true;
      idle.stop();
      await subscription?.close();
      await loop;
    },
  };
}
