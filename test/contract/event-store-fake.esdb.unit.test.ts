/**
 * The EventStoreDB adapter's own logic, without a server: the shared EventStore contract runs
 * against the adapter on an in-memory stand-in of the client (client-fake.esdb.ts), and the
 * behaviours a server makes hard to provoke (a dropped subscription, system events, the
 * revision mapping) are exercised directly. What EventStoreDB itself does is proven only by
 * event-store.esdb.int.test.ts, wherever Docker or EVENTSTORE_URL exists.
 */
import type { EventStoreDBClient } from '@eventstore/db-client';
import { describe, expect, it } from 'vitest';
import { createEsdbEventStore, esdbEventStoreOnClient } from '../../src/adapters/esdb/event-store.js';
import type { EventStore, RecordedEvent } from '../../src/ports/event-store.js';
import { EsdbClientFake } from './client-fake.esdb.js';
import { eventStoreContract } from './event-store.contract.js';
import { expectNothingMore, ids, newEvent, newEvents, pullEvents, sleep, uniquePrefix } from './event-store.fixtures.js';

function open(fake = new EsdbClientFake()): { fake: EsdbClientFake; store: EventStore } {
  // The stand-in implements only what the adapter calls.
  const client = fake as unknown as EventStoreDBClient;
  return { fake, store: esdbEventStoreOnClient(client, { reconnectMinMs: 5, reconnectMaxMs: 20 }) };
}

eventStoreContract('EventStoreDB adapter on an in-memory client stand-in', async () => {
  const { fake, store } = open();
  fake.addSystemEvent();
  return { store, cleanup: () => store.close() };
});

