/**
 * One group-commit batch as one PostgreSQL transaction, in four round trips whatever its size:
 * 1. BEGIN and lock the head row, the store's one write lock, held to the commit (event-rows.ts);
 * 2. read the heads of the batch's streams and where its event ids are already stored — a
 *    statement of its own, so its snapshot is taken after the lock is held and sees every
 *    commit of the writer before (READ COMMITTED: one snapshot per statement);
 * 3. insert what was decided (append-decision.ts), move the head and announce the commit, in
 *    one statement;
 * 4. COMMIT.
 */
import { inTransaction, type PostgresPool } from './database.js';
import { decideBatch, type AppendJob, type BatchDecision, type StoredId, type StreamHead } from './append-decision.js';
import { EVENTS_CHANNEL } from './event-rows.js';

/** Per stream its newest event (one index probe each, not a scan of a long stream), then the stored ids (event_id set). */
const READ_BATCH_STATE = `
SELECT s.stream, e.revision, e.position, NULL::text AS event_id
  FROM unnest($1::text[]) AS s(stream)
  CROSS JOIN LATERAL (SELECT revision, position FROM events WHERE events.stream = s.stream ORDER BY revision DESC LIMIT 1) e
UNION ALL
SELECT stream, revision, position, event_id FROM events WHERE event_id = ANY($2::text[])`;

// Data-modifying statements in WITH run once each, referenced or not.
const WRITE_BATCH = `
WITH inserted AS (
  INSERT INTO events (position, stream, revision, event_id, type, data, metadata)
  SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[])
), moved AS (
  UPDATE event_head SET position = $8 RETURNING 1
)
SELECT pg_notify($9, $10) FROM moved`;

export function appendBatch(pool: PostgresPool, schema: string, jobs: readonly AppendJob[]): Promise<BatchDecision> {
  return inTransaction(
    pool,
    async (client, opened) => {
      const head = BigInt(opened[0]!.position as string);
      const state = await client.query<{ stream: string; revision: string; position: string; event_id: string | null }>(READ_BATCH_STATE, [
        [...new Set(jobs.map((job) => job.stream))],
        jobs.flatMap((job) => job.events.map((event) => event.id)),
      ]);
      const heads = new Map<string, StreamHead>();
      const storedIds = new Map<string, StoredId>();
      for (const row of state.rows) {
        if (row.event_id === null) heads.set(row.stream, { revision: Number(row.revision), position: BigInt(row.position) });
        else storedIds.set(row.event_id, { stream: row.stream, revision: Number(row.revision) });
      }

      const decision = decideBatch(jobs, heads, storedIds, head);
      const { rows } = decision;
      if (rows.length > 0) {
        // The notification is delivered at the commit, to every store on this database listening
        // (notifications.ts); the payload says which schema's events moved.
        await client.query(WRITE_BATCH, [
          rows.map((r) => r.position.toString()),
          rows.map((r) => r.stream),
          rows.map((r) => r.revision),
          rows.map((r) => r.event.id),
          rows.map((r) => r.event.type),
          rows.map((r) => r.event.data),
          rows.map((r) => r.event.metadata),
          decision.head.toString(),
          EVENTS_CHANNEL,
          schema,
        ]);
      }
      return decision;
    },
    // The write lock, taken in the BEGIN's message.
    'SELECT position FROM event_head FOR UPDATE',
  );
}
