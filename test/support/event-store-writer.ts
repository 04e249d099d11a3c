/**
 * A writer process for the tests of one event store shared by several processes:
 * `tsx event-store-writer.ts <sqlite FILE | postgres URL SCHEMA> <writer> <rounds>`. Each round
 * appends once to the contended stream `shared` (optimistic: the revision it read, again on a
 * conflict), once to the stream it shares with its neighbour, and five events to its own stream
 * in one tick (one group commit). Exits 0 when every append went through; prints the conflicts
 * it met.
 */
import { createPostgresEventStore } from '../../src/adapters/postgres/event-store.js';
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { WrongExpectedRevisionError, type EventStore } from '../../src/ports/event-store.js';

const args = process.argv.slice(2);
const usage = 'usage: event-store-writer.ts <sqlite FILE | postgres URL SCHEMA> <writer> <rounds>';
const store: EventStore =
  args[0] === 'sqlite' && args.length === 4
    ? createSqliteEventStore({ path: args[1]! })
    : args[0] === 'postgres' && args.length === 5
      ? createPostgresEventStore({ url: args[1]!, schema: args[2]! })
      : (() => {
          throw new Error(usage);
        })();
const [writer, rounds] = args.slice(-2) as [string, string];
const event = (id: string, data: Record<string, unknown>) => ({ id, type: 'Written', data, metadata: { at: new Date().toISOString() } });
let conflicts = 0;

/** Appends one event where others append too: read the revision, append expecting it, again on a conflict. */
async function appendContended(stream: string, id: string, data: Record<string, unknown>): Promise<void> {
  for (;;) {
    const [last] = await store.readStream(stream, { direction: 'backwards', maxCount: 1 });
    try {
      await store.append(stream, [event(id, data)], { expectedRevision: last ? last.revision : 'no_stream' });
      return;
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      conflicts++;
    }
  }
}

// Writers share a stream two by two: pair-0 is w0's and w1's, pair-1 w2's and w3's, …
const index = Number(writer.replace(/^\D+/, ''));
for (let round = 0; round < Number(rounds); round++) {
  await appendContended('shared', `${writer}-shared-${round}`, { writer, round });
  await appendContended(`pair-${Math.floor(index / 2)}`, `${writer}-pair-${round}`, { writer, round });
  await Promise.all(Array.from({ length: 5 }, (_, i) => store.append(`own-${writer}`, [event(`${writer}-own-${round}-${i}`, { writer, round, i })])));
}
await store.close();
process.stdout.write(`${JSON.stringify({ writer, conflicts })}\n`);
