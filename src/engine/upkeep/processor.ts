/**
 * A checkpointed process manager: pulls task/account events in order from its checkpoint,
 * hands the ones it handles to `handle` (a batch's events with bounded concurrency), then
 * stores the checkpoint. A failing handler is retried with backoff, never skipped, so every
 * event is handled at least once; handlers are idempotent.
 */
import type { Logger } from 'pino';
import type { EventType } from '../../domain/events.js';
import { toDomainEvent, type RecordedDomainEvent } from '../../domain/recorded.js';
import type { EventStore, Subscription } from '../../ports/event-store.js';
import type { ViewStore } from '../../ports/view-store.js';
import type { BackgroundProcess } from '../../lib/background.js';
import { idleCheck } from '../../lib/idle-check.js';
import { retry, sleep, type Backoff } from '../../lib/backoff.js';

export interface Processor extends BackgroundProcess {
  /** Resolves once the processor has handled everything up to `position`. */
  caughtUp(position: bigint, timeoutMs?: number): Promise<void>;
}

export interface ProcessorOptions {
  name: string;
  events: EventStore;
  views: ViewStore;
  log: Logger;
  handles: readonly EventType[];
  streamPrefixes: readonly string[];
  handle?(event: RecordedDomainEvent): Promise<void>;
  /** Instead of `handle`: the batch's events in order, at once (the publisher keeps order). */
  handleBatch?(events: readonly RecordedDomainEvent[]): Promise<void>;
  /** Events of one batch handled at once (different tasks are independent). */
  concurrency?: number;
  /** Where to start when there is no checkpoint: 'beginning' (default) or the current head. */
  startAt?: 'beginning' | 'head';
  /** The time of each pass (`lastPass`). */
  clock: () => Date;
}

/** Between tries of a failing handler: 100 ms doubling, at most 10 s. */
export const HANDLER_RETRY: Backoff = { initialMs: 100, maxMs: 10_000 };

/**
 * A processor's checkpoint: one per processor (`processor:settler`, what the embedded default
 * has always stored), or one per bus partition where instances split the work by partition
 * (owned-processor.ts), so that a partition's position moves with the partition.
 */
export function checkpointName(processor: string, partition?: number): string {
  return partition === undefined ? `processor:${processor}` : `processor:${processor}:p${partition}`;
}

export function createProcessor(o: ProcessorOptions): Processor {
  const checkpoint = checkpointName(o.name);
  let subscription: Subscription | undefined;
  let loop: Promise<void> | undefined;
  let stopped = false;
  let reached = 0n;
  let lastPass: Date | undefined;
  const idle = idleCheck(
    o.events,
    o.streamPrefixes,
    () => reached,
    () => (lastPass = o.clock()),
  );

  function withRetry(what: string, work: () => Promise<void>): Promise<void> {
    return retry(work, {
      backoff: HANDLER_RETRY,
      retryIf: () => !stopped,
      onRetry: (err, attempt) => o.log.error({ err, what, attempt }, 'handler failed; retrying'),
    });
  }
  const handleWithRetry = (event: RecordedDomainEvent) => withRetry(`${event.type} ${event.id}`, () => o.handle!(event));

  async function run(from: bigint): Promise<void> {
    let after = from;
    while (!stopped) {
      subscription = o.events.subscribe({ after, streamPrefixes: o.streamPrefixes, batchSize: 500 });
      try {
        for await (const raw of subscription) {
          const events = raw.map(toDomainEvent).filter((e): e is RecordedDomainEvent => e !== undefined && o.handles.includes(e.type));
          if (o.handleBatch) {
            if (events.length > 0) await withRetry(`batch of ${events.length}`, () => o.handleBatch!(events));
          } else {
            const limit = o.concurrency ?? 32;
            for (let i = 0; i < events.length; i += limit) {
              await Promise.all(events.slice(i, i + limit).map(handleWithRetry));
            }
          }
          after = raw[raw.length - 1]!.position;
          await o.views.commit(checkpoint, [], after);
          reached = after;
          lastPass = o.clock();
        }
      } catch (err) {
        if (stopped) return;
        o.log.error({ err }, 'processor subscription failed; resubscribing');
        await sleep(500);
      }
    }
  }

  return {
    name: o.name,
    lastPass: () => lastPass,
    async start() {
      stopped = false;
      let from = await o.views.getCheckpoint(checkpoint);
      if (from === undefined) from = o.startAt === 'head' ? await o.events.headPosition() : 0n;
      reached = from;
      loop = run(from);
      idle.start();
    },
    async stop() {
      stopped = true;
      idle.stop();
      await subscription?.close();
      await loop?.catch(() => undefined);
    },
    caughtUp: (position, timeoutMs = 10_000) => untilCaughtUp(o, () => reached, position, timeoutMs),
  };
}

/**
 * Resolves once no event of the processor's streams lies between where it stands (`at`;
 * undefined: it reads nothing) and `position`.
 */
export async function untilCaughtUp(
  o: Pick<ProcessorOptions, 'name' | 'events' | 'streamPrefixes'>,
  at: () => bigint | undefined,
  position: bigint,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const from = at();
    if (from === undefined || from >= position) return;
    const [next] = await o.events.readAll({ after: from, maxCount: 1, streamPrefixes: o.streamPrefixes });
    if (!next || next.position > position) return;
    if (Date.now() > deadline) throw new Error(`${o.name} did not reach ${position} (at ${from})`);
    await sleep(10);
  }
}
