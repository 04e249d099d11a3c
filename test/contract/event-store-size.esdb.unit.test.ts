/**
 * An EventStoreDB server whose `MaxAppendSize` is set below the port's limit refuses a large
 * append itself (MaxAppendSizeExceededError): the adapter answers it with the port's
 * EventTooLargeError, the same refusal as its own check, and nothing is written.
 */
import type { EventStoreDBClient } from '@eventstore/db-client';
import { expect, it } from 'vitest';
import { esdbEventStoreOnClient } from '../../src/adapters/esdb/event-store.js';
import { EventTooLargeError } from '../../src/ports/event-store.js';
import { EsdbClientFake } from './client-fake.esdb.js';
import { newEvent, uniqueStream } from './event-store.fixtures.js';

it("maps the server's MaxAppendSizeExceededError to EventTooLargeError with the server's limit", async () => {
  const fake = new EsdbClientFake(1000);
  const store = esdbEventStoreOnClient(fake as unknown as EventStoreDBClient);
  try {
    const stream = uniqueStream();
    const error: unknown = await store.append(stream, [newEvent('Tested', { blob: 'x'.repeat(2000) })]).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(EventTooLargeError);
    expect(error).toMatchObject({ streamName: stream, limit: 1000 });
    expect(fake.log.filter((event) => event.streamId === stream)).toEqual([]);
    await store.append(stream, [newEvent('Tested', { small: true })]);
    expect(fake.log.filter((event) => event.streamId === stream)).toHaveLength(1);
  } finally {
    await store.close();
  }
});
