/**
 * Completion callbacks. When a task with a callback address reaches a final state, a delivery
 * is scheduled on the stream `callback-<taskId>` (by the callback consumer, fed from the bus),
 * naming the final event that scheduled it; a periodic pass delivers due ones. The body is the
 * family's query view of the task as of that event, folded from the task stream up to it — not
 * the stored view, which may lag behind the callbacks view (projector lag) or have moved on
 * (assets expired) — so it is final and byte-identical on every attempt. It is signed per
 * Standard Webhooks with the account's secret (`webhook-id` stays the same across retries so
 * receivers can dedupe). Timeouts, connection errors and non-2xx answers are retried on a
 * bounded schedule with jitter, then the delivery is dead-lettered. Every attempt is an event,
 * so a restart loses no retry. Delivery goes through `post` (the outbound guard's guardedPost:
 * address checked at connect time, no redirects followed).
 */
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import { streams, type DomainEvent } from '../../domain/events.js';
import { WrongExpectedRevisionError, type EventStore, type RecordedEvent } from '../../ports/event-store.js';
import type { ViewStore } from '../../ports/view-store.js';
import type { CallbackDoc } from '../../../projections/callbacks.js';
import { jittered } from '../../lib/backoff.js';
import { appendEvents } from '../commands/append.js';
import { periodic, type Periodic } from '../upkeep/periodic.js';
import { readTask } from '../commands/task-commands.js';
import { webhookSecretFor } from '../commands/webhook-secrets.js';

/**
 * A family's callback body: its query view of the task as its owner would read it, folded from
 * `events` (the task stream up to and including the final event that scheduled the callback)
 * with the family's own projection; undefined when they show no task of that account. The
 * same events give the same body: it reads nothing that changes later (a stored view, the
 * clock), and throws CallbackBodyUnavailableError when it can no longer build the body as it was.
 */
export type CallbackBody = (events: readonly RecordedEvent[], taskId: string, accountId: string) => Promise<unknown>;

/**
 * The body can no longer be built as the events describe it (bytes it inlines were deleted
 * after the asset retention): the delivery is dead-lettered rather than sent with another body
 * under the same `webhook-id`.
 */
export class CallbackBodyUnavailableError extends Error {
  override name = 'CallbackBodyUnavailableError';
}

export const FINAL_TASK_EVENTS: ReadonlySet<string> = new Set(['TaskSucceeded', 'TaskFailed']);

/** The task's events up to the one that scheduled its callback (older schedules: the first final event). */
export async function eventsUpToSchedule(events: EventStore, doc: Pick<CallbackDoc, 'taskId' | 'taskRevision'>): Promise<RecordedEvent[]> {
  if (doc.taskRevision !== undefined) return events.readStream(streams.task(doc.taskId), { maxCount: doc.taskRevision + 1 });
  const all = await events.readStream(streams.task(doc.taskId));
  const final = all.findIndex((e) => FINAL_TASK_EVENTS.has(e.type));
  return final === -1 ? all : all.slice(0, final + 1);
}

export interface CallbackDeps {
  events: EventStore;
  views: ViewStore;
  log: Logger;
  clock: () => Date;
  /** Callback bodies by TaskSubmitted family. */
  bodies: ReadonlyMap<string, CallbackBody>;
  /** Seconds between attempts; its length + 1 is the number of attempts. */
  retryScheduleSeconds: readonly number[];
  timeoutMs: number;
  /** Refuses addresses the gateway must not call (private networks), throwing with a reason. */
  checkUrl: (url: string) => Promise<void>;
  /**
   * POSTs the signed payload and resolves with the HTTP status; the address is checked on the
   * connection itself (a name that resolves elsewhere after `checkUrl` is still refused).
   */
  post: (url: string, body: string, headers: Readonly<Record<string, string>>) => Promise<number>;
  /** Resolves once the views show the event at `position` (the next pass must see this attempt). */
  viewsReach: (position: bigint) => Promise<void>;
  /** Whether this instance owns the task's partition (only its owner delivers). */
  owns?: (taskId: string) => boolean;
}

/**
 * A final task event of `taskId` (`causationId`, its event id; `taskRevision`, its revision in
 * the task stream) schedules the task's callback, once.
 */
