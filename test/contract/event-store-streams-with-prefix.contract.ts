/**
 * EventStore contract, part 4: readStreamsWithPrefix. Every store gives the same answer: all
 * events of the streams whose names start with the prefix, each stream complete and in
 * revision order, nothing of any other stream. The order across streams is the store's own.
 */
import { describe, expect, it } from 'vitest';
import type { EventStore, NewEvent, RecordedEvent } from '../../src/ports/event-store.js';
import { ids, newEvents, uniquePrefix } from './event-store.fixtures.js';

export function streamsWithPrefixContract(store: () => EventStore): void {
  describe('readStreamsWithPrefix', () => {
    async function readPages(prefix: string, pageSize?: number): Promise<RecordedEvent[][]> {
      const pages: RecordedEvent[][] = [];
      for await (const page of store().readStreamsWithPrefix(prefix, pageSize === undefined ? {} : { pageSize })) pages.push(page);
      return pages;
    }

    /** The events read, grouped by stream in the order read within each stream. */
    function byStream(events: readonly RecordedEvent[]): Map<string, RecordedEvent[]> {
      const streams = new Map<string, RecordedEvent[]>();
      for (const event of events) streams.set(event.streamName, [...(streams.get(event.streamName) ?? []), event]);
      return streams;
    }

    it('reads every stream with the prefix, each complete and in revision order, and nothing of any other stream', async () => {
      const prefix = uniquePrefix(); // e.g. `t0123456789ab-`
      const stem = prefix.slice(0, -1);
      // Names that start with the prefix, some longer than others, some beyond ASCII.
      const matching = [`${prefix}a`, `${prefix}b`, `${prefix}aa`, prefix, `${prefix}\u00e9`, `${prefix}\u{1F600}x`];
      // Names that share all but the prefix's last character, or sort right beside the range.
      const others = [stem, `${stem}.`, `${stem}.a`, `${stem}x-a`, `${stem}\u{10FFFF}`, `${stem.slice(0, -1)}`, `x${prefix}a`];
      const appended = new Map<string, NewEvent[]>();
      // Interleaved appends, so no stream is contiguous in commit order.
      const plan = [...matching, ...others, `${prefix}a`, `${prefix}b`, ...others, `${prefix}a`, `${prefix}aa`];
      for (const [index, stream] of plan.entries()) {
        const events = newEvents(1 + (index % 3));
        await store().append(stream, events);
        appended.set(stream, [...(appended.get(stream) ?? []), ...events]);
      }
      const total = matching.reduce((sum, stream) => sum + (appended.get(stream)?.length ?? 0), 0);

      for (const pageSize of [undefined, 3, 1]) {
        const pages = await readPages(prefix, pageSize);
        for (const page of pages) {
          expect(page.length).toBeGreaterThan(0);
          if (pageSize !== undefined) expect(page.length).toBeLessThanOrEqual(pageSize);
        }
        const events = pages.flat();
        expect(events).toHaveLength(total);
        const streams = byStream(events);
        expect([...streams.keys()].sort()).toEqual([...matching].sort());
        for (const stream of matching) {
          const read = streams.get(stream) ?? [];
          expect(ids(read)).toEqual(ids(appended.get(stream) ?? []));
          expect(read.map((event) => event.revision)).toEqual(read.map((_, revision) => revision));
        }
      }
    });

    it('reads what readStream reads: data, metadata and positions', async () => {
      const prefix = uniquePrefix();
      await store().append(`${prefix}s`, newEvents(3));
      await store().append(`${prefix}t`, newEvents(2));
      const read = (await readPages(prefix)).flat();
      const expected = [...(await store().readStream(`${prefix}s`)), ...(await store().readStream(`${prefix}t`))];
      const key = (event: RecordedEvent) => `${event.streamName}@${event.revision}`;
      expect([...read].sort((x, y) => key(x).localeCompare(key(y)))).toEqual(expected);
    });

    it('reads nothing, in no page, when no stream has the prefix', async () => {
      const prefix = uniquePrefix();
      await store().append(`${prefix.slice(0, -1)}.a`, newEvents(2));
      expect(await readPages(prefix)).toEqual([]);
    });
  });
}
