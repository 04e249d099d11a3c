/**
 * Catch-up subscription over a store whose positions become visible in order (no gaps appear
 * behind the head). Each pull reads the next batch after an internal cursor; when nothing is
 * there it waits for an in-process notification, the poll timer (appends by another process)
 * or close(). Pulls are serialised, so even overlapping next() calls get consecutive batches.
 */
import type { RecordedEvent, Subscription } from '../ports/event-store.js';
import type { ChangeNotifier } from './change-notifier.js';
import { pullSubscription } from './pull-subscription.js';

export interface BatchRead {
  /** At most one batch, in position order. */
  events: RecordedEvent[];
  /** Every matching event at or below this position has been returned (now or before). */
  scannedTo: bigint;
}

export interface CatchUpOptions {
  after: bigint;
  /** Synchronous on a store read in-process (SQLite), a promise on a server (PostgreSQL). */
  read(after: bigint): BatchRead | Promise<BatchRead>;
  notifier: ChangeNotifier;
  pollIntervalMs: number;
  onClose?(): void;
}

export function createCatchUpSubscription(options: CatchUpOptions): Subscription {
  let cursor = options.after;
  let closed = false;
  let wake: (() => void) | undefined;

  function waitForChange(seenVersion: number): Promise<void> {
    if (options.notifier.version !== seenVersion) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        unlisten();
        wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, options.pollIntervalMs);
      const unlisten = options.notifier.listen(done);
      wake = done;
    });
  }

  async function pull(): Promise<IteratorResult<RecordedEvent[]>> {
    while (!closed) {
      const seenVersion = options.notifier.version;
      const { events, scannedTo } = await options.read(cursor);
      if (scannedTo > cursor) cursor = scannedTo;
      if (events.length > 0) return { done: false, value: events };
      await waitForChange(seenVersion);
    }
    return { done: true, value: undefined };
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    wake?.();
    options.onClose?.();
  }

  return pullSubscription(pull, close);
}
