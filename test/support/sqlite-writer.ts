/**
 * A writer process for the multi-process SQLite event store test: `tsx sqlite-writer.ts <file>
 * <writer> <rounds>`. Each round appends once to the contended stream `shared` (optimistic: the
 * revision it read, again on a conflict) and five events to its own stream in one tick (one group
 * commit). Exits 0 when every append went through; prints the conflicts it met.
 */
import { createSqliteEventStore } from '../../src/adapters/sqlite/event-store.js';
import { WrongExpectedRevisionError } from '../../src/ports/event-store.js';

const [path, writer, rounds] = process.argv.slice(2);
if (!path || !writer || !rounds) throw new Error('usage: sqlite-writer.ts <file> <writer> <rounds>');
const store = createSqliteEventStore({ path });
const event = (id: string, data: Record<string, unknown>) => ({ id, type: 'Written', data, metadata: { at: new Date().toISOString() } });
let conflicts = 0;

for (let round = 0; round < Number(rounds); round++) {
  for (;;) {
    const [last] = await store.readStream('shared', { fromRevision: 0 }).then((all) => all.slice(-1));
    try {
      await store.append('shared', [event(`${writer}-shared-${round}`, { writer, round })], { expectedRevision: last ? last.revision : 'no_stream' });
      break;
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
      conflicts++;
    }
  }
  await Promise.all(Array.from({ length: 5 }, (_, i) => store.append(`own-${writer}`, [event(`${writer}-own-${round}-${i}`, { writer, round, i })])));
}
await store.close();
process.stdout.write(`${JSON.stringify({ writer, conflicts })}\n`);
