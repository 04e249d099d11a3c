import type { EventStore } from '../../src/ports/event-store.js';
import { withOverrides } from './event-store-overrides.js';

/**
 * Fault injection, not a mock: every call goes to the real store, except appends to streams
 * matching `failOn` while it is set, which throw as a crashed write would.
 */
export function faultyEventStore(store: EventStore): { store: EventStore; failOn: { pattern: RegExp | undefined } } {
  const failOn: { pattern: RegExp | undefined } = { pattern: undefined };
  const wrapped = withOverrides(store, {
    append: (stream, events, options) => {
      if (failOn.pattern?.test(stream)) return Promise.reject(new Error(`injected failure appending to ${stream}`));
      return store.append(stream, events, options);
    },
  });
  return { store: wrapped, failOn };
}