export async function scheduleCallbackFor(
  deps: Pick<CallbackDeps, 'events' | 'clock'>,
  taskId: string,
  causationId: string,
  taskRevision: number,
): Promise<void> {
  const { state } = await readTask(deps.events, taskId);
  if (state.status === 'none' || !state.callbackUrl) return;
  try {
    await appendEvents(
      deps.events,
      streams.callback(taskId),
      [
        {
          type: 'CallbackScheduled',
          data: { taskId, accountId: state.accountId, family: state.family, url: state.callbackUrl, nextAttemptAt: deps.clock().getTime(), taskRevision },
        },
      ],
      { expectedRevision: 'no_stream', metadata: { at: deps.clock().toISOString(), accountId: state.accountId, correlationId: taskId, causationId } },
    );
  } catch (err) {
    if (!(err instanceof WrongExpectedRevisionError)) throw err; // already scheduled
  }
}

/** A scheduled retry moves by up to 10 % either way, so receivers that failed together are not hit together. */
const jitter = (ms: number) => Math.round(jittered(ms, { spread: 0.1 }));

export function createCallbackDeliverer(deps: CallbackDeps): Periodic {
  const inFlight = new Set<string>();

  async function attempt(doc: CallbackDoc): Promise<void> {
    // The view may be behind the callback's stream (views waited for in vain, a projector
    // failing over): an attempt already recorded there would be posted again on every pass
    // until the view caught up. The stream decides: the schedule and one event per attempt.
    const recorded = await deps.events.readStream(streams.callback(doc.taskId), { fromRevision: doc.attempts.length + 1, maxCount: 1 });
    if (recorded.length > 0) return;
    const now = deps.clock();
    const number = doc.attempts.length + 1;
    const meta = { at: now.toISOString(), accountId: doc.accountId, correlationId: doc.taskId };
    const started = Date.now();
    let status = 0;
    let error: string | undefined;
    let unavailable = false;
    try {
      await deps.checkUrl(doc.url);
      const events = await eventsUpToSchedule(deps.events, doc);
      const body = await deps.bodies.get(doc.family)?.(events, doc.taskId, doc.accountId);
      const payload = JSON.stringify(body ?? { task_id: doc.taskId });
      const secret = await webhookSecretFor(deps.events, doc.accountId, now);
      const id = `msg_${doc.taskId}`;
      const signature = new Webhook(secret).sign(id, now, payload);
      status = await deps.post(doc.url, payload, {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
        'webhook-signature': signature,
        'user-agent': 'media-gateway-webhooks/1',
      });
      if (status < 200 || status >= 300) error = `answered ${status}`;
    } catch (err) {
      unavailable = err instanceof CallbackBodyUnavailableError;
      error = err instanceof Error ? (err.name === 'TimeoutError' ? `no answer within ${deps.timeoutMs} ms` : err.message) : String(err);
    }
    const latencyMs = Date.now() - started;
    const delivered = error === undefined;
    // A body that cannot be built now never can be: no retry.
    const delay = unavailable ? undefined : deps.retryScheduleSeconds[number - 1];
    const failed = { attempt: number, status, latencyMs, error: error! };
    const events: DomainEvent[] = delivered
      ? [
          { type: 'CallbackAttempted', data: { attempt: number, status, latencyMs } },
          { type: 'CallbackDelivered', data: { attempt: number } },
        ]
      : delay === undefined
        ? [
            { type: 'CallbackAttempted', data: failed },
            { type: 'CallbackDeadLettered', data: { attempts: number, reason: error! } },
          ]
        : [{ type: 'CallbackAttempted', data: { ...failed, nextAttemptAt: deps.clock().getTime() + jitter(delay * 1000) } }];
    if (!delivered) deps.log.warn({ taskId: doc.taskId, attempt: number, error, deadLettered: delay === undefined }, 'callback delivery failed');
    // Revision = attempts so far + 1 (the schedule event): two passes never record one attempt twice.
    const result = await appendEvents(deps.events, streams.callback(doc.taskId), events, { expectedRevision: doc.attempts.length, metadata: meta });
    await deps.viewsReach(result.position);
  }

  return periodic('callbacks', deps.log, async () => {
    const now = deps.clock().getTime();
    const pending = await deps.views.find<CallbackDoc>('callbacks', { state: 'pending' }, { sortBy: 'nextAttemptAt', limit: 200 });
    const due = pending.filter((d) => d.doc.nextAttemptAt !== null && d.doc.nextAttemptAt <= now && !inFlight.has(d.id) && (deps.owns?.(d.id) ?? true));
    await Promise.all(
      due.map(async ({ id, doc }) => {
        inFlight.add(id);
        try {
          await attempt(doc);
        } catch (err) {
          if (!(err instanceof WrongExpectedRevisionError)) deps.log.error({ err, taskId: id }, 'recording a callback attempt failed');
        } finally {
          inFlight.delete(id);
        }
      }),
    );
    return due.length;
  });
}
