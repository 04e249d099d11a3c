/** EventStore contract, part 2: expected revisions, concurrent appends, idempotent retries. */
import { describe, expect, it } from 'vitest';
import { WrongExpectedRevisionError, type EventStore } from '../../src/ports/event-store.js';
import { expectWrongRevision, ids, newEvent, newEvents, uniqueStream } from './event-store.fixtures.js';

export function revisionContract(store: () => EventStore): void {
  describe('expected revision', () => {
    it('no_stream creates a new stream', async () => {
      const stream = uniqueStream();
      await expect(store().append(stream, newEvents(1), { expectedRevision: 'no_stream' })).resolves.toMatchObject({
        nextExpectedRevision: 0,
      });
    });

    it('no_stream on an existing stream is rejected with the current revision and writes nothing', async () => {
      const stream = uniqueStream();
      await store().append(stream, newEvents(2));
      await expectWrongRevision(store().append(stream, newEvents(1), { expectedRevision: 'no_stream' }), {
        streamName: stream,
        expected: 'no_stream',
        actual: 1,
      });
      expect(await store().readStream(stream)).toHaveLength(2);
    });

    it('stream_exists on a missing stream is rejected with actual -1 and creates nothing', async () => {
      const stream = uniqueStream();
      await expectWrongRevision(store().append(stream, newEvents(1), { expectedRevision: 'stream_exists' }), {
        streamName: stream,
        expected: 'stream_exists',
        actual: -1,
      });
      expect(await store().readStream(stream)).toEqual([]);
    });

    it('stream_exists appends to an existing stream', async () => {
      const stream = uniqueStream();
      await store().append(stream, newEvents(1));
      await expect(store().append(stream, newEvents(1), { expectedRevision: 'stream_exists' })).resolves.toMatchObject({
        nextExpectedRevision: 1,
      });
    });

    it('an exact revision equal to the last event appends after it', async () => {
      const stream = uniqueStream();
      await store().append(stream, newEvents(3));
      await expect(store().append(stream, newEvents(2), { expectedRevision: 2 })).resolves.toMatchObject({
        nextExpectedRevision: 4,
      });
    });

    it('an exact revision behind or ahead of the stream is rejected with the current revision', async () => {
      const stream = uniqueStream();
      await store().append(stream, newEvents(3));
      for (const expectedRevision of [1, 3]) {
        await expectWrongRevision(store().append(stream, newEvents(1), { expectedRevision }), {
          streamName: stream,
          expected: expectedRevision,
          actual: 2,
        });
      }
      expect(await store().readStream(stream)).toHaveLength(3);
    });

    it('an exact revision on a missing stream is rejected with actual -1', async () => {
      const stream = uniqueStream();
      await expectWrongRevision(store().append(stream, newEvents(1), { expectedRevision: 0 }), {
        streamName: stream,
        expected: 0,
        actual: -1,
      });
    });

    it('any appends whether or not the stream exists, and is the default', async () => {
      const stream = uniqueStream();
      await expect(store().append(stream, newEvents(1), { expectedRevision: 'any' })).resolves.toMatchObject({
        nextExpectedRevision: 0,
      });
      await expect(store().append(stream, newEvents(1), { expectedRevision: 'any' })).resolves.toMatchObject({
        nextExpectedRevision: 1,
      });
      await expect(store().append(stream, newEvents(1))).resolves.toMatchObject({ nextExpectedRevision: 2 });
    });
  });

  describe('concurrent appends', () => {
    it('of 20 parallel appends expecting the same revision exactly one wins', async () => {
      const stream = uniqueStream('account');
      await store().append(stream, newEvents(1));
      const attempts = Array.from({ length: 20 }, (_, index) => store().append(stream, [newEvent('QuotaReserved', { index })], { expectedRevision: 0 }));
      const outcomes = await Promise.allSettled(attempts);

      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      const lost = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason] : []));
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(19);
      for (const reason of lost) expect(reason).toBeInstanceOf(WrongExpectedRevisionError);
      expect(await store().readStream(stream)).toHaveLength(2);
    });

    it('of 20 parallel no_stream appends to a new stream exactly one creates it', async () => {
      const stream = uniqueStream('task');
      const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => store().append(stream, newEvents(2), { expectedRevision: 'no_stream' })));
      expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
      expect(await store().readStream(stream)).toHaveLength(2);
    });

    it('parallel appends to different streams all succeed', async () => {
      const streams = Array.from({ length: 30 }, (_, index) => uniqueStream(`s${index}`));
      const results = await Promise.all(streams.map((stream) => store().append(stream, newEvents(1), { expectedRevision: 'no_stream' })));
      expect(results.every((result) => result.nextExpectedRevision === 0)).toBe(true);
      expect(new Set(results.map((result) => result.position)).size).toBe(streams.length);
    });

    it('parallel appends to one stream with any keep every event and give distinct revisions', async () => {
      const stream = uniqueStream();
      const results = await Promise.all(Array.from({ length: 10 }, () => store().append(stream, newEvents(1))));
      expect(results.map((result) => result.nextExpectedRevision).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      expect(await store().readStream(stream)).toHaveLength(10);
    });
  });

  describe('idempotent retry', () => {
    it('retrying an append with the same event ids returns the stored result and writes nothing', async () => {
      const stream = uniqueStream();
      const events = newEvents(2);
      const first = await store().append(stream, events, { expectedRevision: 'no_stream' });
      const retry = await store().append(stream, events, { expectedRevision: 'no_stream' });

      expect(retry).toEqual(first);
      expect(ids(await store().readStream(stream))).toEqual(ids(events));
    });

    it('retrying the last append succeeds although its exact expected revision is now stale', async () => {
      const stream = uniqueStream();
      await store().append(stream, newEvents(1), { expectedRevision: 'no_stream' });
      const second = newEvents(2);
      const first = await store().append(stream, second, { expectedRevision: 0 });

      await expect(store().append(stream, second, { expectedRevision: 0 })).resolves.toEqual(first);
      expect(await store().readStream(stream)).toHaveLength(3);
    });

    it('retrying with expected revision any does not duplicate events', async () => {
      const stream = uniqueStream();
      const events = newEvents(1);
      await store().append(stream, events);
      await store().append(stream, events);
      expect(ids(await store().readStream(stream))).toEqual(ids(events));
    });

    it('an append whose ids only partly match stored events is rejected and writes nothing', async () => {
      const stream = uniqueStream();
      const [a, b] = [newEvent(), newEvent()];
      await store().append(stream, [a, b], { expectedRevision: 'no_stream' });

      for (const expectedRevision of [0, 'any'] as const) {
        await expect(store().append(stream, [b, newEvent()], { expectedRevision })).rejects.toBeInstanceOf(WrongExpectedRevisionError);
      }
      expect(ids(await store().readStream(stream))).toEqual(ids([a, b]));
    });
  });
}
