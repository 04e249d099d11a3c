/**
 * Fault injection and old-version stand-ins, not mocks: the real store with some methods
 * replaced; every other call goes to the store itself.
 */
import type { EventStore } from '../../src/ports/event-store.js';

export function withOverrides(store: EventStore, overrides: Partial<EventStore>): EventStore {
  return {
    append: (stream, events, options) => store.append(stream, events, options),
    readStream: (s, o) => store.readStream(s, o),
    readAll: (o) => store.readAll(o),
    readStreamsWithPrefix: (p, o) => store.readStreamsWithPrefix(p, o),
    headPosition: () => store.headPosition(),
    subscribe: (o) => store.subscribe(o),
    ping: () => store.ping(),
    close: () => store.close(),
    ...overrides,
  };
}
