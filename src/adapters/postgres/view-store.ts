/**
 * ViewStore on PostgreSQL, the same semantics as the SQLite adapter's: every document carries the
 * position of the last event folded into it and a write at or below it is ignored; deletes leave
 * a tombstone (doc NULL, position kept) so a replayed older write cannot bring a document back;
 * `commit`/`commitAll` apply their writes and move the checkpoints (forward only) in one
 * transaction; `bulkLoad` replaces without a guard. Documents are jsonb (view-queries.ts: how,
 * and what that changes: the keys of an object come back in jsonb's order, not as written).
 *
 * Writes go as one multi-row statement per chunk (arrays through unnest), not one round trip per
 * document, and a statement may touch a row only once: a batch is first folded to one write per
 * document, the one a sequential apply would leave. Rows are written in one order (view, id) by
 * every process, so two commits on the same documents wait for each other instead of deadlocking.
 */
import { createHash } from 'node:crypto';
import type { QueryResult, QueryResultRow } from 'pg';
import type { FindOptions, ProjectionWrites, ViewDocument, ViewFieldValue, ViewStore, ViewWrite } from '../../ports/view-store.js';
import { ensureSchema, inTransaction, openPool, schemaName, type PostgresOptions } from './database.js';
import { countQuery, findQuery, readableJson, shapeIndexSql, storableJson, storableKey } from './view-queries.js';
import { translateRejections } from '../translate-rejections.js';
import { unavailableOnConnectionFailure } from './connection-failure.js';

const VIEWS_DDL = `
CREATE TABLE IF NOT EXISTS view_documents (
  view     text COLLATE "C" NOT NULL,
  id       text COLLATE "C" NOT NULL,
  position bigint NOT NULL,
  doc      jsonb,
  PRIMARY KEY (view, id)
);
CREATE TABLE IF NOT EXISTS view_checkpoints (
  projection text COLLATE "C" PRIMARY KEY,
  position   bigint NOT NULL
);
`;

const INPUT = 'SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::jsonb[]) AS input (view, id, position, doc)';

/**
 * The guarded upsert, answering which documents it wrote and the position each held before (the
 * statement's snapshot), from which `commit` counts the writes a sequential apply would have
 * applied. Exact unless another transaction writes the same document during the statement: the
 * guard then still keeps the higher position, but the count may include writes it overtook.
 */
const GUARDED_UPSERT = `
WITH input AS (${INPUT}),
stored AS (SELECT view, id, documents.position FROM view_documents AS documents JOIN input USING (view, id)),
written AS (
  INSERT INTO view_documents (view, id, position, doc) SELECT view, id, position, doc FROM input
  ON CONFLICT (view, id) DO UPDATE SET position = excluded.position, doc = excluded.doc
  WHERE excluded.position > view_documents.position
  RETURNING view, id
)
SELECT written.view, written.id, stored.position AS stored FROM written LEFT JOIN stored USING (view, id)`;

// A rebuild's bulk load: no position guard, whatever the view holds under the id is replaced.
const REPLACE = `
INSERT INTO view_documents (view, id, position, doc) ${INPUT}
ON CONFLICT (view, id) DO UPDATE SET position = excluded.position, doc = excluded.doc`;

const MOVE_CHECKPOINTS = `
INSERT INTO view_checkpoints (projection, position) SELECT projection, $2::bigint FROM unnest($1::text[]) AS input (projection)
ON CONFLICT (projection) DO UPDATE SET position = excluded.position
WHERE excluded.position > view_checkpoints.position`;

/** Rows per write statement: a few MB of documents at most, well inside what one statement carries. */
const CHUNK = 1000;
/**
 * Indexes made on demand, one per view and query shape (as the other adapters make them): the
 * shapes are the engine's own queries, a few dozen at most; past this many, queries go unindexed.
 */
const MAX_SHAPE_INDEXES = 64;
/** PostgreSQL's INDEX_MAX_KEYS: a shape with more columns than this goes unindexed. */
const MAX_INDEX_COLUMNS = 32;

interface DocumentRow {
  id: string;
  position: string;
  doc: string;
}

/** One document's write after folding a batch: the write that stays, and for commits every position a sequential apply would pass through. */
interface FoldedWrite {
  view: string;
  id: string;
  position: bigint;
  doc: string | null;
  steps: bigint[];
}

type Run = <R extends QueryResultRow>(text: string, values: unknown[]) => Promise<QueryResult<R>>;

