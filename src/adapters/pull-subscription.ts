import type { RecordedEvent, Subscription } from '../ports/event-store.js';

/**
 * The Subscription shape every event-store adapter returns: `next()` calls are chained, so a
 * consumer that does not await one before asking for the next still gets batches in order.
 */
export function pullSubscription(pull: () => Promise<IteratorResult<RecordedEvent[]>>, close: () => Promise<void>): Subscription {
  let chain: Promise<unknown> = Promise.resolve();
  const iterator: AsyncIterator<RecordedEvent[]> = {
    next() {
      const result = chain.then(pull);
      chain = result.catch(() => undefined);
      return result;
    },
    async return() {
      await close();
      return { done: true, value: undefined };
    },
  };
  return { [Symbol.asyncIterator]: () => iterator, close };
}
