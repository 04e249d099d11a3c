/**
 * One event store shared by several writer processes (the roles of a deployment share one
 * store): they append at once, with optimistic concurrency on a stream all of them write, on
 * streams written two by two, and group commits on their own streams, while this process
 * follows everything through one subscription. Positions must be unique and contiguous in one
 * order, every stream's revisions contiguous, no acknowledged append lost, and the subscription
 * must see each event exactly once, in that order, with no gap skipped while a slower writer's
 * transaction was still committing.
 */
import { describe, expect, it } from 'vitest';
import type { EventStore, RecordedEvent } from '../../src/ports/event-store.js';
import { runScript } from '../support/run-script.js';

const PER_ROUND = 7; // one on `shared`, one on the writer's pair stream, five on its own stream

export interface SharedStore {
  /** This process's store, which follows. */
  reader: EventStore;
  /** What test/support/event-store-writer.ts is given before the writer's name: the same store. */
  writerArgs: string[];
  cleanup(): Promise<void>;
}

async function runWriter(writerArgs: readonly string[], writer: string, rounds: number): Promise<{ writer: string; conflicts: number }> {
  return JSON.parse(await runScript('test/support/event-store-writer.ts', [...writerArgs, writer, String(rounds)])) as { writer: string; conflicts: number };
}

export function sharedByProcessesContract(name: string, writers: number, rounds: number, open: () => Promise<SharedStore>): void {
  describe(`${name} event store shared by ${writers} writer processes`, () => {
    it(`${writers} writers at once: contiguous positions and revisions, nothing lost, one subscription sees each event once in order`, async () => {
      const shared = await open();
      const { reader, writerArgs } = shared;
      try {
        const seen: RecordedEvent[] = [];
        const subscription = reader.subscribe();
        const total = writers * rounds * PER_ROUND;
        const following = (async () => {
          for await (const batch of subscription) {
            seen.push(...batch);
            if (seen.length >= total) return;
          }
        })();

        const results = await Promise.all(Array.from({ length: writers }, (_, w) => runWriter(writerArgs, `w${w}`, rounds)));
        await Promise.race([
          following,
          new Promise((_, reject) => setTimeout(() => reject(new Error(`the subscription saw ${seen.length} of ${total}`)), 20_000)),
        ]);
        await subscription.close();

        const all = await reader.readAll();
        expect(all).toHaveLength(total);
        expect(all.map((e) => e.position)).toEqual(Array.from({ length: total }, (_, i) => BigInt(i + 1)));
        const pairs = Array.from({ length: Math.ceil(writers / 2) }, (_, p) => `pair-${p}`);
        for (const stream of ['shared', ...pairs, ...results.map((r) => `own-${r.writer}`)]) {
          const events = await reader.readStream(stream);
          expect(
            events.map((e) => e.revision),
            stream,
          ).toEqual(Array.from({ length: events.length }, (_, i) => i));
        }
        // Each writer's contended appends are there once each, in its own order.
        for (const stream of ['shared', ...pairs]) {
          const events = await reader.readStream(stream);
          for (const { writer } of results) {
            const own = events.filter((e) => (e.data as { writer: string }).writer === writer).map((e) => (e.data as { round: number }).round);
            if (stream === 'shared' || stream === `pair-${Math.floor(Number(writer.slice(1)) / 2)}`) {
              expect(own, `${writer} on ${stream}`).toEqual(Array.from({ length: rounds }, (_, i) => i));
            } else expect(own, `${writer} on ${stream}`).toEqual([]);
          }
        }
        // Exactly once, in the store's one order: no duplicate, no gap, nothing reordered.
        expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.id));
        // The contended stream really was contended (else this proves little about the revision check).
        expect(results.reduce((n, r) => n + r.conflicts, 0)).toBeGreaterThan(0);
      } finally {
        await shared.cleanup();
      }
    }, 120_000);
  });
}