export function createPostgresViewStore(options: PostgresOptions): ViewStore {
  const schema = schemaName(options);
  const pool = openPool(options);
  // Every call waits for the tables; a failure to create them fails each call, with its cause.
  const ready = ensureSchema(pool, schema, VIEWS_DDL);
  ready.catch(() => undefined);
  const shapeIndexes = new Set<string>();
  let closed = false;

  async function opened(): Promise<void> {
    if (closed) throw new Error('view store is closed');
    await ready;
  }

  /**
   * Periodic passes (expiry, callbacks due, tasks in flight) sort and filter on fields inside the
   * documents: without an index each pass reads every document of the view. Made once per
   * process and shape; creating it blocks the table's writers for as long as the build takes,
   * so an index that exists already (another process made it) is looked up first, and two
   * processes making the same one take turns.
   */
  async function indexShape(view: string, columns: readonly string[]): Promise<void> {
    if (columns.length === 0 || columns.length > MAX_INDEX_COLUMNS) return;
    const name = `view_shape_${createHash('sha256').update(view).update('\u0000').update(columns.join('\u0000')).digest('hex').slice(0, 16)}`;
    if (shapeIndexes.has(name) || shapeIndexes.size >= MAX_SHAPE_INDEXES) return;
    shapeIndexes.add(name);
    try {
      const { rows } = await pool.query<{ found: string | null }>('SELECT to_regclass($1)::text AS found', [name]);
      if (rows[0]?.found) return;
      await inTransaction(pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`gateway-view-index:${schema}.${name}`]);
        await client.query(shapeIndexSql(view, columns, name));
      });
    } catch (error) {
      shapeIndexes.delete(name);
      throw error;
    }
  }

  /** One statement alone is atomic by itself; more share a transaction. */
  async function atomically<T>(statements: number, work: (run: Run) => Promise<T>): Promise<T> {
    if (statements <= 1) return work((text, values) => pool.query(text, values));
    return inTransaction(pool, (client) => work((text, values) => client.query(text, values)));
  }

  /** Writes folded documents with `statement`, then moves the checkpoints: returns the statements' rows. */
  async function write(statement: string, writes: readonly FoldedWrite[], projections: readonly string[], checkpoint: bigint | undefined) {
    const chunks: FoldedWrite[][] = [];
    for (let start = 0; start < writes.length; start += CHUNK) chunks.push(writes.slice(start, start + CHUNK));
    const moves = checkpoint !== undefined && projections.length > 0;
    await opened();
    return atomically(chunks.length + (moves ? 1 : 0), async (run) => {
      const rows: AppliedRow[] = [];
      for (const chunk of chunks) {
        const result = await run<AppliedRow>(statement, [
          chunk.map((w) => w.view),
          chunk.map((w) => w.id),
          chunk.map((w) => w.position.toString()),
          chunk.map((w) => w.doc),
        ]);
        rows.push(...result.rows);
      }
      if (moves) await run(MOVE_CHECKPOINTS, [[...new Set(projections)].sort(), checkpoint.toString()]);
      return rows;
    });
  }

  async function commit(batch: readonly ProjectionWrites[], checkpoint: bigint | undefined): Promise<number> {
    const folded = foldGuarded(batch.flatMap(({ writes }) => writes));
    const rows = await write(
      GUARDED_UPSERT,
      [...folded.values()].sort(byKey),
      batch.map(({ projection }) => projection),
      checkpoint,
    );
    let applied = 0;
    for (const row of rows) {
      const stored = row.stored === null ? undefined : BigInt(row.stored);
      const steps = folded.get(keyOf(row.view, row.id))?.steps ?? [];
      applied += steps.filter((position) => stored === undefined || position > stored).length;
    }
    return applied;
  }

  const store: ViewStore = {
    async get<T>(view: string, id: string) {
      if (!storableKey(view) || !storableKey(id)) return undefined;
      await opened();
      const { rows } = await pool.query<DocumentRow>(
        'SELECT id, position, doc::text AS doc FROM view_documents WHERE view = $1 AND id = $2 AND doc IS NOT NULL',
        [view, id],
      );
      return rows[0] ? toDocument<T>(rows[0]) : undefined;
    },

    async getMany<T>(view: string, ids: readonly string[]) {
      const wanted = [...new Set(ids)].filter(storableKey);
      if (wanted.length === 0 || !storableKey(view)) return [];
      await opened();
      const { rows } = await pool.query<DocumentRow>(
        'SELECT id, position, doc::text AS doc FROM view_documents WHERE view = $1 AND id = ANY($2::text[]) AND doc IS NOT NULL',
        [view, wanted],
      );
      const byId = new Map(rows.map((row) => [row.id, row]));
      return wanted.flatMap((id) => {
        const row = byId.get(id);
        return row ? [toDocument<T>(row)] : [];
      });
    },

    async find<T>(view: string, where: Readonly<Record<string, ViewFieldValue>>, findOptions: FindOptions = {}) {
      const query = findQuery(view, where, findOptions);
      if (!storableKey(view)) return [];
      await opened();
      await indexShape(view, query.indexColumns);
      const { rows } = await pool.query<DocumentRow>(query.text, query.values);
      return rows.map((row) => toDocument<T>(row));
    },

    async count(view, where) {
      const query = countQuery(view, where);
      if (!storableKey(view)) return 0;
      await opened();
      const { rows } = await pool.query<{ n: string }>(query.text, query.values);
      return Number(rows[0]?.n ?? 0);
    },

    async commit(projection, writes, checkpoint) {
      return commit([{ projection, writes }], checkpoint);
    },

    async commitAll(batch, checkpoint) {
      // One sequential apply of every projection's writes, in the batch's order.
      return commit(batch, checkpoint);
    },

    async bulkLoad(projection, writes, checkpoint) {
      await write(REPLACE, [...foldReplacing(writes).values()].sort(byKey), [projection], checkpoint);
    },

    async getCheckpoint(projection) {
      await opened();
      const { rows } = await pool.query<{ position: string }>('SELECT position FROM view_checkpoints WHERE projection = $1', [projection]);
      return rows[0] ? BigInt(rows[0].position) : undefined;
    },

    async reset(view, projection) {
      await opened();
      // One statement, so one transaction.
      await pool.query('WITH dropped AS (DELETE FROM view_documents WHERE view = $1) DELETE FROM view_checkpoints WHERE projection = $2', [view, projection]);
    },

    async ping() {
      await opened();
      await pool.query('SELECT 1');
    },

    async close() {
      if (closed) return;
      closed = true;
      await ready.catch(() => undefined);
      await pool.end();
    },
  };
  // A dropped connection or an unreachable server is StoreUnavailableError, whatever the call.
  return translateRejections(store, unavailableOnConnectionFailure);
}

