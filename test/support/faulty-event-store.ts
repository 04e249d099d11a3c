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

/**
 * The next append that carries an event of `type`, once armed, throws without writing (a store
 * that did not answer); every other append goes through. Each `arm()` fails one more.
 */
export function failingOnce(store: EventStore, type: string): { store: EventStore; arm(): void; readonly failed: string[] } {
  let armed = false;
  const failed: string[] = [];
  const wrapped = withOverrides(store, {
    append: (stream, events, options) => {
      if (armed && events.some((e) => e.type === type)) {
        armed = false;
        failed.push(stream);
        return Promise.reject(new Error(`injected failure appending ${type} to ${stream}`));
      }
      return store.append(stream, events, options);
    },
  });
  return { store: wrapped, arm: () => void (armed = true), failed };
}
