/** EventStore contract, part 3: catch-up subscriptions (checkpoint resume, live, close). */
import { describe, expect, it } from 'vitest';
import type { EventStore, NewEvent, RecordedEvent } from '../../src/ports/event-store.js';
import { expectNothingMore, ids, newEvent, newEvents, pullEvents, sleep, uniquePrefix } from './event-store.fixtures.js';

export function subscriptionContract(store: () => EventStore): void {
  describe('subscribe', () => {
    it('resumed from a checkpoint, sees every later event exactly once and none before, live ones included', async () => {
      const prefix = uniquePrefix();
      await store().append(`${prefix}a`, newEvents(1));
      const checkpoint = await store().append(`${prefix}a`, newEvents(1));
      const stored = [newEvent(), newEvent(), newEvent()];
      await store().append(`${prefix}a`, [stored[0]!]);
      await store().append(`${prefix}b`, stored.slice(1));

      const subscription = store().subscribe({ after: checkpoint.position, streamPrefixes: [prefix] });
      const iterator = subscription[Symbol.asyncIterator]();
      const caughtUp = await pullEvents(iterator, 3);
      expect(ids(caughtUp.events)).toEqual(ids(stored));

      const live = [newEvent(), newEvent(), newEvent()];
      const arriving = pullEvents(iterator, 3);
      await sleep(50);
      await store().append(`${prefix}a`, [live[0]!]);
      await store().append(`${prefix}c`, live.slice(1));
      expect(ids((await arriving).events)).toEqual(ids(live));

      await expectNothingMore(subscription, iterator);
    });

    it('started after a position that is no event of its streams (a client Last-Event-ID), sees exactly the later events, once', async () => {
      const prefix = uniquePrefix();
      const first = await store().append(`${prefix}a`, newEvents(1));
      // An event of another stream between them: on stores with gaps between positions the
      // start below is inside it or between records, on others it is that event's position.
      await store().append(`${uniquePrefix()}other`, newEvents(1));
      const later = [newEvent(), newEvent()];
      await store().append(`${prefix}a`, later);

      const subscription = store().subscribe({ after: first.position + 1n, streamPrefixes: [prefix] });
      const iterator = subscription[Symbol.asyncIterator]();
      expect(ids((await pullEvents(iterator, 2)).events)).toEqual(ids(later));
      await expectNothingMore(subscription, iterator);
    });

    it('started after a position beyond the head, neither fails nor loops: it delivers, once, what is appended above that position', async () => {
      const prefix = uniquePrefix();
      const head = (await store().append(`${prefix}a`, newEvents(1))).position;
      const after = head + 5n;
      const subscription = store().subscribe({ after, streamPrefixes: [prefix] });
      const iterator = subscription[Symbol.asyncIterator]();
      const appended: { id: string; position: bigint }[] = [];
      for (let i = 0; i < 12; i += 1) {
        const event = newEvent();
        appended.push({ id: event.id, position: (await store().append(`${prefix}a`, [event])).position });
      }
      const expected = appended.filter((e) => e.position > after);
      expect(expected.length).toBeGreaterThan(0);
      expect(ids((await pullEvents(iterator, expected.length)).events)).toEqual(ids(expected));
      await expectNothingMore(subscription, iterator);
    });

    it('delivers events appended while batches are being read in order, none twice and none skipped', async () => {
      const prefix = uniquePrefix();
      await store().append(`${prefix}s0`, newEvents(4));
      const subscription = store().subscribe({ streamPrefixes: [prefix], batchSize: 3 });
      const iterator = subscription[Symbol.asyncIterator]();

      const producing = (async () => {
        for (let round = 0; round < 12; round += 1) {
          await store().append(`${prefix}s${round % 3}`, newEvents(1 + (round % 4)));
          if (round % 3 === 0) await sleep(5);
        }
      })();
      const consuming = (async () => {
        const received: RecordedEvent[] = [];
        for (;;) {
          const { events } = await pullEvents(iterator, 1);
          received.push(...events);
          await sleep(1);
          if (received.length >= 4 + 30) return received;
        }
      })();
      await producing;
      const received = await consuming;

      const expected = await store().readAll({ streamPrefixes: [prefix] });
      expect(expected).toHaveLength(34);
      expect(ids(received)).toEqual(ids(expected));
      await expectNothingMore(subscription, iterator);
    });

    it('starts from the beginning when no checkpoint is given', async () => {
      const prefix = uniquePrefix();
      const events = newEvents(3);
      await store().append(`${prefix}x`, events);
      const subscription = store().subscribe({ streamPrefixes: [prefix] });
      const iterator = subscription[Symbol.asyncIterator]();

      expect(ids((await pullEvents(iterator, 3)).events)).toEqual(ids(events));
      await expectNothingMore(subscription, iterator);
    });

    it('delivers only streams that start with one of the given prefixes, stored or live', async () => {
      const [wanted, other] = [uniquePrefix(), uniquePrefix()];
      const subscription = store().subscribe({ streamPrefixes: [wanted] });
      const iterator = subscription[Symbol.asyncIterator]();
      const expected: NewEvent[] = [];
      for (let round = 0; round < 3; round += 1) {
        await store().append(`${other}noise`, newEvents(2));
        const event = newEvent();
        expected.push(event);
        await store().append(`${wanted}task-${round}`, [event]);
      }

      expect(ids((await pullEvents(iterator, 3)).events)).toEqual(ids(expected));
      await expectNothingMore(subscription, iterator);
    });

    it('delivers non-empty batches no larger than batchSize', async () => {
      const prefix = uniquePrefix();
      await store().append(`${prefix}big`, newEvents(10));
      const subscription = store().subscribe({ streamPrefixes: [prefix], batchSize: 4 });
      const iterator = subscription[Symbol.asyncIterator]();

      const { batchSizes } = await pullEvents(iterator, 10);
      expect(batchSizes.every((size) => size >= 1 && size <= 4)).toBe(true);
      expect(batchSizes.reduce((sum, size) => sum + size, 0)).toBe(10);
      await subscription.close();
    });

    it('close ends a for-await loop over the subscription', async () => {
      const prefix = uniquePrefix();
      await store().append(`${prefix}x`, newEvents(2));
      const subscription = store().subscribe({ streamPrefixes: [prefix] });
      const seen: string[] = [];
      const looping = (async () => {
        for await (const batch of subscription) {
          seen.push(...ids(batch));
          if (seen.length >= 2) await subscription.close();
        }
        return 'ended';
      })();
      await expect(looping).resolves.toBe('ended');
      expect(seen).toHaveLength(2);
    });

    it('close resolves a pending next() as done', async () => {
      const subscription = store().subscribe({ streamPrefixes: [uniquePrefix()] });
      const pending = subscription[Symbol.asyncIterator]().next();
      await sleep(50);
      await subscription.close();
      await expect(pending).resolves.toMatchObject({ done: true });
    });
  });
}
