/**
 * AppendOptions.after: an append that follows another pending append of the same store is
 * written only when that one is, and after it. Still two single-stream appends: each keeps its
 * own expectation, and the second may fail after the first succeeded.
 */
import { describe, expect, it } from 'vitest';
import { PrecedingAppendFailedError, WrongExpectedRevisionError, type EventStore } from '../../src/ports/event-store.js';
import { expectWrongRevision, ids, newEvents, uniqueStream } from './event-store.fixtures.js';

export function appendAfterContract(store: () => EventStore): void {
  describe('append after another append (AppendOptions.after)', () => {
    it('writes both, the second after the first, when both expectations hold', async () => {
      const [first, second] = [uniqueStream('first'), uniqueStream('second')];
      const firstEvents = newEvents(2);
      const secondEvents = newEvents(1);
      const firstAppend = store().append(first, firstEvents, { expectedRevision: 'no_stream' });
      const secondAppend = store().append(second, secondEvents, { expectedRevision: 'no_stream', after: firstAppend });

      const [a, b] = await Promise.all([firstAppend, secondAppend]);
      expect(b.position).toBeGreaterThan(a.position);
      expect(b.nextExpectedRevision).toBe(0);
      expect(ids(await store().readStream(first))).toEqual(ids(firstEvents));
      expect(ids(await store().readStream(second))).toEqual(ids(secondEvents));
    });

    it('writes nothing of the second when the first fails, and says why', async () => {
      const [first, second] = [uniqueStream('first'), uniqueStream('second')];
      await store().append(first, newEvents(1));
      const firstAppend = store().append(first, newEvents(1), { expectedRevision: 'no_stream' });
      const secondAppend = store().append(second, newEvents(1), { expectedRevision: 'no_stream', after: firstAppend });

      await expectWrongRevision(firstAppend, { streamName: first, expected: 'no_stream', actual: 0 });
      const error: unknown = await secondAppend.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(PrecedingAppendFailedError);
      expect((error as PrecedingAppendFailedError).streamName).toBe(second);
      expect((error as PrecedingAppendFailedError).precedingError).toBeInstanceOf(WrongExpectedRevisionError);
      expect(await store().readStream(second)).toEqual([]);
      expect(await store().readStream(first)).toHaveLength(1);
    });

    it('keeps the first when the second fails its own expectation', async () => {
      const [first, second] = [uniqueStream('first'), uniqueStream('second')];
      const existing = newEvents(1);
      await store().append(second, existing);
      const firstEvents = newEvents(1);
      const firstAppend = store().append(first, firstEvents, { expectedRevision: 'no_stream' });
      const secondAppend = store().append(second, newEvents(1), { expectedRevision: 'no_stream', after: firstAppend });

      await expectWrongRevision(secondAppend, { streamName: second, expected: 'no_stream', actual: 0 });
      await firstAppend;
      expect(ids(await store().readStream(first))).toEqual(ids(firstEvents));
      expect(ids(await store().readStream(second))).toEqual(ids(existing));
    });

    it('follows an append that has already completed', async () => {
      const [first, second] = [uniqueStream('first'), uniqueStream('second')];
      const firstAppend = store().append(first, newEvents(1));
      const { position } = await firstAppend;
      const { position: after } = await store().append(second, newEvents(1), { after: firstAppend });
      expect(after).toBeGreaterThan(position);
    });

    it('writes nothing of the second when the first is refused before anything is sent', async () => {
      const [first, second] = [uniqueStream('first'), uniqueStream('second')];
      const refused = store().append(first, newEvents(1), { expectedRevision: -1 });
      const secondAppend = store().append(second, newEvents(1), { after: refused });
      await expect(refused).rejects.toThrow(TypeError);
      await expect(secondAppend).rejects.toBeInstanceOf(PrecedingAppendFailedError);
      expect(await store().readStream(second)).toEqual([]);
    });
  });
}