interface AppliedRow {
  view: string;
  id: string;
  stored: string | null;
}

const keyOf = (view: string, id: string) => `${view}\u0000${id}`;

const byKey = (a: FoldedWrite, b: FoldedWrite) => (a.view < b.view ? -1 : a.view > b.view ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A write's document as jsonb input; every write is serialised, so a bad one fails the batch before anything is sent. */
function documentJson(write: ViewWrite): string | null {
  if (!storableKey(write.view) || !storableKey(write.id)) {
    throw new TypeError(`view ${JSON.stringify(write.view)}, id ${JSON.stringify(write.id)}: NUL and lone surrogates cannot be stored`);
  }
  if (write.doc === null) return null;
  const json = JSON.stringify(write.doc) as string | undefined;
  if (json === undefined) throw new TypeError(`view ${write.view}, id ${write.id}: the document is not JSON`);
  return storableJson(json);
}

/** Per document, what applying `writes` one after another, each guarded, leaves: the first write at the highest position. */
function foldGuarded(writes: readonly ViewWrite[]): Map<string, FoldedWrite> {
  const folded = new Map<string, FoldedWrite>();
  for (const write of writes) {
    const doc = documentJson(write);
    const key = keyOf(write.view, write.id);
    const seen = folded.get(key);
    if (!seen) {
      folded.set(key, { view: write.view, id: write.id, position: write.position, doc, steps: [write.position] });
    } else if (write.position > seen.position) {
      seen.position = write.position;
      seen.doc = doc;
      seen.steps.push(write.position);
    }
  }
  return folded;
}

/** Per document, what replacing one write after another leaves: the last. */
function foldReplacing(writes: readonly ViewWrite[]): Map<string, FoldedWrite> {
  const folded = new Map<string, FoldedWrite>();
  for (const write of writes) {
    folded.set(keyOf(write.view, write.id), { view: write.view, id: write.id, position: write.position, doc: documentJson(write), steps: [] });
  }
  return folded;
}

function toDocument<T>(row: DocumentRow): ViewDocument<T> {
  return { id: row.id, position: BigInt(row.position), doc: JSON.parse(readableJson(row.doc)) as T };
}
