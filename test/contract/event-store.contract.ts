/**
 * The EventStore contract: every adapter (SQLite, EventStoreDB) runs these same tests through
 * `eventStoreContract(name, factory)`. Streams are named uniquely per test, so a shared server
 * works as well as a fresh file.
 */
import { describe, expect, it } from 'vitest';
import { appendSize, EventTooLargeError, MAX_APPEND_BYTES, type NewEvent } from '../../src/ports/event-store.js';
import { appendAfterContract } from './event-store-after.contract.js';
import { revisionContract } from './event-store-revisions.contract.js';
import { streamsWithPrefixContract } from './event-store-streams-with-prefix.contract.js';
import { subscriptionContract } from './event-store-subscription.contract.js';
import { ids, newEvent, newEvents, uniquePrefix, uniqueStream, useEventStore, type EventStoreFactory } from './event-store.fixtures.js';

export type { EventStoreFactory } from './event-store.fixtures.js';

export function eventStoreContract(name: string, factory: EventStoreFactory): void {
  describe(`EventStore contract: ${name}`, () => {
    const store = useEventStore(factory);

    describe('append and readStream', () => {
      it('reads back appended events with 0-based revisions, ids, types, data and metadata', async () => {
        const stream = uniqueStream('task');
        const first = newEvent('TaskSubmitted', { family: 'image', amount: 120, nested: { list: [1, 'two', null] } });
        const second = newEvent('TaskSucceeded', { results: [] });
        second.metadata = { at: '2024-05-01T12:00:01.000Z', causationId: first.id, requestId: 'req-9', extra: { a: 1 } };
        await store().append(stream, [first, second], { expectedRevision: 'no_stream' });

        const read = await store().readStream(stream);
        expect(read.map(({ id, type, data, metadata, streamName, revision }) => ({ id, type, data, metadata, streamName, revision }))).toEqual([
          { ...first, streamName: stream, revision: 0 },
          { ...second, streamName: stream, revision: 1 },
        ]);
        expect(typeof read[0]?.position).toBe('bigint');
      });

      it('returns the last revision and the global position of the last appended event', async () => {
        const stream = uniqueStream();
        const first = await store().append(stream, newEvents(3));
        const second = await store().append(stream, newEvents(2));
        const read = await store().readStream(stream);

        expect(first).toEqual({ nextExpectedRevision: 2, position: read[2]?.position });
        expect(second).toEqual({ nextExpectedRevision: 4, position: read[4]?.position });
      });

      it('reads a missing stream as empty', async () => {
        expect(await store().readStream(uniqueStream('never-written'))).toEqual([]);
      });

      it('reads a stream from a revision (inclusive) and honours maxCount', async () => {
        const stream = uniqueStream();
        const events = newEvents(6);
        await store().append(stream, events);

        expect(ids(await store().readStream(stream, { fromRevision: 2 }))).toEqual(ids(events.slice(2)));
        expect(ids(await store().readStream(stream, { fromRevision: 1, maxCount: 3 }))).toEqual(ids(events.slice(1, 4)));
        expect(await store().readStream(stream, { fromRevision: 6 })).toEqual([]);
      });

      it('reads a stream backwards, newest first, from the end or from a revision (inclusive), honouring maxCount', async () => {
        const stream = uniqueStream();
        const events = newEvents(6);
        await store().append(stream, events.slice(0, 4));
        await store().append(stream, events.slice(4));
        const newestFirst = ids(events).reverse();

        const all = await store().readStream(stream, { direction: 'backwards' });
        expect(ids(all)).toEqual(newestFirst);
        expect(all.map((event) => event.revision)).toEqual([5, 4, 3, 2, 1, 0]);
        expect(ids(await store().readStream(stream, { direction: 'backwards', maxCount: 2 }))).toEqual(newestFirst.slice(0, 2));
        expect(ids(await store().readStream(stream, { direction: 'backwards', fromRevision: 3, maxCount: 2 }))).toEqual(ids([events[3]!, events[2]!]));
        expect(ids(await store().readStream(stream, { direction: 'backwards', fromRevision: 0 }))).toEqual(ids([events[0]!]));
        expect(await store().readStream(stream, { direction: 'backwards', fromRevision: -1 })).toEqual([]);
        expect(await store().readStream(uniqueStream('never-written'), { direction: 'backwards' })).toEqual([]);
        // The same records as a forward read gives, positions included.
        expect(all.reverse()).toEqual(await store().readStream(stream, { direction: 'forwards' }));
      });

      it('keeps each stream separate', async () => {
        const prefix = uniquePrefix();
        await store().append(`${prefix}a`, newEvents(2));
        await store().append(`${prefix}b`, newEvents(1));
        await store().append(`${prefix}a`, newEvents(1));

        expect((await store().readStream(`${prefix}a`)).map((event) => event.revision)).toEqual([0, 1, 2]);
        expect((await store().readStream(`${prefix}b`)).map((event) => event.revision)).toEqual([0]);
      });
    });

    revisionContract(store);
    appendAfterContract(store);

    describe('append size', () => {
      /** An event of exactly `size` bytes as MAX_APPEND_BYTES measures an append of it alone. */
      function eventOfSize(size: number): NewEvent {
        const event = newEvent('Tested', { blob: '' });
        return newEvent('Tested', { blob: 'x'.repeat(size - appendSize([event])) });
      }

      it('refuses an append over MAX_APPEND_BYTES with EventTooLargeError and writes none of it', async () => {
        const stream = uniqueStream();
        const first = newEvent();
        await store().append(stream, [first]);

        const error: unknown = await store()
          .append(stream, [eventOfSize(MAX_APPEND_BYTES + 1)])
          .catch((reason: unknown) => reason);
        expect(error).toBeInstanceOf(EventTooLargeError);
        expect(error).toMatchObject({ streamName: stream, limit: MAX_APPEND_BYTES });
        // Summed over the events of one append: two halves just over the limit together.
        const halves = [eventOfSize(MAX_APPEND_BYTES / 2), eventOfSize(MAX_APPEND_BYTES / 2 + 1)];
        await expect(store().append(stream, halves)).rejects.toBeInstanceOf(EventTooLargeError);
        await expect(store().append(uniqueStream('new'), [eventOfSize(2 * MAX_APPEND_BYTES)], { expectedRevision: 'no_stream' })).rejects.toBeInstanceOf(
          EventTooLargeError,
        );

        expect(ids(await store().readStream(stream))).toEqual([first.id]);
        const next = newEvent();
        expect((await store().append(stream, [next], { expectedRevision: 0 })).nextExpectedRevision).toBe(1);
      });

      it('takes an append of exactly MAX_APPEND_BYTES', async () => {
        const stream = uniqueStream();
        const event = eventOfSize(MAX_APPEND_BYTES);
        expect(appendSize([event])).toBe(MAX_APPEND_BYTES);
        await store().append(stream, [event]);
        const [read] = await store().readStream(stream);
        expect(read?.data).toEqual(event.data);
      });
    });

    describe('readAll and positions', () => {
      it('assigns strictly increasing positions across streams in commit order', async () => {
        const prefix = uniquePrefix();
        const results = [];
        for (const stream of ['a', 'b', 'a', 'c', 'b']) results.push(await store().append(`${prefix}${stream}`, newEvents(2)));
        const positions = results.map((result) => result.position);
        expect(positions).toEqual([...positions].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
        expect(new Set(positions).size).toBe(positions.length);

        const all = await store().readAll({ streamPrefixes: [prefix] });
        expect(all).toHaveLength(10);
        all.slice(1).forEach((event, index) => expect(event.position > (all[index]?.position ?? -1n)).toBe(true));
      });

      it('reads every stream in commit order after an exclusive position', async () => {
        const prefix = uniquePrefix();
        const early = await store().append(`${prefix}x`, newEvents(2));
        const later = [newEvent(), newEvent(), newEvent()];
        await store().append(`${prefix}y`, [later[0]!]);
        await store().append(`${prefix}x`, [later[1]!]);
        await store().append(`${prefix}z`, [later[2]!]);

        const read = await store().readAll({ after: early.position, streamPrefixes: [prefix] });
        expect(ids(read)).toEqual(ids(later));
        expect(read.map((event) => [event.streamName, event.revision])).toEqual([
          [`${prefix}y`, 0],
          [`${prefix}x`, 2],
          [`${prefix}z`, 0],
        ]);
      });

      it('reads only streams that start with one of the given prefixes', async () => {
        const [keep, alsoKeep, skip] = [uniquePrefix(), uniquePrefix(), uniquePrefix()];
        const wanted = [newEvent(), newEvent()];
        await store().append(`${keep}task-1`, [wanted[0]!]);
        await store().append(`${skip}task-1`, newEvents(2));
        await store().append(`${alsoKeep}account-1`, [wanted[1]!]);

        expect(ids(await store().readAll({ streamPrefixes: [keep, alsoKeep] }))).toEqual(ids(wanted));
      });

      it('honours maxCount when reading all', async () => {
        const prefix = uniquePrefix();
        const events = newEvents(5);
        await store().append(`${prefix}s`, events);
        expect(ids(await store().readAll({ streamPrefixes: [prefix], maxCount: 2 }))).toEqual(ids(events.slice(0, 2)));
      });

      it('reports a head position at or after the last appended event', async () => {
        const result = await store().append(uniqueStream(), newEvents(1));
        expect(await store().headPosition()).toBeGreaterThanOrEqual(result.position);
      });

      it('answers ping', async () => {
        await expect(store().ping()).resolves.toBeUndefined();
      });
    });

    streamsWithPrefixContract(store);
    subscriptionContract(store);
  });
}