describe('EventStoreDB adapter (client stand-in)', () => {
  it('resubscribes after a dropped connection from the last delivered position, none twice and none skipped', async () => {
    const { fake, store } = open();
    const prefix = uniquePrefix();
    const first = newEvents(3);
    await store.append(`${prefix}a`, first);
    const subscription = store.subscribe({ streamPrefixes: [prefix], batchSize: 2 });
    const iterator = subscription[Symbol.asyncIterator]();
    const caughtUp = await pullEvents(iterator, 3);

    fake.dropSubscriptions();
    const during = newEvents(2);
    await store.append(`${prefix}b`, during);
    await sleep(30);
    fake.dropSubscriptions();
    const after = newEvents(2);
    await store.append(`${prefix}a`, after);

    const resumed = await pullEvents(iterator, 4);
    expect(ids([...caughtUp.events, ...resumed.events])).toEqual(ids([...first, ...during, ...after]));
    const lastDelivered = caughtUp.events.at(-1)!.position;
    expect(fake.subscribeCalls.slice(1)[0]).toEqual({ commit: lastDelivered, prepare: lastDelivered });
    await expectNothingMore(subscription, iterator);
    expect(fake.liveSubscriptions()).toBe(0);
    await store.close();
  });

  it('a start the server refuses as no record position (a Last-Event-ID between events) is read from the beginning once, not retried for ever', async () => {
    const { fake, store } = open();
    const prefix = uniquePrefix();
    const first = await store.append(`${prefix}x`, newEvents(1));
    const later = newEvents(2);
    await store.append(`${prefix}x`, later);
    const subscription = store.subscribe({ after: first.position + 1n, streamPrefixes: [prefix] });
    const iterator = subscription[Symbol.asyncIterator]();
    expect(ids((await pullEvents(iterator, 2)).events)).toEqual(ids(later));
    await sleep(100);
    // The refused start, then the beginning: nothing else (the old adapter resubscribed every few ms).
    expect(fake.subscribeCalls).toEqual([{ commit: first.position + 1n, prepare: first.position + 1n }, 'start']);
    // A later drop resumes from the last delivered event, a real record's position.
    fake.dropSubscriptions();
    const more = newEvents(1);
    await store.append(`${prefix}x`, more);
    expect(ids((await pullEvents(iterator, 1)).events)).toEqual(ids(more));
    const lastDelivered = (await store.readAll({ streamPrefixes: [prefix] })).at(-2)!.position;
    expect(fake.subscribeCalls[2]).toEqual({ commit: lastDelivered, prepare: lastDelivered });
    await expectNothingMore(subscription, iterator);
    await store.close();
  });

  it('subscribes after a checkpoint exclusively and filters by stream prefix on the server', async () => {
    const { fake, store } = open();
    const prefix = uniquePrefix();
    const checkpoint = await store.append(`${prefix}x`, newEvents(2));
    const later = newEvents(1);
    await store.append(`${prefix}x`, later);
    const subscription = store.subscribe({ after: checkpoint.position, streamPrefixes: [prefix] });
    const iterator = subscription[Symbol.asyncIterator]();
    expect(ids((await pullEvents(iterator, 1)).events)).toEqual(ids(later));
    expect(fake.subscribeCalls[0]).toEqual({ commit: checkpoint.position, prepare: checkpoint.position });
    await expectNothingMore(subscription, iterator);
    await store.close();
  });

  it('never shows EventStoreDB system events: readAll, subscribe without prefixes and headPosition skip them', async () => {
    const { fake, store } = open();
    const event = newEvent();
    const appended = await store.append('task-1', [event]);
    fake.addSystemEvent();
    fake.addSystemEvent('$$task-1', '$metadata');

    expect(ids(await store.readAll())).toEqual([event.id]);
    expect(await store.headPosition()).toBe(appended.position);
    const subscription = store.subscribe();
    const iterator = subscription[Symbol.asyncIterator]();
    const { events } = await pullEvents(iterator, 1);
    expect(events.map((e: RecordedEvent) => e.streamName)).toEqual(['task-1']);
    await expectNothingMore(subscription, iterator);
    await store.close();
  });

  it('pages through $all: readAll finds events beyond the first page, headPosition looks past many system events', async () => {
    const { fake, store } = open();
    const prefix = uniquePrefix();
    const early = newEvent();
    await store.append(`${prefix}a`, [early]);
    await store.append('other-1', newEvents(700));
    const late = newEvent();
    const appended = await store.append(`${prefix}b`, [late]);
    for (let i = 0; i < 1100; i++) fake.addSystemEvent();

    expect(ids(await store.readAll({ streamPrefixes: [prefix] }))).toEqual(ids([early, late]));
    expect(ids(await store.readAll({ after: (await store.readStream(`${prefix}a`))[0]!.position, streamPrefixes: [prefix] }))).toEqual([late.id]);
    expect(await store.readAll({ maxCount: 600 })).toHaveLength(600);
    expect(await store.headPosition()).toBe(appended.position);
    await store.close();
  });

  it('maps expected revisions one to one and never sends -1', async () => {
    const { fake, store } = open();
    const stream = `${uniquePrefix()}s`;
    await store.append(stream, newEvents(1), { expectedRevision: 'no_stream' });
    await store.append(stream, newEvents(1), { expectedRevision: 'stream_exists' });
    await store.append(stream, newEvents(1), { expectedRevision: 1 });
    await store.append(stream, newEvents(1), { expectedRevision: 'any' });
    await store.append(stream, newEvents(1));
    expect(fake.appendCalls.map((call) => call.expectedRevision)).toEqual(['no_stream', 'stream_exists', 1n, 'any', 'any']);
    await store.close();
  });

  it('refuses event ids that are not UUIDs before writing anything', async () => {
    const { fake, store } = open();
    await expect(store.append('task-1', [newEvent('Tested', {}, 'not-a-uuid')])).rejects.toThrow(/UUID/);
    expect(fake.appendCalls).toEqual([]);
    await store.close();
  });

  it('disposes the client on close and refuses work afterwards', async () => {
    const { fake, store } = open();
    await store.close();
    expect(fake.disposed).toBe(true);
    await expect(store.append('task-1', newEvents(1))).rejects.toThrow(/closed/);
  });

  it('accepts esdb:// connection strings only', () => {
    expect(() => createEsdbEventStore({ connectionString: 'kurrentdb://localhost:2113?tls=false' })).toThrow(/esdb:\/\//);
    expect(() => createEsdbEventStore({ connectionString: 'http://localhost:2113' })).toThrow(/esdb:\/\//);
  });
});
